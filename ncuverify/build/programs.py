"""One program compiled, NVRTC's or nvcc's, through the compile cache: the cubin, the compile log with
ptxas's report, and the cubin's resource table and SASS (cuobjdump, nvdisasm).

NVRTC compiles in a worker process (ncuverify.build.worker, started by ncuverify.build.launch) that
can read only the folders the include walk checked; nvcc (ncuverify.build.nvcc) in the same worker,
confined likewise, with the host compiler's system headers as one more root.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from ncuverify.build import cache as compile_cache
from ncuverify.build import nvcc
from ncuverify.build.binutils import through_cache, tool_outputs
from ncuverify.build.cache import CompileCache, Compiled
from ncuverify.build.demangle import demangle
from ncuverify.build.host import HostToolchain, host_toolchain
from ncuverify.build.launch import in_worker
from ncuverify.build.limits import BuildLimits
from ncuverify.build.reports import entry_functions
from ncuverify.build.resolve import IncludedFile, Roots, Source, resolve
from ncuverify.build.toolkit import library_header_hint, nvrtc_version
from ncuverify.build.units import Unit, nvrtc_options, search_folders
from ncuverify.errors import InputError
from ncuverify.processes import TimedOut

# A program's compilation, the warnings on the way, its include graph, and each entry's mangled name
# where it is not its symbol.
Built = tuple[Compiled, list[str], tuple[IncludedFile, ...], dict[str, str]]


def nvrtc_build(
    unit: Unit,
    kernels: list[tuple[str, str]],
    cache: CompileCache | None,
    roots: Roots,
    limits: BuildLimits,
) -> Built:
    """The program compiled by NVRTC, the warnings on the way, its include graph, and each entry's
    mangled name where it is not its symbol."""
    templates = [entry for _, entry in kernels if "<" in entry]
    options = nvrtc_options(unit)
    graph = include_graph(unit, roots)
    compiled, warnings = _through_cache(unit, templates, options, graph, cache, roots, limits)
    entries = entry_functions(compiled.log)
    missing = [entry for _, entry in kernels if compiled.lowered.get(entry, entry) not in entries]
    if missing:  # C++ names, as users write them (transposeNaive, ns::copy): NVRTC finds their symbols
        compiled, warnings = _by_name(unit, templates, missing, options, graph, cache, roots, limits, entries)
    return compiled, warnings, graph, compiled.lowered


def nvcc_build(
    unit: Unit,
    kernels: list[tuple[str, str]],
    cache: CompileCache | None,
    roots: Roots,
    limits: BuildLimits,
) -> Built:
    """As nvrtc_build, with nvcc (ncuverify.build.nvcc): g++'s system headers are one more trusted
    root, and entries are found among the cubin's kernels by their demangled names. Template entries
    (kernel<32>) are instantiated by a unit of ncuverify's own that includes the source, so a template
    the code never instantiates can be named as it is written."""
    templates = tuple(dict.fromkeys(entry for _, entry in kernels if "<" in entry))
    compiled, warnings, graph = _nvcc_compiled(replace(unit, instances=templates), cache, roots, limits)
    entries = [entry for _, entry in kernels]
    symbols = nvcc.entry_symbols(unit.source_name, entries, entry_functions(compiled.log), limits.timeout_s)
    return compiled, warnings, graph, symbols


def _nvcc_compiled(
    unit: Unit, cache: CompileCache | None, roots: Roots, limits: BuildLimits
) -> tuple[Compiled, list[str], tuple[IncludedFile, ...]]:
    host = nvcc_toolchain(unit, roots, limits)
    roots = replace(roots, toolkit=host.header_folders, system=host.include_dirs)
    graph = nvcc.include_graph(unit, host, roots)
    entry_key = nvcc.cache_key(unit, host, graph_identity(graph))
    compiled, warnings = through_cache(
        cache,
        entry_key,
        unit.source_name,
        lambda: _run_nvcc(unit, host, roots, limits),
        limits.sass,
        limits.timeout_s,
    )
    return compiled, warnings, graph


def nvcc_toolchain(unit: Unit, roots: Roots, limits: BuildLimits) -> HostToolchain:
    """The nvcc (and g++) that compile the unit: --cuda-home, else the file's `toolkit:`, else the
    machine's (ncuverify.build.host)."""
    return host_toolchain(cuda_home=limits.cuda_home, file_toolkit=unit.toolkit, roots=roots)


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
    graph = include_graph(unit, roots)
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
        unit.source_bytes, templates, options, nvrtc_version(), graph_identity(graph)
    )
    readable = [str(root) for root in (roots.project, *roots.allowed, *roots.toolkit)]
    return through_cache(
        cache,
        entry_key,
        unit.source_name,
        lambda: _run_nvrtc(unit, templates, options, readable, limits),
        limits.sass,
        limits.timeout_s,
    )


