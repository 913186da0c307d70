"""What the CUDA installation offers the build: the headers kernels may include, NVRTC's version, and the
binary utilities that read a cubin."""

from __future__ import annotations

import re
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


# --- the hint on a missing CUDA library header ----------------------------------------------------------------

# The headers of the CUDA libraries a toolkit may hold and the CUDA wheels ncuverify installs do not,
# by the start of their name: the library, and what installs its headers from PyPI (the cuda-toolkit
# meta-package's extras, or the library's own wheel where the meta-package has none).
_LIBRARY_HEADERS: tuple[tuple[str, str, str], ...] = (
    ("cublas", "cuBLAS", "'cuda-toolkit[cublas]'"),
    ("cusparse", "cuSPARSE", "'cuda-toolkit[cusparse]'"),
    ("cufft", "cuFFT", "'cuda-toolkit[cufft]'"),
    ("curand", "cuRAND", "'cuda-toolkit[curand]'"),
    ("cusolver", "cuSOLVER", "'cuda-toolkit[cusolver]'"),
    ("cuda_profiler_api", "the CUDA profiler API", "'cuda-toolkit[profiler]'"),
    ("cudaProfiler", "the CUDA profiler API", "'cuda-toolkit[profiler]'"),
    ("nvtx3/", "NVTX", "'cuda-toolkit[nvtx]'"),
    ("nvToolsExt", "NVTX", "'cuda-toolkit[nvtx]'"),
    ("thrust/", "Thrust (CCCL)", "'cuda-toolkit[cccl]'"),
    ("cub/", "CUB (CCCL)", "'cuda-toolkit[cccl]'"),
    ("cudnn", "cuDNN", "nvidia-cudnn-cu13"),
    ("nccl", "NCCL", "nvidia-nccl-cu13"),
)
# g++'s (nvcc's preprocessor) `fatal error: X.h: No such file or directory`; NVRTC's
# `cannot open source file "X.h"`.
_MISSING_HEADER = re.compile(
    r'(?:error: ([^\s:"]+): No such file or directory|cannot open source file "([^"]+)")'
)


def library_header_hint(log: str, compiler: str, toolkit: str | None = None) -> str | None:
    """The hint for a compile that failed on a CUDA library's header missing (cublas_v2.h,
    cuda_profiler_api.h, nvtx3/...): where to get it. toolkit is which nvcc compiled (its release and
    root), None for NVRTC. None for other failures."""
    for found in _MISSING_HEADER.finditer(log):
        header = found.group(1) or found.group(2)
        library = next((entry for entry in _LIBRARY_HEADERS if header.startswith(entry[0])), None)
        if library is None:
            continue
        _, name, package = library
        if compiler == "nvcc":
            where = f"the toolkit of {toolkit}" if toolkit else "nvcc's CUDA toolkit"
            fix = "give a toolkit that has it (--cuda-home DIR, or CUDA_HOME), or install its headers"
        else:
            where = "the CUDA headers NVRTC compiles with (the CUDA wheels')"
            fix = "install its headers"
        return (
            f"hint: {header} is a header of {name}, which {where} does not hold: {fix}: pip install {package}"
        )
    return None
