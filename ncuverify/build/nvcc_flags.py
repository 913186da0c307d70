"""The nvcc options a kernel's `flags` may hold when it compiles with nvcc: those that neither read nor
write files nor run programs. nvcc passes much of its command line on to the host compiler, the
preprocessor and ptxas, so the list is short and exact: -ccbin, -Xcompiler, -include, -o, -odir,
--options-file, -keep, --run, -l, -L and everything not named here are refused.

nvcc also runs its steps through a shell, so what any argument may hold is checked here too
(nvcc_argument_problem), and -D and -U values are written as nvcc reads its lists (nvcc_list_item)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from ncuverify.build.flags import OptionTable, checked_flags
from ncuverify.build.resolve import Roots

_BOOL = r"true|false"
_NUMBERS = r"[0-9]{1,6}(,[0-9]{1,6})*"
# ptxas options through -Xptxas: its optimisation level, its report and its warnings, one at a time.
_PTXAS = r"-v|--verbose|-O[0-3]|--opt-level=[0-3]|--warn-on-spills|--warn-on-local-memory-usage"
_WARNING_KINDS = (
    r"cross-execution-space-call|reorder|default-stream-launch|missing-launch-bounds"
    r"|ext-lambda-captures-this|deprecated-declarations|all-warnings"
)
NVCC_ALLOWED: dict[str, tuple[tuple[str, ...], str | None]] = {
    "--optimize": ((), r"[0-3]"),
    "--device-debug": (("-G",), None),
    "--generate-line-info": (("-lineinfo",), None),
    "--dopt": (("-dopt",), r"on|off"),
    "--relocatable-device-code": (("-rdc",), _BOOL),
    "--expt-relaxed-constexpr": (("-expt-relaxed-constexpr",), None),
    "--extended-lambda": (("-extended-lambda", "--expt-extended-lambda", "-expt-extended-lambda"), None),
    "--use_fast_math": (("-use_fast_math", "--use-fast-math"), None),
    "--ftz": (("-ftz",), _BOOL),
    "--prec-div": (("-prec-div",), _BOOL),
    "--prec-sqrt": (("-prec-sqrt",), _BOOL),
    "--fmad": (("-fmad",), _BOOL),
    "--extra-device-vectorization": (("-extra-device-vectorization",), None),
    "--default-stream": (("-default-stream",), r"legacy|null|per-thread"),
    "--ptxas-options": (("-Xptxas",), _PTXAS),
    "--disable-warnings": (("-w",), None),
    "--restrict": (("-restrict",), None),
    "--Wreorder": (("-Wreorder",), None),
    "--Wno-deprecated-declarations": (("-Wno-deprecated-declarations",), None),
    "--Wno-deprecated-gpu-targets": (("-Wno-deprecated-gpu-targets",), None),
    "--Werror": (("-Werror",), rf"({_WARNING_KINDS})(,({_WARNING_KINDS}))*"),
    "--resource-usage": (("-res-usage",), None),
    "--display-error-number": (("-err-no",), None),
    "--diag-error": (("-diag-error",), _NUMBERS),
    "--diag-suppress": (("-diag-suppress",), _NUMBERS),
    "--diag-warn": (("-diag-warn",), _NUMBERS),
}

# nvcc runs its steps (g++ as preprocessor, cicc, ptxas) as `sh -c` lines with each argument inside
# double quotes, unescaped. Inside double quotes sh still expands `$` and backticks (a command runs),
# reads `\` as an escape and ends the quotes at `"`; a newline ends the command. Every other printable
# character is literal there, in dash and in bash as sh (which expands no `!` when not interactive):
# a define `X=(1<<4)`, a path with spaces, `;`, `&`, `|`, `*` or `?` reach g++ and cicc intact. Refused,
# not escaped: nvcc reads `\` and `"` in option values itself (it drops a `\`, and stops at a `"`).
_SHELL_SPECIAL = re.compile(r'[$`\\"\x00-\x1f\x7f]')
# nvcc splits an -I value at commas, and writes a `'` in it as `\'` inside double quotes, which sh keeps:
# either way nvcc would read another folder than the one the include walk checked.
_FOLDER_SPECIAL = re.compile(r"[,']")


def nvcc_argument_problem(text: str, folder: bool = False) -> str | None:
    """Why text cannot reach nvcc's command line as written (a folder: as an include folder, -I), or
    None. The one place that decides which characters nvcc may be handed."""
    if found := _SHELL_SPECIAL.search(text):
        return (
            f"{found.group()!r} would reach nvcc's shell; nvcc runs its steps through sh, so `$`, backticks, "
            '`\\`, `"` and control characters (newlines) are refused in anything passed to it'
        )
    if folder and (found := _FOLDER_SPECIAL.search(text)):
        return (
            f"{found.group()!r} would change the folder nvcc reads: nvcc splits an include folder at ',' and"
            " hands sh a ' as \\', so a folder with either in its path is refused"
        )
    return None


def nvcc_list_item(value: str) -> str:
    """A -D or -U value as nvcc reads it: nvcc splits these at commas, and a backslash before a comma keeps
    it inside one (nvcc drops the backslash; a backslash of the file's own never gets this far)."""
    return value.replace(",", "\\,")


# -O3 as nvcc users write it, besides -D, -U and -I.
NVCC_OPTIONS = OptionTable(
    "nvcc",
    NVCC_ALLOWED,
    {"-D": "--define-macro", "-U": "--undefine-macro", "-I": "--include-path", "-O": "--optimize"},
    nvcc_argument_problem,
)


def nvcc_flags(flags: Iterable[str], folder: Path, roots: Roots, where: str) -> tuple[list[str], list[str]]:
    """The nvcc options that the flags stand for, each written out in full, and the include folders of
    their -I options, resolved; InputError for a flag that is not allowed."""
    return checked_flags(flags, folder, roots, where, NVCC_OPTIONS)
