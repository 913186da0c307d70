"""The NVRTC options a kernel's `flags` may hold, and the checks of what its flags and defines hand the
preprocessor: macro definitions that cannot test paths, include folders inside the project."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from ncuverify.build.resolve import Roots
from ncuverify.errors import InputError
from ncuverify.names import outside_project
from ncuverify.text import one_line

_MACRO = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def define_value(name: str, value: object, where: str) -> str | None:
    if _MACRO.fullmatch(name) is None:
        raise InputError(f"{where}: {one_line(name)!r} is not a macro name")
    if value is None:
        return None
    if isinstance(value, bool):
        return "1" if value else "0"
    text = str(value)
    if UNPRINTABLE.search(text):
        raise InputError(f"{where}.{name}: the value holds a control character (a newline?)")
    if _PROBE in text:
        raise InputError(f"{where}.{name}: {_PROBE_PROBLEM}")
    return text


# A macro defined from the command line that uses __has_include could test any path from an #if, out
# of the include walk's sight.
_PROBE = "__has"
_PROBE_PROBLEM = "a macro that uses __has_include (or another __has_ name) cannot be checked"


def include_folder(
    folder: Path, given: str, roots: Roots, where: str, shown: str, table: OptionTable | None = None
) -> str:
    """An include folder named in the file: resolved, and inside the project or an allowed folder; and,
    given a compiler's table, one that compiler can be handed, as written and as resolved."""
    if table is not None:
        check_argument(table, given, f"{where}: {one_line(shown)}", folder=True)
    resolved = Path(os.path.realpath(folder / given))
    inside = (roots.project, *roots.allowed, *roots.toolkit)
    if not any(resolved.is_relative_to(root) for root in inside):
        raise InputError(
            f"{where}: {one_line(shown)} lies {outside_project(roots.project)}; an include folder must "
            "be inside it, or beside it and allowed with --allow-include DIR"
        )
    if not resolved.is_dir():
        raise InputError(
            f"{where}: {one_line(shown)}: no such folder: {one_line(given)} (looked in {folder})"
        )
    if table is not None:  # a link's target may hold what its name does not
        check_argument(table, str(resolved), f"{where}: {one_line(shown)}", folder=True)
    return str(resolved)


# The NVRTC options a kernel's `flags` may hold: those that neither read nor write files (NVRTC's
# "Supported Compile Options"), less those that make no cubin. Long name -> (short names, the
# values it takes as a regular expression; None for a switch).
_BOOL = r"true|false"
_NUMBERS = r"[0-9]{1,6}(,[0-9]{1,6})*"
_WARNING_KINDS = r"all-warnings|reorder|deprecated-declarations|conversion"
_PTXAS = (
    r"-v|--verbose|-O[0-3]|--opt-level=[0-3]|--warn-on-spills|--warn-on-local-memory-usage"
    r"|--warn-on-double-precision-use|--allow-expensive-optimizations=(true|false)"
    r"|--def-load-cache=(ca|cg|cs|lu|cv)|--def-store-cache=(wb|cg|cs|wt)|--disable-optimizer-constants"
    r"|--dont-merge-basicblocks|--return-at-end|--suppress-stack-size-warning|--fmad=(true|false)"
    r"|--maxrregcount=[0-9]{1,3}"
)
ALLOWED_OPTIONS: dict[str, tuple[tuple[str, ...], str | None]] = {
    "--device-c": (("-dc",), None),
    "--device-w": (("-dw",), None),
    "--relocatable-device-code": (("-rdc",), _BOOL),
    "--extensible-whole-program": (("-ewp",), None),
    "--device-debug": (("-G",), None),
    "--generate-line-info": (("-lineinfo",), None),
    "--dopt": (("-dopt",), r"on|off"),
    "--Ofast-compile": (("-Ofc",), r"0|min|mid|max"),
    "--ptxas-options": (("-Xptxas",), _PTXAS),
    "--ftz": (("-ftz",), _BOOL),
    "--prec-sqrt": (("-prec-sqrt",), _BOOL),
    "--prec-div": (("-prec-div",), _BOOL),
    "--fmad": (("-fmad",), _BOOL),
    "--fno-signed-zeros": (("-fno-signed-zeros",), None),
    "--ffinite-math-only": (("-ffinite-math-only",), None),
    "--use_fast_math": (("-use_fast_math",), None),
    "--extra-device-vectorization": (("-extra-device-vectorization",), None),
    "--modify-stack-limit": (("-modify-stack-limit",), _BOOL),
    "--jump-table-density": (("-jtd",), r"[0-9]|[1-9][0-9]|10[01]"),
    "--device-stack-protector": (("-device-stack-protector",), _BOOL),
    "--no-cache": (("-no-cache",), None),
    "--frandom-seed": (("-frandom-seed",), r"[A-Za-z0-9_]{1,64}"),
    "--builtin-move-forward": (("-builtin-move-forward",), _BOOL),
    "--builtin-initializer-list": (("-builtin-initializer-list",), _BOOL),
    "--disable-warnings": (("-w",), None),
    "--Wreorder": (("-Wreorder",), None),
    "--Wconversion": (("-Wconversion",), None),
    "--warning-as-error": (("-Werror",), rf"({_WARNING_KINDS})(,({_WARNING_KINDS}))*"),
    "--fmax-errors": (("-fmax-errors",), r"[1-9][0-9]{0,5}"),
    "--restrict": (("-restrict",), None),
    "--device-as-default-execution-space": (("-default-device",), None),
    "--device-int128": (("-device-int128",), None),
    "--device-float128": (("-device-float128",), None),
    "--optimization-info": (("-opt-info",), r"inline"),
    "--display-error-number": (("-err-no",), None),
    "--no-display-error-number": (("-no-err-no",), None),
    "--diag-error": (("-diag-error",), _NUMBERS),
    "--diag-suppress": (("-diag-suppress",), _NUMBERS),
    "--diag-warn": (("-diag-warn",), _NUMBERS),
    "--brief-diagnostics": (("-brief-diag",), _BOOL),
    "--split-compile": (("-split-compile",), r"[0-9]{1,3}"),
    "--minimal": (("-minimal",), None),
    "--utf-8": (("-utf-8",), None),
}
# Options ncuverify sets from the kernel's own keys.
_OWNED = {
    "--gpu-architecture": ("-arch", "arch"),
    "--std": ("-std", "std"),
    "--maxrregcount": ("-maxrregcount", "max_registers"),
}
# Single-letter options whose value may follow with or without `=` or a space: -DX, -D X, -D=X.
_ATTACHED = {"-D": "--define-macro", "-U": "--undefine-macro", "-I": "--include-path"}
_DEFINITION = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\([A-Za-z0-9_, .]*\))?(=.*)?", re.DOTALL)
UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f]")


