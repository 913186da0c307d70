"""Stage 2: compile each kernel with NVRTC (cuda-python's bindings) and read its static facts.

Kernels that share a source and compile options are compiled together, once. ptxas's resource report
(registers, stack, spills, shared memory) comes from the compile log, with NVRTC's cache off: on a cache
hit the log is empty. ncuverify.build.static adds the cubin's resource table and SASS.

The kernel, its headers and its flags may come from the pull request under test, so before anything is
compiled the include graph is walked (ncuverify.build.resolve) and every flag is checked against a list
of NVRTC options that neither read nor write files (ncuverify.build.flags). Each program compiles in a
worker process of its own (ncuverify.build.worker, started by ncuverify.build.launch), in an empty
temporary folder, with a time limit and only the include folders that were checked: what NVRTC can find
is what the walk found.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import ncuverify.spec
from ncuverify import cache as compile_cache
from ncuverify.build import nvcc
from ncuverify.build.binutils import tool_outputs
from ncuverify.build.demangle import demangle
from ncuverify.build.flags import UNPRINTABLE
from ncuverify.build.host import HostToolchain, host_toolchain
from ncuverify.build.launch import in_worker
from ncuverify.build.reports import entry_functions
from ncuverify.build.resolve import IncludedFile, Roots, Source, resolve
from ncuverify.build.static import StaticFacts, static_facts
from ncuverify.build.toolkit import cuda_include_dirs, nvrtc_version
from ncuverify.build.units import Unit, nvrtc_options, search_folders, unit_of
from ncuverify.cache import CompileCache, Compiled
from ncuverify.errors import InputError
from ncuverify.processes import TimedOut

if TYPE_CHECKING:
    # The spec imports the static metric names from this package: its names are looked up as they are
    # used, so that either may be imported first.
    from ncuverify.spec import Spec


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


def build_spec(
    spec: Spec, arch: str, cache: CompileCache | None = None, limits: BuildLimits = BuildLimits()
) -> dict[str, KernelBuild]:
    """Compile every kernel of a file for arch (unless a kernel pins its own), through the cache where
    one is given; raise InputError on failure."""
    roots = roots_of(spec, limits)
    units: dict[Unit, list[tuple[str, str]]] = {}
    problems: list[str] = []
    for name, kernel in spec.content.kernels.items():
        if kernel.entry is None:
            continue  # a set of kernels (`match:`), built by ncuverify.build.inventory
        if kernel.binary is not None:
            continue  # built already: read from its artifact below
        try:
            compiler = kernel.compiler or spec.content.compiler
            unit = unit_of(spec.path, name, kernel, kernel.arch or arch, roots, compiler)
        except InputError as error:
            problems.append(str(error))
            continue
        units.setdefault(unit, []).append((name, kernel.entry))
    from ncuverify.build.artifacts_spec import binary_builds  # which builds on KernelBuild

    builds, binary_problems = binary_builds(spec, arch, roots, limits.timeout_s)
    problems += binary_problems
    for unit, kernels in units.items():
        try:
            builds.update(_compile(unit, kernels, cache, roots, limits))
        except InputError as error:
            problems.append(str(error))
    if problems:
        raise InputError("\n".join(f"{spec.path}: {problem}" for problem in problems))
    return builds


def roots_of(spec: Spec, limits: BuildLimits) -> Roots:
    """What a file's kernels may read: its project, the folders allowed, the CUDA headers."""
    return roots_at(spec.folder, limits)


def roots_at(folder: Path, limits: BuildLimits) -> Roots:
    """What kernels in folder may read: its project, the folders allowed, the CUDA headers."""
    return Roots(
        project=ncuverify.spec.project_root(folder),
        allowed=tuple(Path(os.path.realpath(allowed)) for allowed in limits.allowed_roots),
        toolkit=tuple(Path(os.path.realpath(headers)) for headers in cuda_include_dirs()),
    )


# --- compiling ---------------------------------------------------------------------------------------------


