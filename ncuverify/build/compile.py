"""Stage 2: compile each kernel with NVRTC (cuda-python's bindings) and read its static facts.

Kernels that share a source and compile options are compiled together, once. ptxas's resource report
(registers, stack, spills, shared memory) comes from the compile log, with NVRTC's cache off: on a cache
hit the log is empty. ncuverify.build.static adds the cubin's resource table and SASS.

The kernel, its headers and its flags may come from the pull request under test, so before anything is
compiled the include graph is walked (ncuverify.build.resolve) and every flag is checked against a list of
NVRTC options that neither read nor write files. Each program compiles in a worker process of its own
(ncuverify.build.worker), in an empty temporary folder, with a time limit and only the include folders
that were checked: what NVRTC can find is what the walk found.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import ncuverify
import ncuverify.spec
from ncuverify import cache as compile_cache
from ncuverify.build import resolve as includes
from ncuverify.cache import CompileCache, Compiled
from ncuverify.errors import InputError
from ncuverify.processes import TimedOut, run_bounded
from ncuverify.build.static import StaticFacts, entry_functions, static_facts, tool_outputs
from ncuverify.text import one_line

if TYPE_CHECKING:
    # The spec imports the static metric names from this package: its names are looked up as they are
    # used, so that either may be imported first.
    from ncuverify.spec import KernelSpec, Spec


@dataclass(frozen=True)
class KernelBuild:
    """One compiled kernel, ready to load and launch."""

    name: str  # the kernel's key in the expectation file
    entry: str  # as written: strided_read, copy_stride<32>
    symbol: str  # the mangled name in the cubin, which ncu reports too
    arch: str
    cubin: bytes
    facts: StaticFacts
    log: str
    source_digest: (
        str  # the source, its headers and options it was built from, whatever the compiler's version
    )
    warnings: tuple[
        str, ...
    ] = ()  # what went wrong on the way without stopping the build (a damaged cache entry)


@dataclass(frozen=True)
class BuildLimits:
    """What a build may read and how long it may take. Set from the command line, never from an
    expectation file, which may come from the pull request under test."""

    allowed_roots: tuple[Path, ...] = ()  # folders outside the project that kernels may include
    timeout_s: float = 120.0  # one NVRTC program, preprocessing included


@dataclass(frozen=True)
class _Unit:
    """One NVRTC program: a source and its options, shared by the kernels that use them."""

    source: str  # the file's bytes, decoded with surrogateescape so that they come back unchanged
    source_name: str
    folder: Path | None  # the .cu file's folder, where its quoted includes start; None for inline source
    arch: str
    defines: tuple[tuple[str, str | None], ...]
    include_dirs: tuple[str, ...]  # resolved: the file's include_dirs, then the folders of its -I flags
    lineinfo: bool
    std: str
    max_registers: int | None
    flags: tuple[str, ...]  # as written in the file
    options: tuple[str, ...]  # the NVRTC options that the flags stand for, include folders aside

    @property
    def source_bytes(self) -> bytes:
        try:
            return self.source.encode("utf-8", errors="surrogateescape")
        except UnicodeEncodeError:  # a lone surrogate written in inline source: it stays visible
            return self.source.encode("utf-8", errors="backslashreplace")

    @property
    def nvrtc_name(self) -> str:
        """The program's name for NVRTC, which looks for its quoted includes in the name's folder: the
        .cu file's absolute path, or for inline source a folder that does not exist (NVRTC's current
        folder holds nothing, and `..` from it would climb out)."""
        return (
            str(self.folder / Path(self.source_name).name)
            if self.folder is not None
            else f"{_INLINE}/{self.source_name}"
        )


_INLINE = "ncuverify-inline-source"


def cuda_include_dirs() -> list[str]:
    """The CUDA runtime and CCCL headers (from the CUDA wheels or a toolkit), so kernels can include them."""
    try:
        from cuda import pathfinder
    except ImportError:
        return []
    found = []
    for library in ("cudart", "cccl"):
        located = pathfinder.locate_nvidia_header_directory(library)
        if located is not None:
            found.append(located.abs_path)
    return found


def build_spec(
    spec: Spec, arch: str, cache: CompileCache | None = None, limits: BuildLimits = BuildLimits()
) -> dict[str, KernelBuild]:
    """Compile every kernel of a file for arch (unless a kernel pins its own), through the cache where
    one is given; raise InputError on failure."""
    roots = _roots(spec, limits)
    units: dict[_Unit, list[tuple[str, KernelSpec]]] = {}
    problems: list[str] = []
    for name, kernel in spec.content.kernels.items():
        try:
            unit = _unit(spec.path, name, kernel, kernel.arch or arch, roots)
        except InputError as error:
            problems.append(str(error))
            continue
        units.setdefault(unit, []).append((name, kernel))
    builds: dict[str, KernelBuild] = {}
    for unit, kernels in units.items():
        try:
            builds.update(_compile(unit, kernels, cache, roots, limits))
        except InputError as error:
            problems.append(str(error))
    if problems:
        raise InputError("\n".join(f"{spec.path}: {problem}" for problem in problems))
    return builds


def _roots(spec: Spec, limits: BuildLimits) -> includes.Roots:
    return includes.Roots(
        project=ncuverify.spec.project_root(spec.folder),
        allowed=tuple(Path(os.path.realpath(folder)) for folder in limits.allowed_roots),
        toolkit=tuple(Path(os.path.realpath(folder)) for folder in cuda_include_dirs()),
    )


def _unit(spec_path: Path, name: str, kernel: KernelSpec, arch: str, roots: includes.Roots) -> _Unit:
    folder = spec_path.parent
    where = f"kernels.{name}"
    include_dirs = [
        _include_folder(folder, d, roots, f"{where}.include_dirs", d) for d in kernel.include_dirs
    ]
    options, flag_dirs = _nvrtc_flags(kernel.flags, folder, roots, f"{where}.flags")
    if kernel.file is not None:
        path = Path(os.path.realpath(folder / kernel.file))
        source_name = _display_path(path)
        try:
            data = includes.read_bounded(path, includes.GraphLimits().max_file_bytes)
        except InputError as error:
            raise InputError(f"{source_name}: {error}") from None
        source, source_folder = data.decode("utf-8", errors="surrogateescape"), path.parent
    else:
        # NVRTC names the source in its messages: say which expectation file holds it.
        source, source_name, source_folder = kernel.source or "", f"{spec_path.name}:inline", None
    return _Unit(
        source=source,
        source_name=source_name,
        folder=source_folder,
        arch=arch,
        defines=tuple(
            sorted((k, _define_value(k, v, f"{where}.defines")) for k, v in kernel.defines.items())
        ),
        include_dirs=tuple(dict.fromkeys([*include_dirs, *flag_dirs])),
        lineinfo=kernel.lineinfo,
        std=kernel.std,
        max_registers=kernel.max_registers,
        flags=tuple(kernel.flags),
        options=tuple(options),
    )


def _display_path(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path.resolve())


_MACRO = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _define_value(name: str, value: object, where: str) -> str | None:
    if _MACRO.fullmatch(name) is None:
        raise InputError(f"{where}: {one_line(name)!r} is not a macro name")
    if value is None:
        return None
    if isinstance(value, bool):
        return "1" if value else "0"
    text = str(value)
    if _UNPRINTABLE.search(text):
        raise InputError(f"{where}.{name}: the value holds a control character (a newline?)")
    if _PROBE in text:
        raise InputError(f"{where}.{name}: {_PROBE_PROBLEM}")
    return text


# A macro defined from the command line that uses __has_include could test any path from an #if, out
# of the include walk's sight.
_PROBE = "__has"
_PROBE_PROBLEM = "a macro that uses __has_include (or another __has_ name) cannot be checked"


def _include_folder(folder: Path, given: str, roots: includes.Roots, where: str, shown: str) -> str:
    """An include folder named in the file: resolved, and inside the project or an allowed folder."""
    resolved = Path(os.path.realpath(folder / given))
    inside = (roots.project, *roots.allowed, *roots.toolkit)
    if not any(resolved.is_relative_to(root) for root in inside):
        raise InputError(
            f"{where}: {one_line(shown)} lies outside the project ({roots.project}); an include folder must "
            "be inside it, or beside it and allowed with --allow-include DIR"
        )
    if not resolved.is_dir():
        raise InputError(
            f"{where}: {one_line(shown)}: no such folder: {one_line(given)} (looked in {folder})"
        )
    return str(resolved)


# --- NVRTC options -----------------------------------------------------------------------------------------

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
_SHORT = {short: long for long, (shorts, _) in ALLOWED_OPTIONS.items() for short in shorts}
_SHORT.update({short: long for long, (short, _) in _OWNED.items()})
# Single-letter options whose value may follow with or without `=` or a space: -DX, -D X, -D=X.
_ATTACHED = {"-D": "--define-macro", "-U": "--undefine-macro", "-I": "--include-path"}
_DEFINITION = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\([A-Za-z0-9_, .]*\))?(=.*)?", re.DOTALL)
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f]")


def _nvrtc_flags(
    flags: Iterable[str], folder: Path, roots: includes.Roots, where: str
) -> tuple[list[str], list[str]]:
    """The NVRTC options that the flags stand for, each written out in full, and the include folders
    of their -I options, resolved; InputError for a flag that is not allowed."""
    options: list[str] = []
    include_dirs: list[str] = []
    pending = list(flags)
    while pending:
        flag = pending.pop(0)
        shown = one_line(flag)[:200]
        option, value = _split_flag(flag)
        if option is None:
            raise InputError(
                f"{where}: {shown} is not allowed: ncuverify passes NVRTC only options that neither read nor "
                "write files (the README lists them)"
            )
        if value is None and _takes_value(option):
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
            include_dirs.append(_include_folder(folder, value or "", roots, where, shown))
        elif option in ("--define-macro", "--undefine-macro"):
            if value is None or _UNPRINTABLE.search(value) or _DEFINITION.fullmatch(value) is None:
                raise InputError(f"{where}: {shown}: not a macro definition")
            if _PROBE in value:
                raise InputError(f"{where}: {shown}: {_PROBE_PROBLEM}")
            options.append(f"{option}={value}")
        else:
            pattern = ALLOWED_OPTIONS[option][1]
            if (value is not None) if pattern is None else not re.fullmatch(pattern, value or ""):
                raise InputError(f"{where}: {shown}: not a value NVRTC's {option} takes")
            options.append(option if value is None else f"{option}={value}")
    return options, include_dirs


def _takes_value(option: str) -> bool:
    return option in _ATTACHED.values() or option in _OWNED or ALLOWED_OPTIONS[option][1] is not None


def _split_flag(flag: str) -> tuple[str | None, str | None]:
    """A flag as (its option's long name, its value or None); (None, None) for an option not allowed."""
    if flag[:2] in _ATTACHED:
        value = flag[2:].lstrip(" \t")
        value = value[1:] if value.startswith("=") else value
        return _ATTACHED[flag[:2]], value or None
    name, equals, value = flag.partition("=")
    long = name if name in ALLOWED_OPTIONS or name in _OWNED else _SHORT.get(name)
    if long is None and name in ("--define-macro", "--undefine-macro", "--include-path"):
        long = name
    if long is None:
        return None, None
    return long, value if equals else None


def nvrtc_options(unit: _Unit) -> list[str]:
    """The NVRTC command line for a unit. The CUDA headers' folders come first among the include
    folders, so that a header of the project cannot stand in for one that a CUDA header includes."""
    options = [f"-arch={unit.arch}", f"--std={unit.std}", "--ptxas-options=-v"]
    if unit.lineinfo:
        options.append("--generate-line-info")
    if unit.max_registers is not None:
        options.append(f"--maxrregcount={unit.max_registers}")
    options += [f"--define-macro={n}" if v is None else f"--define-macro={n}={v}" for n, v in unit.defines]
    options += [f"--include-path={d}" for d in _search_folders(unit)]
    if nvrtc_version() >= (12, 9):
        options.append("--no-cache")  # NVRTC's cache drops the ptxas report on a hit
    return [*options, *unit.options]


def _search_folders(unit: _Unit) -> list[str]:
    """Where NVRTC looks for headers, in order: the CUDA headers, the .cu file's folder, the include
    folders."""
    folders = [*(str(Path(os.path.realpath(d))) for d in cuda_include_dirs())]
    folders += [str(unit.folder)] if unit.folder is not None else []
    return list(dict.fromkeys([*folders, *unit.include_dirs]))


def nvrtc_version() -> tuple[int, int]:
    from cuda.bindings import nvrtc

    result, major, minor = nvrtc.nvrtcVersion()
    _check(result, "nvrtcVersion")
    return (major, minor)


# --- compiling ---------------------------------------------------------------------------------------------


def _compile(
    unit: _Unit,
    kernels: list[tuple[str, KernelSpec]],
    cache: CompileCache | None,
    roots: includes.Roots,
    limits: BuildLimits,
) -> dict[str, KernelBuild]:
    for name, kernel in kernels:
        if _UNPRINTABLE.search(kernel.entry):
            raise InputError(f"kernels.{name}.entry: the name holds a control character")
    templates = [k.entry for _, k in kernels if k.is_template]
    options = nvrtc_options(unit)
    graph = _include_graph(unit, roots)
    compiled, warnings = _through_cache(unit, templates, options, graph, cache, roots, limits)
    log, cubin, lowered = compiled.log, compiled.cubin, compiled.lowered
    entries = entry_functions(log)
    missing = [k.entry for _, k in kernels if lowered.get(k.entry, k.entry) not in entries]
    if missing:
        known = ", ".join(sorted(entries)) or "none"
        raise InputError(f"{unit.source_name}: no kernel entry point {missing[0]!r} (it defines: {known})")
    symbols = {name: lowered.get(kernel.entry, kernel.entry) for name, kernel in kernels}
    try:
        facts = static_facts(log, compiled.resource_usage, compiled.disassembly, symbols.values())
    except KeyError as error:
        raise InputError(f"{unit.source_name}: cannot read the static facts of the build: {error}") from None
    return {
        name: KernelBuild(
            source_digest=_digest(unit, kernel.entry, graph),
            name=name,
            entry=kernel.entry,
            symbol=symbols[name],
            arch=unit.arch,
            cubin=cubin,
            facts=facts[symbols[name]],
            log=log,
            warnings=tuple(warnings),
        )
        for name, kernel in kernels
    }


def _through_cache(
    unit: _Unit,
    templates: list[str],
    options: list[str],
    graph: tuple[includes.IncludedFile, ...],
    cache: CompileCache | None,
    roots: includes.Roots,
    limits: BuildLimits,
) -> tuple[Compiled, list[str]]:
    """The program's compilation, from the cache where it holds a sound entry; and the warnings on
    the way (a damaged entry, a cache that cannot be written)."""
    entry_key = compile_cache.key(
        unit.source_bytes, templates, options, nvrtc_version(), _graph_identity(graph)
    )
    warnings: list[str] = []
    if cache is not None:
        lookup = cache.get(entry_key)
        if lookup.compiled is not None:
            return lookup.compiled, warnings
        if lookup.damage is not None:
            warnings.append(f"{unit.source_name}: {lookup.damage}; compiled again")
    readable = [str(root) for root in (roots.project, *roots.allowed, *roots.toolkit)]
    compiled = _run_nvrtc(unit, templates, options, readable, limits.timeout_s)
    if cache is not None and (problem := cache.put(entry_key, compiled)) is not None:
        warnings.append(f"{unit.source_name}: {problem}")
    return compiled, warnings


def _include_graph(unit: _Unit, roots: includes.Roots) -> tuple[includes.IncludedFile, ...]:
    source = includes.Source(unit.source_bytes, unit.source_name, unit.folder)
    folders = [Path(folder) for folder in _search_folders(unit)]
    return includes.resolve(source, folders, roots)


def _graph_identity(graph: Iterable[includes.IncludedFile]) -> list[tuple[str, str, str]]:
    return [(file.root, file.relative, file.sha256) for file in graph]


def _run_nvrtc(
    unit: _Unit, templates: list[str], options: list[str], readable: list[str], timeout_s: float
) -> Compiled:
    """Compile in a worker process, then read the cubin with cuobjdump and nvdisasm."""
    result = _in_worker(unit, templates, options, readable, timeout_s)
    if result["status"] == "error":
        raise InputError(f"{unit.source_name}: {result['call']} failed: {result['message']}")
    if result["status"] == "failed":
        raise InputError(
            f"{unit.source_name}: does not compile for {unit.arch}:\n{_bounded_log(result['log'])}"
        )
    cubin = base64.b64decode(result["cubin"])
    try:
        resource_usage, disassembly = tool_outputs(cubin, timeout_s)
    except (RuntimeError, TimedOut) as error:
        raise InputError(f"{unit.source_name}: cannot read the static facts of the build: {error}") from None
    return Compiled(cubin, result["log"], dict(result["lowered"]), resource_usage, disassembly)


# What a failed compile's message shows of NVRTC's log.
_MAX_SHOWN_LOG = 20000


def _bounded_log(log: str) -> str:
    log = log.strip()
    if len(log) <= _MAX_SHOWN_LOG:
        return log
    return log[:_MAX_SHOWN_LOG] + f"\n... ({log.count(chr(10), _MAX_SHOWN_LOG) + 1} more lines)"


# The variables a worker keeps of ncuverify's environment: what Python, the CUDA wheels and NVRTC need.
# The rest (a CI job's secrets among them) stays out of the process that reads the pull request's files.
_WORKER_ENVIRONMENT = (
    "PATH",
    "HOME",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TMPDIR",
    "PYTHONHOME",
    "PYTHONUSERBASE",
    "PYTHONNOUSERSITE",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
    "CUDA_HOME",
    "CUDA_PATH",
    "LD_LIBRARY_PATH",
)


def worker_environment() -> dict[str, str]:
    environment = {name: os.environ[name] for name in _WORKER_ENVIRONMENT if name in os.environ}
    package_parent = str(Path(ncuverify.__file__).resolve().parent.parent)
    inherited = os.environ.get("PYTHONPATH")
    environment["PYTHONPATH"] = package_parent + (os.pathsep + inherited if inherited else "")
    return environment


# The worker runs as a script, not with -m: -m would import this package first, and with it the
# expectation file's schema and pandas (a second per compile). -P keeps the worker's folder, whose
# modules' names are common words, off the import path.
WORKER_SCRIPT = Path(__file__).with_name("worker.py")


def _worker_command(request_file: Path) -> list[str]:
    return [sys.executable, "-P", str(WORKER_SCRIPT), str(request_file)]


def _in_worker(
    unit: _Unit, templates: list[str], options: list[str], readable: list[str], timeout_s: float
) -> dict:
    """Run the compile in the worker script (ncuverify.build.worker), in an empty folder of its own that is
    removed afterwards, reading only under `readable` where the system allows; the worker's process
    group is killed at the time limit."""
    request = {
        "source": base64.b64encode(unit.source_bytes).decode(),
        "name": unit.nvrtc_name,
        "options": options,
        "names": templates,
        "readable": readable,
    }
    with tempfile.TemporaryDirectory(prefix="ncuverify-compile-") as scratch:
        request_file = Path(scratch) / "request.json"
        request_file.write_text(json.dumps(request))
        empty = Path(scratch) / "cwd"
        empty.mkdir()
        try:
            finished = run_bounded(
                _worker_command(request_file), timeout_s, env=worker_environment(), cwd=empty
            )
        except TimedOut:
            raise InputError(
                f"{unit.source_name}: did not compile within {timeout_s:g} s; stopped "
                "(a preprocessor that expands without bound?)"
            ) from None
    if finished.returncode < 0:
        raise InputError(
            f"{unit.source_name}: NVRTC ended on signal {-finished.returncode} while compiling it"
        )
    try:
        if finished.returncode != 0:
            raise ValueError(f"exit status {finished.returncode}")
        result = json.loads(finished.stdout)
        if not isinstance(result, dict) or result.get("status") not in ("compiled", "failed", "error"):
            raise ValueError("no result")
    except ValueError as error:
        last = (finished.stderr.strip().splitlines() or [""])[-1]
        raise RuntimeError(f"the compile worker for {unit.source_name} failed ({error}): {last}") from None
    if isinstance(result.get("log"), str):
        result["log"] = _named_as_shown(result["log"], unit)
    return result


def _named_as_shown(log: str, unit: _Unit) -> str:
    """NVRTC's log, naming the program as messages do (kernels/k.cu(4): error ...)."""
    if unit.nvrtc_name == unit.source_name:
        return log
    return re.sub(re.escape(unit.nvrtc_name) + r'(?=[("])', lambda _: unit.source_name, log)


def _digest(unit: _Unit, entry: str, graph: tuple[includes.IncludedFile, ...] = ()) -> str:
    # Include folders and absolute paths are left out: they differ between machines, not between
    # kernels. The headers are named by their path in the project (or in an allowed folder).
    identity: tuple[object, ...] = (
        unit.source,
        entry,
        unit.arch,
        unit.defines,
        unit.lineinfo,
        unit.std,
        unit.max_registers,
        unit.flags,
    )
    if graph:
        identity = (*identity, tuple(_graph_identity(graph)))
    return hashlib.sha256(repr(identity).encode("utf-8", errors="surrogateescape")).hexdigest()[:16]


def _check(result: object, call: str) -> None:
    from cuda.bindings import nvrtc

    if result != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        _, text = nvrtc.nvrtcGetErrorString(result)
        raise InputError(f"{call} failed: {text.decode(errors='replace')}")
