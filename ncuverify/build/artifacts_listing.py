"""What `ncuverify build PATH` lists: every kernel of a .cu file (compiled with NVRTC, or nvcc), of a built
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
from ncuverify.build.static import StaticFacts
from ncuverify.build.units import unit_of
from ncuverify.build.whole_source import compile_source
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


@dataclass(frozen=True)
class FileListing:
    """One file's kernels as `build` lists them, or why it cannot be built."""

    path: Path
    kernels: list[ListedKernel]
    note: str | None = None  # how it was compiled, where that is news (with nvcc)
    problem: str | None = None  # why it was not built


def path_kernels(
    path: Path,
    source_arch: str | None,
    artifact_arch: str | None,
    limits: BuildLimits,
    cache: CompileCache | None = None,
    compiler: str = "auto",
) -> list[ListedKernel]:
    """The kernels of a .cu file (built for source_arch), a built artifact (its cubins for
    artifact_arch; every one where that is None), or a folder's .cu files and artifacts; InputError
    where there is nothing to build, or a file cannot be built."""
    listings = file_listings(path, source_arch, artifact_arch, limits, cache, compiler)
    problems = [listing.problem for listing in listings if listing.problem is not None]
    if problems:
        raise InputError("\n".join(problems))
    return [kernel for listing in listings for kernel in listing.kernels]


def file_listings(
    path: Path,
    source_arch: str | None,
    artifact_arch: str | None,
    limits: BuildLimits,
    cache: CompileCache | None = None,
    compiler: str = "auto",
) -> list[FileListing]:
    """Each file of path (itself, or a folder's .cu files and artifacts), built on its own: a file that
    cannot be built says why and hides no other. InputError where a folder holds nothing to build."""
    if not path.is_dir():
        return [_file_listing(path, source_arch, artifact_arch, limits, cache, compiler)]
    files = folder_inputs(path).files
    if not files:
        suffixes = ", ".join(f"*{s}" for s in (*SOURCE_SUFFIXES, *ARTIFACT_SUFFIXES))
        raise InputError(f"{path}/: nothing to build in this folder (no *.yaml, *.yml, {suffixes})")
    return [_file_listing(file, source_arch, artifact_arch, limits, cache, compiler) for file in files]


def _file_listing(
    path: Path,
    source_arch: str | None,
    artifact_arch: str | None,
    limits: BuildLimits,
    cache: CompileCache | None,
    compiler: str,
) -> FileListing:
    try:
        if path.suffix in SOURCE_SUFFIXES:
            built, note = source_kernels(path, source_arch, limits, cache, compiler)
            return FileListing(path, [listed(kernel, str(path)) for kernel in built], note)
        artifact = read_artifact(path, artifact_arch, limits.timeout_s, cache, limits.sass)
        return FileListing(path, [listed(kernel, str(path)) for kernel in artifact])
    except InputError as error:
        return FileListing(path, [], problem=str(error))


def source_kernels(
    path: Path, arch: str | None, limits: BuildLimits, cache: CompileCache | None, compiler: str = "auto"
) -> tuple[list[BuiltKernel], str | None]:
    """Every kernel a .cu file defines, compiled as it is by `compiler` (auto: NVRTC, else nvcc), and
    why nvcc compiled it where auto chose it."""
    if arch is None:
        raise InputError(f"{path}: no architecture to build for: pass --arch")
    from ncuverify.spec import KernelSpec

    roots = roots_at(path.parent, limits)
    kernel = KernelSpec(file=path.name, match=".")
    built = compile_source(
        lambda chosen: unit_of(path.parent / "build", path.name, kernel, arch, roots, chosen),
        compiler,
        cache,
        roots,
        limits,
    )
    return kernels_of(built.compiled, arch), built.note


# Folders a walk does not enter, besides hidden ones (.git, .venv): build outputs and the sources of
# other projects, which are built and owned elsewhere. A folder named on the command line is entered.
SKIPPED_FOLDERS = frozenset(
    {
        "build",
        "_build",
        "builds",
        "out",
        "dist",
        "CMakeFiles",
        "node_modules",
        "__pycache__",
        "third_party",
        "third-party",
        "thirdparty",
        "3rdparty",
        "external",
        "extern",
        "vendor",
        "_deps",
    }
)


@dataclass(frozen=True)
class FolderInputs:
    files: list[Path]  # sorted
    skipped: list[Path]  # the folders not entered (hidden ones aside)


def folder_inputs(
    folder: Path, suffixes: tuple[str, ...] = SOURCE_SUFFIXES + ARTIFACT_SUFFIXES
) -> FolderInputs:
    """A folder's files with those suffixes, recursively, sorted; hidden folders, links to folders,
    build outputs and other projects' sources (SKIPPED_FOLDERS, cmake-build-*) are not entered."""
    found: list[Path] = []
    skipped: list[Path] = []
    for top, folders, files in os.walk(folder):
        entered = sorted(name for name in folders if not name.startswith("."))
        skipped += [Path(top) / name for name in entered if _skipped(name)]
        folders[:] = [name for name in entered if not _skipped(name)]
        for name in sorted(files):
            if name.endswith(suffixes):
                found.append(Path(top) / name)
                if len(found) > MAX_FOLDER_FILES:
                    raise InputError(f"{folder}/: more than {MAX_FOLDER_FILES} files to build; name fewer")
    return FolderInputs(found, skipped)


def _skipped(name: str) -> bool:
    return name in SKIPPED_FOLDERS or name.startswith("cmake-build-")


def skipped_line(folder: Path, skipped: list[Path]) -> str | None:
    """One line naming the folders a walk did not enter, or None."""
    if not skipped:
        return None
    names = ", ".join(str(path.relative_to(folder)) for path in skipped[:10])
    more = f" and {len(skipped) - 10} more" if len(skipped) > 10 else ""
    return (
        f"{folder}/: not entered: {names}{more} (build outputs and other projects' sources; name a folder"
        " to build it)"
    )
