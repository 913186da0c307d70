"""Stage 2: every kernel of a file built, each with its cubin, symbol and static facts.

Kernels that share a source and compile options are compiled together, once, by NVRTC (the default)
or nvcc (`compiler: nvcc`), in ncuverify.build.programs; kernels of built artifacts (`binary:`) are
read by ncuverify.build.artifacts_spec. ptxas's resource report (registers, stack, spills, shared
memory) comes from the compile log; ncuverify.build.static adds the cubin's resource table and SASS.

The kernel, its headers and its flags may come from the pull request under test, so before anything is
compiled the include graph is walked (ncuverify.build.resolve) and every flag is checked against a list
of compiler options that neither read nor write files (ncuverify.build.flags, build.nvcc_flags). Each
program compiles in a worker process of its own (ncuverify.build.worker, started by
ncuverify.build.launch), in an empty temporary folder, with a time limit and only the include folders
that were checked: what the compiler can find is what the walk found.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from ncuverify.build.artifacts_spec import binary_builds
from ncuverify.build.built import KernelBuild, roots_of
from ncuverify.build.cache import CompileCache
from ncuverify.build.flags import UNPRINTABLE
from ncuverify.build.limits import BuildLimits
from ncuverify.build.programs import graph_identity, nvcc_build, nvcc_toolchain, nvrtc_build
from ncuverify.build.resolve import IncludedFile, Roots
from ncuverify.build.static import static_facts
from ncuverify.build.units import Unit, unit_of
from ncuverify.errors import InputError

if TYPE_CHECKING:
    from ncuverify.spec import Spec


def build_spec(
    spec: Spec, arch: str, cache: CompileCache | None = None, limits: BuildLimits | None = None
) -> dict[str, KernelBuild]:
    """Compile every kernel of a file for arch (unless a kernel pins its own), through the cache where
    one is given; raise InputError on failure."""
    limits = limits or BuildLimits()
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
            toolkit = spec.content.toolkit
            unit = unit_of(spec.path, name, kernel, kernel.arch or arch, roots, compiler, toolkit)
        except InputError as error:
            problems.append(str(error))
            continue
        units.setdefault(unit, []).append((name, kernel.entry))
    builds, binary_problems = binary_builds(spec, arch, roots, limits, cache)
    problems += binary_problems
    for unit, kernels in units.items():
        try:
            builds.update(_compile(unit, kernels, cache, roots, limits))
        except InputError as error:
            problems.append(str(error))
    if problems:
        raise InputError("\n".join(f"{spec.path}: {problem}" for problem in problems))
    return builds


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
    build = nvcc_build if unit.compiler == "nvcc" else nvrtc_build
    compiled, warnings, graph, lowered = build(unit, kernels, cache, roots, limits)
    # Which nvcc compiled (its release and toolkit), for provenance; NVRTC's version is the run's own.
    nvcc = nvcc_toolchain(unit, roots, limits).described if unit.compiler == "nvcc" else None
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
            nvcc=nvcc,
        )
        for name, entry in kernels
    }


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
        identity = (*identity, tuple(graph_identity(graph)))
    return hashlib.sha256(repr(identity).encode("utf-8", errors="surrogateescape")).hexdigest()[:16]
