"""A .cu file compiled whole, as `init` and `build` take the files users have: with NVRTC where it
compiles there, else with nvcc, which also takes host code (main(), <<<...>>> launches, host headers);
or with the compiler asked for. Which one compiled it is said in one line where it was not NVRTC."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ncuverify.build.cache import CompileCache, Compiled
from ncuverify.build.limits import BuildLimits
from ncuverify.build.programs import compile_unit
from ncuverify.build.resolve import Roots
from ncuverify.build.units import Unit
from ncuverify.errors import InputError
from ncuverify.text import one_line

# --compiler: auto tries NVRTC, then nvcc where NVRTC refuses the file.
COMPILERS = ("auto", "nvrtc", "nvcc")

# What makes a source a whole program, not only kernels: NVRTC compiles device code alone.
_MAIN = re.compile(r"\bint\s+main\s*\(")
_LAUNCH = re.compile(r"<<<")
_HOST_HEADER = re.compile(
    r"#\s*include\s*<(iostream|cstdio|stdio\.h|cstdlib|stdlib\.h|cassert|assert\.h|cuda_runtime\.h|"
    r"cuda_runtime_api\.h|vector|string|cstring|string\.h|algorithm|chrono|memory|cmath|math\.h|"
    r"thrust/[^>]*)>"
)
_RUNTIME_CALL = re.compile(
    r"\bcuda(?:Malloc|Memcpy|Free|DeviceSynchronize|LaunchKernel|StreamCreate)\w*\s*\("
)


@dataclass(frozen=True)
class SourceBuild:
    """A source compiled whole: its build, the unit it was compiled as (whose `compiler` says which
    compiled it), the warnings on the way, and why nvcc compiled it where `auto` chose nvcc."""

    compiled: Compiled
    unit: Unit
    warnings: tuple[str, ...]
    note: str | None = None


def compile_source(
    unit_for: Callable[[str], Unit],
    compiler: str,
    cache: CompileCache | None,
    roots: Roots,
    limits: BuildLimits,
) -> SourceBuild:
    """The source compiled whole by `compiler` (auto: NVRTC, else nvcc), its unit made by unit_for(the
    compiler's name); InputError where it does not compile (with auto: NVRTC's reason, or nvcc's where
    the source holds host code, which only nvcc compiles)."""
    if compiler != "auto":
        unit = unit_for(compiler)
        try:
            compiled, warnings = compile_unit(unit, cache, roots, limits)
        except InputError as error:
            host = host_code(unit.source) if compiler == "nvrtc" else None
            if host is None:
                raise
            raise InputError(
                f"{first_error(str(error))}; it holds {host}, which NVRTC does not compile:"
                " pass --compiler nvcc (or auto)"
            ) from None
        return SourceBuild(compiled, unit, tuple(warnings))
    unit = unit_for("nvrtc")
    try:
        compiled, warnings = compile_unit(unit, cache, roots, limits)
        return SourceBuild(compiled, unit, tuple(warnings))
    except InputError as refused:
        nvrtc_error = refused
    host = host_code(unit.source)
    try:
        nvcc_unit = unit_for("nvcc")
        compiled, warnings = compile_unit(nvcc_unit, cache, roots, limits)
    except InputError as nvcc_error:
        raise (nvcc_error if host is not None else nvrtc_error) from None
    refusal = first_error(str(nvrtc_error)).removeprefix(f"{unit.source_name}: ")
    why = host or f"NVRTC refuses it ({refusal})"
    note = one_line(f"{unit.source_name}: {why}: compiled with nvcc")
    return SourceBuild(compiled, nvcc_unit, tuple(warnings), note)


def host_code(source: str) -> str | None:
    """What in the source is host code, in words with its line ("host code (main at line 40)"), or
    None where nothing is."""
    for pattern, what in (
        (_MAIN, "main"),
        (_LAUNCH, "a <<<...>>> launch"),
        (_RUNTIME_CALL, "a CUDA runtime call"),
        (_HOST_HEADER, "a host header"),
    ):
        found = pattern.search(source)
        if found is not None:
            line = source.count("\n", 0, found.start()) + 1
            named = f" <{found.group(1)}>" if pattern is _HOST_HEADER else ""
            return f"host code ({what}{named} at line {line})"
    return None


def first_error(message: str) -> str:
    """A failed compile in one line: what failed and the compiler's first error, with how many more."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    errors = [line for line in lines[1:] if "error:" in line]
    said = lines[0].rstrip(":") if lines else "does not compile"
    if errors:
        more = f" (and {len(errors) - 1} more errors)" if len(errors) > 1 else ""
        said += f": {errors[0]}{more}"
    return one_line(said)


def problem_line(path: Path, message: str) -> str:
    """Why a file of a folder was not built, in one line that names it once."""
    said = first_error(message)
    named = said.split(": ", 1)[0]
    return said if named == str(path) or Path(named).name == path.name else one_line(f"{path}: {said}")
