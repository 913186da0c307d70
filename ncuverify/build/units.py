"""A kernel's compile unit: its source, arch, defines, include folders and checked options; the NVRTC
command line it stands for, and the folders NVRTC searches for its headers."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ncuverify.build.flags import NVRTC_OPTIONS, check_argument, checked_flags, define_value, include_folder
from ncuverify.build.nvcc_flags import NVCC_OPTIONS
from ncuverify.build.resolve import GraphLimits, Roots, read_bounded
from ncuverify.build.toolkit import cuda_include_dirs, nvrtc_version
from ncuverify.errors import InputError
from ncuverify.text import one_line

if TYPE_CHECKING:
    from ncuverify.spec import KernelSpec


@dataclass(frozen=True)
class Unit:
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
    compiler: str = "nvrtc"  # or nvcc, whose options `options` then are
    toolkit: str | None = None  # the expectation file's `toolkit:` (nvcc's), as written
    # Template entries (kernel<32>) that nvcc instantiates in a unit of ncuverify's own that includes the
    # source (ncuverify.build.nvcc); set by the nvcc build, never by the file
    instances: tuple[str, ...] = ()

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


def unit_of(
    spec_path: Path,
    name: str,
    kernel: KernelSpec,
    arch: str,
    roots: Roots,
    compiler: str = "nvrtc",
    toolkit: str | None = None,
) -> Unit:
    folder = spec_path.parent
    where = f"kernels.{name}"
    # What reaches nvcc's command line is checked against its shell (NVRTC has none: its table checks
    # nothing): -D values here, include folders as given and as resolved, the .cu file's path.
    table = NVCC_OPTIONS if compiler == "nvcc" else NVRTC_OPTIONS
    include_dirs = [
        include_folder(folder, d, roots, f"{where}.include_dirs", d, table) for d in kernel.include_dirs
    ]
    options, flag_dirs = checked_flags(kernel.flags, folder, roots, f"{where}.flags", table)
    defines = tuple(sorted((k, define_value(k, v, f"{where}.defines")) for k, v in kernel.defines.items()))
    for define, value in defines:
        check_argument(table, value or "", f"{where}.defines.{define}")
    if kernel.file is not None:
        path = Path(os.path.realpath(folder / kernel.file))
        source_name = _display_path(path)
        shown = f"{where}.file: {one_line(source_name)}"
        check_argument(table, str(path.parent), shown, folder=True)  # nvcc's -I for its quoted includes
        check_argument(table, path.name, shown)
        try:
            data = read_bounded(path, GraphLimits().max_file_bytes)
        except InputError as error:
            raise InputError(f"{source_name}: {error}") from None
        source, source_folder = data.decode("utf-8", errors="surrogateescape"), path.parent
    else:
        # NVRTC names the source in its messages: say which expectation file holds it.
        source, source_name, source_folder = kernel.source or "", f"{spec_path.name}:inline", None
    return Unit(
        source=source,
        source_name=source_name,
        folder=source_folder,
        arch=arch,
        defines=defines,
        include_dirs=tuple(dict.fromkeys([*include_dirs, *flag_dirs])),
        lineinfo=kernel.lineinfo,
        std=kernel.std,
        max_registers=kernel.max_registers,
        flags=tuple(kernel.flags),
        options=tuple(options),
        compiler=compiler,
        toolkit=toolkit if compiler == "nvcc" else None,
    )


def _display_path(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path.resolve())


def nvrtc_options(unit: Unit) -> list[str]:
    """The NVRTC command line for a unit. The CUDA headers' folders come first among the include
    folders, so that a header of the project cannot stand in for one that a CUDA header includes."""
    options = [f"-arch={unit.arch}", f"--std={unit.std}", "--ptxas-options=-v"]
    if unit.lineinfo:
        options.append("--generate-line-info")
    if unit.max_registers is not None:
        options.append(f"--maxrregcount={unit.max_registers}")
    options += [f"--define-macro={n}" if v is None else f"--define-macro={n}={v}" for n, v in unit.defines]
    options += [f"--include-path={d}" for d in search_folders(unit)]
    if nvrtc_version() >= (12, 9):
        options.append("--no-cache")  # NVRTC's cache drops the ptxas report on a hit
    return [*options, *unit.options]


def search_folders(unit: Unit) -> list[str]:
    """Where NVRTC looks for headers, in order: the CUDA headers, the .cu file's folder, the include
    folders."""
    folders = [*(str(Path(os.path.realpath(d))) for d in cuda_include_dirs())]
    folders += [str(unit.folder)] if unit.folder is not None else []
    return list(dict.fromkeys([*folders, *unit.include_dirs]))
