"""What the CUDA installation offers the build: the headers kernels may include, NVRTC's version, and the
binary utilities that read a cubin."""

from __future__ import annotations

import shutil

from ncuverify.errors import InputError


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


def nvrtc_version() -> tuple[int, int]:
    from cuda.bindings import nvrtc

    result, major, minor = nvrtc.nvrtcVersion()
    _check(result, "nvrtcVersion")
    return (major, minor)


def _check(result: object, call: str) -> None:
    from cuda.bindings import nvrtc

    if result != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        _, text = nvrtc.nvrtcGetErrorString(result)
        raise InputError(f"{call} failed: {text.decode(errors='replace')}")


def find_tool(name: str) -> str | None:
    """nvdisasm or cuobjdump: from the CUDA wheels or a toolkit, else the PATH."""
    try:
        from cuda import pathfinder

        found = pathfinder.find_nvidia_binary_utility(name)
    except Exception:  # an older cuda-pathfinder, or none: fall back to the PATH
        found = None
    return found or shutil.which(name)
