"""The nvcc options a kernel's `flags` may hold when it compiles with nvcc: those that neither read nor
write files nor run programs. nvcc passes much of its command line on to the host compiler, the
preprocessor and ptxas, so the list is short and exact: -ccbin, -Xcompiler, -include, -o, -odir,
--options-file, -keep, --run, -l, -L and everything not named here are refused."""

from __future__ import annotations

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
# -O3 as nvcc users write it, besides -D, -U and -I.
NVCC_OPTIONS = OptionTable(
    "nvcc",
    NVCC_ALLOWED,
    {"-D": "--define-macro", "-U": "--undefine-macro", "-I": "--include-path", "-O": "--optimize"},
)


def nvcc_flags(flags: Iterable[str], folder: Path, roots: Roots, where: str) -> tuple[list[str], list[str]]:
    """The nvcc options that the flags stand for, each written out in full, and the include folders of
    their -I options, resolved; InputError for a flag that is not allowed."""
    return checked_flags(flags, folder, roots, where, NVCC_OPTIONS)