def _compile(
    unit: Unit,
    kernels: list[tuple[str, str]],  # (key, entry as written)
    cache: CompileCache | None,
    roots: Roots,
    limits: BuildLimits,
) -> dict[str, KernelBuild]:
    for name, entry in kernels:
        if UNPRINTABLE.search(entry):
            raise InputError(f"kernels.{name}.entry: the name holds a control character")
    build = _nvcc_build if unit.compiler == "nvcc" else _nvrtc_build
    compiled, warnings, graph, lowered = build(unit, kernels, cache, roots, limits)
    log, cubin = compiled.log, compiled.cubin
    symbols = {name: lowered.get(entry, entry) for name, entry in kernels}
    try:
        facts = static_facts(log, compiled.resource_usage, compiled.disassembly, symbols.values())
    except KeyError as error:
        raise InputError(f"{unit.source_name}: cannot read the static facts of the build: {error}") from None
    return {
        name: KernelBuild(
            source_digest=_digest(unit, entry, graph),
            name=name,
            entry=entry,
            symbol=symbols[name],
            arch=unit.arch,
            cubin=cubin,
            facts=facts[symbols[name]],
            log=log,
            warnings=tuple(warnings),
        )
        for name, entry in kernels
    }


_Built = tuple[Compiled, list[str], tuple[IncludedFile, ...], dict[str, str]]


def _nvrtc_build(
    unit: Unit,
    kernels: list[tuple[str, str]],
    cache: CompileCache | None,
    roots: Roots,
    limits: BuildLimits,
) -> _Built:
    """The program compiled by NVRTC, the warnings on the way, its include graph, and each entry's
    mangled name where it is not its symbol."""
    templates = [entry for _, entry in kernels if "<" in entry]
    options = nvrtc_options(unit)
    graph = _include_graph(unit, roots)
    compiled, warnings = _through_cache(unit, templates, options, graph, cache, roots, limits)
    entries = entry_functions(compiled.log)
    missing = [entry for _, entry in kernels if compiled.lowered.get(entry, entry) not in entries]
    if missing:  # C++ names, as users write them (transposeNaive, ns::copy): NVRTC finds their symbols
        compiled, warnings = _by_name(unit, templates, missing, options, graph, cache, roots, limits, entries)
    return compiled, warnings, graph, compiled.lowered


def _nvcc_build(
    unit: Unit,
    kernels: list[tuple[str, str]],
    cache: CompileCache | None,
    roots: Roots,
    limits: BuildLimits,
) -> _Built:
    """As _nvrtc_build, with nvcc (ncuverify.build.nvcc): g++'s system headers are one more trusted
    root, and entries are found among the cubin's kernels by their demangled names."""
    compiled, warnings, graph = _nvcc_compiled(unit, cache, roots, limits)
    entries = [entry for _, entry in kernels]
    symbols = nvcc.entry_symbols(unit.source_name, entries, entry_functions(compiled.log), limits.timeout_s)
    return compiled, warnings, graph, symbols


def _nvcc_compiled(
    unit: Unit, cache: CompileCache | None, roots: Roots, limits: BuildLimits
) -> tuple[Compiled, list[str], tuple[IncludedFile, ...]]:
    host = host_toolchain()
    roots = replace(roots, system=host.include_dirs)
    graph = nvcc.include_graph(unit, host, roots)
    entry_key = nvcc.cache_key(unit, host, _graph_identity(graph))
    compiled, warnings = compile_cache.through(
        cache, entry_key, unit.source_name, lambda: _run_nvcc(unit, host, roots, limits.timeout_s)
    )
    return compiled, warnings, graph


def _by_name(
    unit: Unit,
    templates: list[str],
    missing: list[str],
    options: list[str],
    graph: tuple[IncludedFile, ...],
    cache: CompileCache | None,
    roots: Roots,
    limits: BuildLimits,
    entries: set[str],
) -> tuple[Compiled, list[str]]:
    """The program compiled again with the entries that name no symbol as name expressions, so that
    NVRTC gives each C++ function's mangled name; InputError naming the first where that fails too (no
    such function, or an overloaded one), with NVRTC's reason."""
    known = ", ".join(sorted(demangle(entries).values())) or "none"
    problem = f"{unit.source_name}: no kernel entry point {missing[0]!r} (it defines: {known})"
    try:
        compiled, warnings = _through_cache(
            unit, [*templates, *missing], options, graph, cache, roots, limits
        )
    except InputError as error:
        reason = next(
            (line.split("error:", 1)[1].strip() for line in str(error).splitlines() if "error:" in line), ""
        )
        raise InputError(problem + (f": {reason}" if reason else "")) from None
    found = entry_functions(compiled.log)
    if any(compiled.lowered.get(entry) not in found for entry in missing):
        raise InputError(problem)
    return compiled, warnings


