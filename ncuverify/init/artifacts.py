"""The kernels of a built artifact (a cubin, a fatbin, a .o, a .a, a .so, an executable), for a starter
file that names them with `binary:`: read from the artifact's cubins for the architecture asked, as
`check` reads a `binary:` kernel, each with its parameters' sizes from its own cubin."""

from __future__ import annotations

import os
from pathlib import Path

from ncuverify.build.artifacts import Cubin, artifact_cubins, cubin_kernels, cubins_for
from ncuverify.build.artifacts_elf import ELF_MAGIC
from ncuverify.build.artifacts_listing import ARTIFACT_SUFFIXES
from ncuverify.build.built import roots_at
from ncuverify.build.cache import CompileCache
from ncuverify.build.limits import BuildLimits
from ncuverify.build.params import kernel_parameters
from ncuverify.errors import InputError
from ncuverify.files import Unreadable, open_plain
from ncuverify.init.sources import SourceKernel, SourceKernels, relative_inside
from ncuverify.text import one_line

# How a build's outputs begin: ELF (cubins, objects, shared libraries, executables), an ar archive
# (static libraries) and a fatbin file.
_MAGIC = (ELF_MAGIC, b"!<arch>\n", bytes.fromhex("50ed55ba"))


def is_artifact(path: Path) -> bool:
    """Whether path is a build's output rather than a source: by its suffix (`libops.so.1` too), or
    by how it begins where it has none of those (an executable)."""
    if path.suffix == ".cu":
        return False
    if path.suffix in ARTIFACT_SUFFIXES or ".so." in path.name:
        return True
    try:
        with open_plain(path) as file:
            head = file.read(8)
    except Unreadable:
        return False
    return head.startswith(_MAGIC)


def kernels_in_artifact(
    artifact: Path, written_at: Path, arch: str, limits: BuildLimits, cache: CompileCache | None = None
) -> SourceKernels:
    """The kernels of the artifact's cubins for arch; InputError where it lies outside the project of
    `written_at` and the allowed folders, is no artifact, holds no cubin for arch, or no kernel."""
    roots = roots_at(Path(os.path.abspath(written_at.parent)), limits)
    where = "the artifact's project, or allow its folder with --allow-include DIR"
    binary = relative_inside(artifact, written_at, (roots.project, *roots.allowed), where)
    cubins = cubins_for(artifact_cubins(artifact, limits.timeout_s), arch, artifact)
    kernels = sorted(
        (kernel for cubin in cubins for kernel in _cubin_kernels(cubin, limits, cache)),
        key=lambda k: (k.built.name, k.built.signature, k.built.symbol),
    )
    if not kernels:
        raise InputError(f"{one_line(str(artifact))}: its cubins for {arch} hold no kernel")
    return SourceKernels(binary, tuple(kernels), (), binary=True, read=(artifact,))


def _cubin_kernels(cubin: Cubin, limits: BuildLimits, cache: CompileCache | None) -> list[SourceKernel]:
    """The cubin's kernels, each with its parameters' sizes, its section table read once for them all."""
    built = cubin_kernels(cubin, limits.timeout_s, cache)
    sizes = kernel_parameters(cubin.data, (kernel.symbol for kernel in built), cubin.label)
    return [SourceKernel(kernel, sizes[kernel.symbol]) for kernel in built]
