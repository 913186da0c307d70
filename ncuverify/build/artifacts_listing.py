"""What `ncuverify build PATH` lists: every kernel of a .cu file (compiled with NVRTC), of a built
artifact, or of a folder of them, as plain records of its static facts that `--json` writes and
`--diff` compares."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ncuverify.build.artifacts import read_artifact
from ncuverify.build.built import BuiltKernel, kernels_of, roots_at
from ncuverify.build.cache import CompileCache
from ncuverify.build.limits import BuildLimits
from ncuverify.build.programs import compile_unit
from ncuverify.build.static import StaticFacts
from ncuverify.build.units import unit_of
from ncuverify.errors import InputError

SOURCE_SUFFIXES = (".cu",)
ARTIFACT_SUFFIXES = (".cubin", ".fatbin", ".o", ".a", ".so")
MAX_FOLDER_FILES = 10_000  # sources and artifacts one folder may stand for


@dataclass(frozen=True)
class ListedKernel:
    """One kernel's static facts as `build` prints, writes and compares them."""

    name: str  # demangled, as users write it
    symbol: str
    signature: str
    arch: str
    source: str  # the file it was read from
    facts: dict[str, float]  # by static metric name; a fact the build lacks is absent
    mix: dict[str, int]  # SASS opcodes (no modifiers) by count

    @property
    def key(self) -> tuple[str, str]:
        """What --diff matches kernels by."""
        return (self.symbol, self.arch)


def listed(kernel: BuiltKernel | tuple[str, str, str, StaticFacts], source: str) -> ListedKernel:
    """A kernel as a record: a BuiltKernel, or (symbol, signature, arch, facts) of a KernelBuild."""
    if isinstance(kernel, BuiltKernel):
        symbol, signature, arch, facts = kernel.symbol, kernel.signature, kernel.arch, kernel.facts
    else:
        symbol, signature, arch, facts = kernel
    name = BuiltKernel(symbol, signature, arch, facts).name
    mix = dict(sorted(facts.mix().items(), key=lambda item: (-item[1], item[0])))
    return ListedKernel(name, symbol, signature, arch, source, facts.metrics(), mix)


def path_kernels(
    path: Path,
    source_arch: str | None,
    artifact_arch: str | None,
    limits: BuildLimits,
    cache: CompileCache | None = None,
) -> list[ListedKernel]:
    """The kernels of a .cu file (built for source_arch), a built artifact (its cubins for
    artifact_arch; every one where that is None), or a folder's .cu files and artifacts; InputError
    where there is nothing to build."""
    if path.is_dir():
        files = folder_inputs(path)
        if not files:
            suffixes = ", ".join(f"*{s}" for s in (*SOURCE_SUFFIXES, *ARTIFACT_SUFFIXES))
            raise InputError(f"{path}/: nothing to build in this folder (no *.yaml, *.yml, {suffixes})")
        return [k for file in files for k in path_kernels(file, source_arch, artifact_arch, limits, cache)]
    if path.suffix in SOURCE_SUFFIXES:
        return [listed(kernel, str(path)) for kernel in source_kernels(path, source_arch, limits, cache)]
    return [
        listed(kernel, str(path))
        for kernel in read_artifact(path, artifact_arch, limits.timeout_s, cache, limits.sass)
    ]


def source_kernels(
    path: Path, arch: str | None, limits: BuildLimits, cache: CompileCache | None
) -> list[BuiltKernel]:
    """Every kernel a .cu file defines, compiled as it is. NVRTC compiles it: the one place that would
    hand the file to another compiler."""
    if arch is None:
        raise InputError(f"{path}: no architecture to build for: pass --arch")
    from ncuverify.spec import KernelSpec

    roots = roots_at(path.parent, limits)
    kernel = KernelSpec(file=path.name, match=".")
    unit = unit_of(path.parent / "build", path.name, kernel, arch, roots)
    compiled, _ = compile_unit(unit, cache, roots, limits)
    return kernels_of(compiled, arch)


def folder_inputs(folder: Path) -> list[Path]:
    """A folder's .cu files and artifacts, recursively, sorted; hidden folders and links to folders
    are not entered."""
    found: list[Path] = []
    for top, folders, files in os.walk(folder):
        folders[:] = sorted(name for name in folders if not name.startswith("."))
        for name in sorted(files):
            if name.endswith(SOURCE_SUFFIXES + ARTIFACT_SUFFIXES):
                found.append(Path(top) / name)
                if len(found) > MAX_FOLDER_FILES:
                    raise InputError(f"{folder}/: more than {MAX_FOLDER_FILES} files to build; name fewer")
    return found