def compile_unit(
    unit: Unit, cache: CompileCache | None, roots: Roots, limits: BuildLimits
) -> tuple[Compiled, list[str]]:
    """The unit compiled as it is, with no name expressions: every kernel it defines (templates only
    where the source instantiates them), and the warnings on the way."""
    if unit.compiler == "nvcc":
        compiled, warnings, _ = _nvcc_compiled(unit, cache, roots, limits)
        return compiled, warnings
    graph = _include_graph(unit, roots)
    return _through_cache(unit, [], nvrtc_options(unit), graph, cache, roots, limits)


def _through_cache(
    unit: Unit,
    templates: list[str],
    options: list[str],
    graph: tuple[IncludedFile, ...],
    cache: CompileCache | None,
    roots: Roots,
    limits: BuildLimits,
) -> tuple[Compiled, list[str]]:
    """The program's compilation, from the cache where it holds a sound entry; and the warnings on
    the way (a damaged entry, a cache that cannot be written)."""
    entry_key = compile_cache.key(
        unit.source_bytes, templates, options, nvrtc_version(), _graph_identity(graph)
    )
    readable = [str(root) for root in (roots.project, *roots.allowed, *roots.toolkit)]
    return compile_cache.through(
        cache,
        entry_key,
        unit.source_name,
        lambda: _run_nvrtc(unit, templates, options, readable, limits.timeout_s),
    )


def _include_graph(unit: Unit, roots: Roots) -> tuple[IncludedFile, ...]:
    source = Source(unit.source_bytes, unit.source_name, unit.folder)
    folders = [Path(folder) for folder in search_folders(unit)]
    return resolve(source, folders, roots)


def _graph_identity(graph: Iterable[IncludedFile]) -> list[tuple[str, str, str]]:
    return [(file.root, file.relative, file.sha256) for file in graph]


def _run_nvrtc(
    unit: Unit, templates: list[str], options: list[str], readable: list[str], timeout_s: float
) -> Compiled:
    """Compile in a worker process, then read the cubin with cuobjdump and nvdisasm."""
    answer = in_worker(unit, templates, options, readable, timeout_s)
    if answer.status == "error":
        raise InputError(f"{unit.source_name}: {answer.call} failed: {answer.message}")
    if answer.status == "failed":
        hint = nvcc.host_code_hint(answer.log, unit.source_bytes)
        raise InputError(
            f"{unit.source_name}: does not compile for {unit.arch}:\n{_bounded_log(answer.log)}"
            + (f"\n{hint}" if hint else "")
        )
    return _read_cubin(unit, answer.cubin, answer.log, dict(answer.lowered), timeout_s)


def _run_nvcc(unit: Unit, host: HostToolchain, roots: Roots, timeout_s: float) -> Compiled:
    answer = nvcc.compile_cubin(unit, host, roots, timeout_s)
    if not answer.compiled:
        raise InputError(
            f"{unit.source_name}: does not compile for {unit.arch} with nvcc:\n{_bounded_log(answer.log)}"
        )
    return _read_cubin(unit, answer.cubin, answer.log, {}, timeout_s)


def _read_cubin(unit: Unit, cubin: bytes, log: str, lowered: dict[str, str], timeout_s: float) -> Compiled:
    """The compilation with the cubin's resource table and SASS, read with cuobjdump and nvdisasm."""
    try:
        resource_usage, disassembly = tool_outputs(cubin, timeout_s)
    except (RuntimeError, TimedOut) as error:
        raise InputError(f"{unit.source_name}: cannot read the static facts of the build: {error}") from None
    return Compiled(cubin, log, lowered, resource_usage, disassembly)


# What a failed compile's message shows of NVRTC's log.
_MAX_SHOWN_LOG = 20000


def _bounded_log(log: str) -> str:
    log = log.strip()
    if len(log) <= _MAX_SHOWN_LOG:
        return log
    return log[:_MAX_SHOWN_LOG] + f"\n... ({log.count(chr(10), _MAX_SHOWN_LOG) + 1} more lines)"


def _digest(unit: Unit, entry: str, graph: tuple[IncludedFile, ...] = ()) -> str:
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
    if unit.compiler != "nvrtc":  # left out for NVRTC, whose kernels keep the digests they had
        identity = (*identity, unit.compiler)
    if graph:
        identity = (*identity, tuple(_graph_identity(graph)))
    return hashlib.sha256(repr(identity).encode("utf-8", errors="surrogateescape")).hexdigest()[:16]