# Why a text cannot reach a compiler's command line as written (as an include folder where the flag is
# true), or None: nvcc's shell (ncuverify.build.nvcc_flags); NVRTC, which has none, takes any.
ArgumentCheck = Callable[[str, bool], str | None]


@dataclass(frozen=True)
class OptionTable:
    """The options of one compiler that a kernel's `flags` may hold."""

    compiler: str  # as messages name it: NVRTC, nvcc
    allowed: dict[str, tuple[tuple[str, ...], str | None]]  # as ALLOWED_OPTIONS
    attached: dict[str, str]  # single-letter options -> their long names, as _ATTACHED
    argument_problem: ArgumentCheck | None = None

    def long_name(self, name: str) -> str | None:
        """The long name of an allowed or owned option, from either of its names; None for others."""
        if name in self.allowed or name in _OWNED:
            return name
        shorts = {short: long for long, (names, _) in self.allowed.items() for short in names}
        shorts.update({short: long for long, (short, _) in _OWNED.items()})
        return shorts.get(name)


NVRTC_OPTIONS = OptionTable("NVRTC", ALLOWED_OPTIONS, _ATTACHED)


def nvrtc_flags(flags: Iterable[str], folder: Path, roots: Roots, where: str) -> tuple[list[str], list[str]]:
    """The NVRTC options that the flags stand for, each written out in full, and the include folders
    of their -I options, resolved; InputError for a flag that is not allowed."""
    return checked_flags(flags, folder, roots, where, NVRTC_OPTIONS)


def checked_flags(
    flags: Iterable[str], folder: Path, roots: Roots, where: str, table: OptionTable
) -> tuple[list[str], list[str]]:
    """The table's compiler's options that the flags stand for, each written out in full, and the
    include folders of their -I options, resolved; InputError for a flag that is not allowed."""
    options: list[str] = []
    include_dirs: list[str] = []
    pending = list(flags)
    while pending:
        flag = pending.pop(0)
        shown = one_line(flag)[:200]
        option, value = _split_flag(flag, table)
        if option is None:
            raise InputError(
                f"{where}: {shown} is not allowed: ncuverify passes {table.compiler} only options that neither "
                "read nor write files (docs/expectation-files.md lists them)"
            )
        if value is None and _takes_value(option, table):
            if not pending:
                raise InputError(f"{where}: {shown} needs a value")
            value = pending.pop(0)
            shown = f"{shown} {one_line(value)[:200]}"
        if option in _OWNED:
            key = _OWNED[option][1]
            raise InputError(
                f"{where}: {shown} is not allowed: ncuverify sets it from the kernel's '{key}' key"
            )
        if option == "--include-path":
            include_dirs.append(include_folder(folder, value or "", roots, where, shown, table))
            continue
        if value is not None:
            check_argument(table, value, f"{where}: {shown}")
        if option in ("--define-macro", "--undefine-macro"):
            if value is None or UNPRINTABLE.search(value) or _DEFINITION.fullmatch(value) is None:
                raise InputError(f"{where}: {shown}: not a macro definition")
            if _PROBE in value:
                raise InputError(f"{where}: {shown}: {_PROBE_PROBLEM}")
            options.append(f"{option}={value}")
        else:
            pattern = table.allowed[option][1]
            if (value is not None) if pattern is None else not re.fullmatch(pattern, value or ""):
                raise InputError(f"{where}: {shown}: not a value {table.compiler}'s {option} takes")
            options.append(option if value is None else f"{option}={value}")
    return options, include_dirs


def check_argument(table: OptionTable, text: str, where: str, folder: bool = False) -> None:
    """InputError where text cannot reach the table's compiler as written (as an include folder where
    folder is true)."""
    if table.argument_problem is not None and (problem := table.argument_problem(text, folder)):
        raise InputError(f"{where}: {problem}")


def _takes_value(option: str, table: OptionTable) -> bool:
    return option in table.attached.values() or option in _OWNED or table.allowed[option][1] is not None


def _split_flag(flag: str, table: OptionTable) -> tuple[str | None, str | None]:
    """A flag as (its option's long name, its value or None); (None, None) for an option not allowed."""
    if flag[:2] in table.attached:
        value = flag[2:].lstrip(" \t")
        value = value[1:] if value.startswith("=") else value
        return table.attached[flag[:2]], value or None
    name, equals, value = flag.partition("=")
    long = table.long_name(name)
    if long is None and name in ("--define-macro", "--undefine-macro", "--include-path"):
        long = name
    if long is None:
        return None, None
    return long, value if equals else None