def include_graph(unit: Unit, roots: Roots) -> tuple[IncludedFile, ...]:
    """The files the unit's source includes, as the include walk finds them (each resolved); for nvcc,
    with g++'s system headers among the roots, as nvcc reads them."""
    if unit.compiler == "nvcc":
        host = host_toolchain()
        return nvcc.include_graph(unit, host, replace(roots, system=host.include_dirs))
    _refuse_what_nvrtc_ends_at(unit.source_bytes, unit.source_name)
    source = Source(unit.source_bytes, unit.source_name, unit.folder)
    folders = [Path(folder) for folder in search_folders(unit)]
    return resolve(source, folders, roots)


# NVRTC reads the program it is given (not its headers, which it reads from their files) only up to a NUL
# (it takes a C string) or a byte 0xff (read as the end of the file): it would compile the part before
# and leave the rest out unseen. nvcc reads the file whole. Other bytes that are not UTF-8 (a comment
# in Latin-1) are compiled as they are.
_NVRTC_ENDS = re.compile(rb"[\x00\xff]")


def _refuse_what_nvrtc_ends_at(source: bytes, source_name: str) -> None:
    found = _NVRTC_ENDS.search(source)
    if found is None:
        return
    at = found.start()
    line = source.count(b"\n", 0, at) + 1
    if found.group() == b"\0":
        what, remedy = "a NUL byte", "remove it"
    else:
        what, remedy = (
            "the byte 0xff",
            "save the file as UTF-8 (where no byte is 0xff), or compile it with `compiler: nvcc`",
        )
    raise InputError(
        f"{source_name}: {what} at byte offset {at} (line {line}): NVRTC reads the source only up to it"
        f" and would leave the rest out of the build; {remedy}"
    )


def graph_identity(graph: Iterable[IncludedFile]) -> list[tuple[str, str, str]]:
    return [(file.root, file.relative, file.sha256) for file in graph]


def _run_nvrtc(
    unit: Unit, templates: list[str], options: list[str], readable: list[str], limits: BuildLimits
) -> Compiled:
    """Compile in a worker process, then read the cubin with cuobjdump (and nvdisasm where asked)."""
    answer = in_worker(unit, templates, options, readable, limits.timeout_s)
    if answer.status == "error":
        raise InputError(f"{unit.source_name}: {answer.call} failed: {answer.message}")
    if answer.status == "failed":
        hint = nvcc.host_code_hint(answer.log, unit.source_bytes) or library_header_hint(answer.log, "nvrtc")
        raise InputError(
            f"{unit.source_name}: does not compile for {unit.arch}:\n{_bounded_log(answer.log)}"
            + (f"\n{hint}" if hint else "")
        )
    return _read_cubin(unit, answer.cubin, answer.log, dict(answer.lowered), limits)


def _run_nvcc(unit: Unit, host: HostToolchain, roots: Roots, limits: BuildLimits) -> Compiled:
    answer = nvcc.compile_cubin(unit, host, roots, limits.timeout_s)
    if not answer.compiled:
        hint = library_header_hint(answer.log, "nvcc", host.described)
        raise InputError(
            f"{unit.source_name}: does not compile for {unit.arch} with nvcc:\n{_bounded_log(answer.log)}"
            + (f"\n{hint}" if hint else "")
        )
    return _read_cubin(unit, answer.cubin, answer.log, {}, limits)


def _read_cubin(unit: Unit, cubin: bytes, log: str, lowered: dict[str, str], limits: BuildLimits) -> Compiled:
    """The compilation with the cubin's resource table (cuobjdump) and, where asked, its SASS (nvdisasm)."""
    try:
        resource_usage, disassembly = tool_outputs(cubin, limits.timeout_s, limits.sass)
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
