"""Kernels of an expectation file that name a built artifact (`binary:`): the artifact found inside the
project or an allowed folder, the kernel an `entry:` names picked out of its cubins, and the claims
that read a fact no artifact carries refused before anything runs."""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from ncuverify.build.artifacts import Cubin, artifact_cubins, cubin_kernels, cubins_for
from ncuverify.build.built import BuiltKernel, KernelBuild
from ncuverify.build.cache import CompileCache
from ncuverify.build.demangle import demangle
from ncuverify.build.limits import BuildLimits
from ncuverify.build.resolve import Roots
from ncuverify.build.static import STATIC_METRICS
from ncuverify.errors import InputError
from ncuverify.names import function_name, outside_project, same_name

if TYPE_CHECKING:
    from ncuverify.spec import KernelSpec, Spec

_SHOWN = 20  # candidates a message lists


def binary_path(spec: Spec, key: str, kernel: KernelSpec, roots: Roots) -> Path:
    """The artifact's real path; InputError where it lies outside the project and the allowed folders
    (symbolic links followed), is missing, or is not a regular file (a folder, a device, a FIFO)."""
    where = f"kernels.{key}.binary"
    written = spec.folder / (kernel.binary or "")
    resolved = Path(os.path.realpath(written))
    if not any(resolved.is_relative_to(root) for root in (roots.project, *roots.allowed)):
        raise InputError(
            f"{where}: {kernel.binary} lies {outside_project(roots.project)}; a folder beside the"
            " project can be allowed with --allow-include DIR"
        )
    try:
        mode = os.stat(resolved).st_mode
    except (OSError, ValueError):
        raise InputError(f"{where}: no such file: {kernel.binary} (looked in {spec.folder})") from None
    if not stat.S_ISREG(mode):
        raise InputError(f"{where}: {kernel.binary} is not a regular file")
    return resolved


def binary_kernels(
    spec: Spec,
    key: str,
    kernel: KernelSpec,
    arch: str,
    roots: Roots,
    limits: BuildLimits,
    cache: CompileCache | None = None,
) -> list[BuiltKernel]:
    """Every kernel of the artifact's cubins for arch, with its facts (a `match:` entry's candidates)."""
    path = binary_path(spec, key, kernel, roots)
    cubins = cubins_for(artifact_cubins(path, limits.timeout_s), kernel.arch or arch, path)
    return [built for cubin in cubins for built in cubin_kernels(cubin, limits.timeout_s, cache, limits.sass)]


def binary_builds(
    spec: Spec, arch: str, roots: Roots, limits: BuildLimits, cache: CompileCache | None = None
) -> tuple[dict[str, KernelBuild], list[str]]:
    """Each `binary:` kernel with an `entry:`, ready to load and launch, and the problems found."""
    builds: dict[str, KernelBuild] = {}
    problems: list[str] = []
    # Each artifact is read and its symbols demangled once, however many kernels name it.
    read: dict[Path, tuple[list[Cubin], dict[str, str]]] = {}
    kernels_read: dict[str, list[BuiltKernel]] = {}  # each cubin's kernels, by its label
    for key, kernel in spec.content.kernels.items():
        if kernel.binary is None or kernel.entry is None:
            continue
        try:
            path = binary_path(spec, key, kernel, roots)
            if path not in read:
                every = artifact_cubins(path, limits.timeout_s)
                read[path] = (every, demangle(symbol for cubin in every for symbol in cubin.kernels))
            every, signatures = read[path]
            cubins = cubins_for(every, kernel.arch or arch, path)
            builds[key] = _build(key, kernel.entry, cubins, signatures, path, limits, kernels_read, cache)
        except InputError as error:
            problems.append(str(error))
    problems += absent_facts(spec, builds)
    return builds, problems


def _build(
    key: str,
    entry: str,
    cubins: list[Cubin],
    signatures: Mapping[str, str],
    path: Path,
    limits: BuildLimits,
    kernels_read: dict[str, list[BuiltKernel]],
    cache: CompileCache | None,
) -> KernelBuild:
    found = [
        (cubin, symbol)
        for cubin in cubins
        for symbol in cubin.kernels
        if symbol == entry or same_name(entry, function_name(signatures[symbol]))
    ]
    if len(found) != 1:
        raise InputError(_not_one(key, entry, found, signatures, cubins, path))
    cubin, symbol = found[0]
    if cubin.label not in kernels_read:
        kernels_read[cubin.label] = cubin_kernels(cubin, limits.timeout_s, cache, limits.sass)
    built = next(k for k in kernels_read[cubin.label] if k.symbol == symbol)
    return KernelBuild(
        name=key,
        entry=entry,
        symbol=symbol,
        arch=cubin.arch,
        cubin=cubin.data,
        facts=built.facts,
        log="",
        source_digest=hashlib.sha256(cubin.data + symbol.encode()).hexdigest()[:16],
    )


def _not_one(
    key: str,
    entry: str,
    found: list[tuple[Cubin, str]],
    signatures: Mapping[str, str],
    cubins: list[Cubin],
    path: Path,
) -> str:
    where = f"kernels.{key}.entry"
    if found:
        shown = "; ".join(f"{signatures[symbol]} in {cubin.label}" for cubin, symbol in found[:_SHOWN])
        return f"{where}: {entry!r} names {len(found)} kernels: {shown}; name one by its symbol"
    every = sorted({function_name(signatures[s]) for cubin in cubins for s in cubin.kernels})
    known = ", ".join(every[:_SHOWN]) or "none"
    more = f" and {len(every) - _SHOWN} more" if len(every) > _SHOWN else ""
    return f"{where}: no kernel {entry!r} in {path} (it holds: {known}{more})"


def absent_facts(spec: Spec, builds: Mapping[str, KernelBuild]) -> list[str]:
    """Claims on a binary kernel's fact that its artifact does not carry (spills, barriers: only ptxas
    reports them), each with what to read instead."""
    problems = []
    for claim in spec.content.claims:
        for ref in claim.metric_refs():
            case = spec.content.cases.get(ref.case)
            build = builds.get(case.kernel) if case is not None else None
            metric = STATIC_METRICS.get(ref.name)
            if build is None or metric is None or metric.read(build.facts) is not None:
                continue
            problems.append(
                f"claim {claim.id}: kernel {build.name} comes from a built artifact, which does not say"
                f" {ref.name} (only a compiler's report does); claim static__stack_frame_bytes,"
                " sass(STL) or sass(LDL) instead"
            )
    return list(dict.fromkeys(problems))
