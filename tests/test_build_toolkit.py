"""What the CUDA installation offers the build: the hint on a CUDA library's header missing."""

from pathlib import Path

import pytest
from build_projects import refused, spec_with

from ncuverify.build.toolkit import cuda_include_dirs, library_header_hint

# What g++ (nvcc's preprocessor) and NVRTC say of a header they cannot find, as each printed it.
NVCC_LOG = """In file included from /tmp/tt/proj/k.cu:1:
/tmp/tt/proj/k.cu:2:10: fatal error: cuda_profiler_api.h: No such file or directory
    2 | #include <cuda_profiler_api.h>
      |          ^~~~~~~~~~~~~~~~~~~~~
compilation terminated."""
NVRTC_LOG = 'k.yaml:inline(1): catastrophic error: cannot open source file "cublas_v2.h"'


def test_nvcc_missing_a_library_header_names_the_toolkit_and_the_extra():
    hint = library_header_hint(NVCC_LOG, "nvcc", "nvcc 13.5.37 at /venv/nvidia/cu13")
    assert hint == (
        "hint: cuda_profiler_api.h is a header of the CUDA profiler API, which the toolkit of nvcc 13.5.37 at"
        " /venv/nvidia/cu13 does not hold: give a toolkit that has it (--cuda-home DIR, or CUDA_HOME), or"
        " install its headers: pip install 'cuda-toolkit[profiler]'"
    )


@pytest.mark.parametrize(
    ("header", "package"),
    [
        ("cublas_v2.h", "'cuda-toolkit[cublas]'"),
        ("cublasLt.h", "'cuda-toolkit[cublas]'"),
        ("cusparse.h", "'cuda-toolkit[cusparse]'"),
        ("cufft.h", "'cuda-toolkit[cufft]'"),
        ("curand_kernel.h", "'cuda-toolkit[curand]'"),
        ("cusolverDn.h", "'cuda-toolkit[cusolver]'"),
        ("nvtx3/nvToolsExt.h", "'cuda-toolkit[nvtx]'"),
        ("thrust/device_vector.h", "'cuda-toolkit[cccl]'"),
        ("cudnn.h", "nvidia-cudnn-cu13"),
        ("nccl.h", "nvidia-nccl-cu13"),
    ],
)
def test_each_library_is_named_with_what_installs_it(header, package):
    hint = library_header_hint(f"k.cu:1:10: fatal error: {header}: No such file or directory", "nvcc")
    assert hint is not None and hint.endswith(f"pip install {package}") and header in hint


def test_other_failures_and_other_headers_get_no_hint():
    assert library_header_hint("k.cu(1): error: identifier undefined", "nvcc") is None
    assert library_header_hint("fatal error: my_header.h: No such file or directory", "nvcc") is None
    assert library_header_hint('cannot open source file "tile.cuh"', "nvrtc") is None


def test_nvrtc_missing_a_library_header_names_the_extra(tmp_path):
    hint = library_header_hint(NVRTC_LOG, "nvrtc")
    assert hint is not None and "the CUDA headers NVRTC compiles with" in hint and "--cuda-home" not in hint


@pytest.mark.skipif(
    not cuda_include_dirs() or any((Path(d) / "cudnn.h").is_file() for d in cuda_include_dirs()),
    reason="needs the CUDA wheels, without cuDNN's headers",
)
def test_an_nvrtc_build_that_includes_a_missing_library_header_ends_with_the_hint(tmp_path):
    kernels = {"k": {"source": '#include <cudnn.h>\nextern "C" __global__ void k() {}\n', "entry": "k"}}
    message = refused(spec_with(tmp_path, kernels))
    assert 'cannot open source file "cudnn.h"' in message
    assert message.rstrip().splitlines()[-1].endswith("pip install nvidia-cudnn-cu13")
