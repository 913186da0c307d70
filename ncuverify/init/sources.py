"""The kernels a .cu file defines, compiled with NVRTC as it is (templates where the source
instantiates them), each with its parameters' sizes; compiled as an expectation file written at a given
place would compile it, so that what it may include is what that file's kernels may."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ncuverify.build.built import BuiltKernel, kernels_of, roots_at
from ncuverify.build.cache import CompileCache
from ncuverify.build.limits import BuildLimits
from ncuverify.build.params import kernel_parameters
from ncuverify.build.programs import include_graph
from ncuverify.build.units import unit_of
from ncuverify.build.whole_source import compile_source, first_error
from ncuverify.errors import InputError
from ncuverify.names import outside_project
from ncuverify.spec import KernelSpec
from ncuverify.text import one_line


@dataclass(frozen=True)
class SourceKernel:
    """A kernel of the source and the size of each of its parameters (None: the cubin does not say)."""

    built: BuiltKernel
    parameter_sizes: tuple[int, ...] | None


@dataclass(frozen=True)
class SourceKernels:
    """Every kernel of a source or an artifact, as an expectation file at `written_at` names it."""

    file: str  # the source's path relative to the expectation file's folder
    kernels: tuple[SourceKernel, ...]
    warnings: tuple[str, ...]
    binary: bool = False  # a built artifact (named by `binary:`), not a source (`file:`)
    read: tuple[Path, ...] = ()  # the files read to find them: the source and what it includes
    compiler: str = "nvrtc"  # what compiled the source: nvcc where the starter file must say so
    note: str | None = None  # why nvcc compiled it, where that was chosen for it


def kernels_in_source(
    source: Path,
    written_at: Path,
    arch: str,
    cache: CompileCache | None,
    limits: BuildLimits,
    compiler: str = "auto",
) -> SourceKernels:
    """The kernels that `source` defines, built for arch by `compiler` (auto: NVRTC, else nvcc where
    the source holds host code); InputError where it is not a readable .cu inside the project of
    `written_at`, does not compile, or defines no kernel."""
    if source.suffix != ".cu":
        raise InputError(
            f"{one_line(str(source))}: not a CUDA source (.cu); give a .cu file or a built artifact (cubin,"
            " fatbin, .o, .a, .so, executable)"
        )
    roots = roots_at(Path(os.path.abspath(written_at.parent)), limits)
    file = relative_inside(source, written_at, (roots.project,), "the kernel's project")
    kernel = KernelSpec(file=file, match=".")
    try:
        built = compile_source(
            lambda chosen: unit_of(written_at, "source", kernel, arch, roots, chosen),
            compiler,
            cache,
            roots,
            limits,
        )
    except InputError as error:
        raise InputError(first_error(str(error))) from None
    compiled, unit = built.compiled, built.unit
    every = kernels_of(compiled, unit.arch)
    if not every:
        raise InputError(
            f"{unit.source_name}: defines no kernel (no __global__ function; a template counts where the"
            " source instantiates it, as `template __global__ void f<float>(float*);`)"
        )
    sizes = kernel_parameters(compiled.cubin, (k.symbol for k in every), unit.source_name)
    kernels = tuple(SourceKernel(k, sizes[k.symbol]) for k in every)
    read = (source, *(included.path for included in include_graph(unit, roots)))
    return SourceKernels(file, kernels, built.warnings, read=read, compiler=unit.compiler, note=built.note)


def relative_inside(path: Path, written_at: Path, roots: tuple[Path, ...], where: str) -> str:
    """path relative to the folder of the file written at written_at; InputError where it lies (links
    followed) outside the roots, the first of which is the project."""
    if not any(Path(os.path.realpath(path)).is_relative_to(root) for root in roots):
        raise InputError(
            f"{one_line(str(path))}: lies {outside_project(roots[0], one_line(str(written_at)))};"
            f" write the expectation file inside {where}"
        )
    return os.path.relpath(os.path.abspath(path), os.path.abspath(written_at.parent))
