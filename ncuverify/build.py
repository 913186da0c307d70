"""Stage 2: compile each kernel with NVRTC (cuda-python's bindings) and read its static facts.

Kernels that share a source and compile options are compiled together, once. ptxas's resource report
(registers, stack, spills, shared memory) comes from the compile log, with NVRTC's cache off: on a cache
hit the log is empty. ncuverify.static adds the cubin's resource table and SASS.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from ncuverify import cache as compile_cache
from ncuverify.cache import CompileCache, Compiled
from ncuverify.errors import InputError
from ncuverify.spec import KernelSpec, Spec
from ncuverify.static import StaticFacts, entry_functions, static_facts, tool_outputs


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
    source_digest: str  # the source and options it was built from, whatever the compiler's version


@dataclass(frozen=True)
class BuildLimits:
    """What a build may read and how long it may take. Set from the command line, never from an
    expectation file, which may come from the pull request under test."""

    allowed_roots: tuple[Path, ...] = ()  # folders outside the project that kernels may include
    timeout_s: float = 120.0  # one NVRTC program, preprocessing included


@dataclass(frozen=True)
class _Unit:
    """One NVRTC program: a source and its options, shared by the kernels that use them."""

    source: str
    source_name: str
    arch: str
    defines: tuple[tuple[str, str | None], ...]
    include_dirs: tuple[str, ...]
    lineinfo: bool
    std: str
    max_registers: int | None
    flags: tuple[str, ...]


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
    units: dict[_Unit, list[tuple[str, KernelSpec]]] = {}
    for name, kernel in spec.content.kernels.items():
        units.setdefault(_unit(spec.path, kernel, kernel.arch or arch), []).append((name, kernel))
    builds: dict[str, KernelBuild] = {}
    problems: list[str] = []
    for unit, kernels in units.items():
        try:
            builds.update(_compile(unit, kernels, cache))
        except InputError as error:
            problems.append(str(error))
    if problems:
        raise InputError("\n".join(f"{spec.path}: {problem}" for problem in problems))
    return builds


def _unit(spec_path: Path, kernel: KernelSpec, arch: str) -> _Unit:
    folder = spec_path.parent
    includes = [str((folder / d).resolve()) for d in kernel.include_dirs]
    if kernel.file is not None:
        path = folder / kernel.file
        source = path.read_text(encoding="utf-8")
        source_name = _display_path(path)
        includes.insert(0, str(path.resolve().parent))  # quoted includes next to the .cu file
    else:
        # NVRTC names the source in its messages: say which expectation file holds it.
        source, source_name = kernel.source or "", f"{spec_path.name}:inline"
    defines = tuple(sorted((k, _define_value(v)) for k, v in kernel.defines.items()))
    return _Unit(
        source=source,
        source_name=source_name,
        arch=arch,
        defines=defines,
        include_dirs=tuple(includes),
        lineinfo=kernel.lineinfo,
        std=kernel.std,
        max_registers=kernel.max_registers,
        flags=tuple(kernel.flags),
    )


def _display_path(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path.resolve())


def _define_value(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)


def nvrtc_options(unit: _Unit) -> list[str]:
    """The NVRTC command line for a unit."""
    options = [f"-arch={unit.arch}", f"--std={unit.std}", "--ptxas-options=-v"]
    if unit.lineinfo:
        options.append("--generate-line-info")
    if unit.max_registers is not None:
        options.append(f"--maxrregcount={unit.max_registers}")
    options += [f"--define-macro={n}" if v is None else f"--define-macro={n}={v}" for n, v in unit.defines]
    options += [f"--include-path={d}" for d in (*unit.include_dirs, *cuda_include_dirs())]
    if nvrtc_version() >= (12, 9):
        options.append("--no-cache")  # NVRTC's cache drops the ptxas report on a hit
    return [*options, *unit.flags]


def nvrtc_version() -> tuple[int, int]:
    from cuda.bindings import nvrtc

    result, major, minor = nvrtc.nvrtcVersion()
    _check(result, "nvrtcVersion")
    return (major, minor)


def _compile(
    unit: _Unit, kernels: list[tuple[str, KernelSpec]], cache: CompileCache | None
) -> dict[str, KernelBuild]:
    templates = [k.entry for _, k in kernels if k.is_template]
    options = nvrtc_options(unit)
    entry_key = compile_cache.key(unit.source, templates, options, nvrtc_version(), list(unit.include_dirs))
    compiled = cache.get(entry_key) if cache is not None else None
    if compiled is None:
        compiled = _run_nvrtc(unit, templates, options)
        if cache is not None:
            cache.put(entry_key, compiled)
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
            source_digest=_digest(unit, kernel.entry),
            name=name,
            entry=kernel.entry,
            symbol=symbols[name],
            arch=unit.arch,
            cubin=cubin,
            facts=facts[symbols[name]],
            log=log,
        )
        for name, kernel in kernels
    }


def _run_nvrtc(unit: _Unit, templates: list[str], options: list[str]) -> Compiled:
    """Compile with NVRTC, then read the cubin with cuobjdump and nvdisasm."""
    from cuda.bindings import nvrtc

    encoded = [o.encode() for o in options]
    result, program = nvrtc.nvrtcCreateProgram(unit.source.encode(), unit.source_name.encode(), 0, [], [])
    _check(result, "nvrtcCreateProgram")
    try:
        for entry in templates:
            _check(nvrtc.nvrtcAddNameExpression(program, entry.encode())[0], "nvrtcAddNameExpression")
        (status,) = nvrtc.nvrtcCompileProgram(program, len(encoded), encoded)
        log = _program_log(program)
        if status != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            raise InputError(f"{unit.source_name}: does not compile for {unit.arch}:\n{log.strip()}")
        cubin = _program_cubin(program)
        lowered = {entry: _lowered_name(program, entry) for entry in templates}
    finally:
        nvrtc.nvrtcDestroyProgram(program)
    try:
        resource_usage, disassembly = tool_outputs(cubin)
    except RuntimeError as error:
        raise InputError(f"{unit.source_name}: cannot read the static facts of the build: {error}") from None
    return Compiled(cubin, log, lowered, resource_usage, disassembly)


def _digest(unit: _Unit, entry: str) -> str:
    # Include folders are left out: they differ between machines, not between kernels.
    identity = repr(
        (unit.source, entry, unit.arch, unit.defines, unit.lineinfo, unit.std, unit.max_registers, unit.flags)
    )
    return hashlib.sha256(identity.encode()).hexdigest()[:16]


def _check(result: object, call: str) -> None:
    from cuda.bindings import nvrtc

    if result != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        _, text = nvrtc.nvrtcGetErrorString(result)
        raise InputError(f"{call} failed: {text.decode(errors='replace')}")


def _program_log(program: object) -> str:
    from cuda.bindings import nvrtc

    result, size = nvrtc.nvrtcGetProgramLogSize(program)
    _check(result, "nvrtcGetProgramLogSize")
    buffer = b" " * size
    _check(nvrtc.nvrtcGetProgramLog(program, buffer)[0], "nvrtcGetProgramLog")
    return buffer.rstrip(b"\0").decode(errors="replace")


def _program_cubin(program: object) -> bytes:
    from cuda.bindings import nvrtc

    result, size = nvrtc.nvrtcGetCUBINSize(program)
    _check(result, "nvrtcGetCUBINSize")
    buffer = b" " * size
    _check(nvrtc.nvrtcGetCUBIN(program, buffer)[0], "nvrtcGetCUBIN")
    return buffer


def _lowered_name(program: object, entry: str) -> str:
    from cuda.bindings import nvrtc

    result, name = nvrtc.nvrtcGetLoweredName(program, entry.encode())
    _check(result, "nvrtcGetLoweredName")
    return name.decode()
