"""NVRTC builds: these need no GPU, only the NVRTC library (the nvidia-cuda-nvrtc wheel)."""

from pathlib import Path

import pytest
import yaml
from conftest import DATA

from ncuverify.build import build_spec, nvrtc_options
from ncuverify.errors import InputError
from ncuverify.spec import load


def spec_with(tmp_path: Path, kernels: dict, name: str = "k.yaml"):
    first = next(iter(kernels))
    content = {
        "kernels": kernels,
        "cases": {"c": {"kernel": first, "grid": 1, "block": 32}},
        "claims": [
            {
                "id": "x",
                "case": "c",
                "metric": "m.sum",
                "expect": {"equals": 1},
                "cite": {"document": "d", "section": "1", "figure": "f"},
            }
        ],
    }
    path = tmp_path / name
    path.write_text(yaml.safe_dump(content))
    return load(path)


def test_sample_builds_templates_and_extern_c_for_sm90():
    builds = build_spec(load(DATA / "sample.yaml"), "sm_90")
    assert builds["read_stride32"].symbol == "_Z11read_strideILi32EEvPKfPf"
    assert builds["read_stride1"].symbol == "_Z11read_strideILi1EEvPKfPf"
    assert builds["scale"].symbol == "scale"
    assert builds["scale"].cubin[:4] == b"\x7fELF"
    # Both instantiations come from one compile of the shared source.
    assert builds["read_stride1"].cubin is builds["read_stride32"].cubin
    ptxas = builds["scale"].facts.ptxas
    assert ptxas.registers > 0 and ptxas.spill_store_bytes == 0


def test_cuda_headers_compile(tmp_path):
    source = """
#include <cuda_fp16.h>
#include <cooperative_groups.h>
#include <cuda/pipeline>
namespace cg = cooperative_groups;
extern "C" __global__ void halves(const __half* in, float* out) {
    cg::thread_block block = cg::this_thread_block();
    out[block.thread_rank()] = __half2float(in[block.thread_rank()]);
}
"""
    builds = build_spec(spec_with(tmp_path, {"halves": {"source": source, "entry": "halves"}}), "sm_90")
    assert builds["halves"].symbol == "halves"


def test_defines_and_register_cap_reach_ptxas(tmp_path):
    source = """
extern "C" __global__ void heavy(float* out, int n) {
    float acc[WIDTH];
    #pragma unroll
    for (int i = 0; i < WIDTH; ++i) acc[i] = out[i * n + threadIdx.x];
    float s = 0.f;
    #pragma unroll
    for (int i = 0; i < WIDTH; ++i) s += acc[i] * acc[(i * 7) % WIDTH];
    out[threadIdx.x] = s;
}
"""
    kernels = {
        "free": {"source": source, "entry": "heavy", "defines": {"WIDTH": 96}},
        "capped": {"source": source, "entry": "heavy", "defines": {"WIDTH": 96}, "max_registers": 32},
    }
    builds = build_spec(spec_with(tmp_path, kernels), "sm_90")
    free, capped = builds["free"].facts.ptxas, builds["capped"].facts.ptxas
    assert capped.registers <= 32 < free.registers
    assert capped.spill_store_bytes > 0 and free.spill_store_bytes == 0


def test_compile_error_names_file_and_line(tmp_path):
    kernel_file = tmp_path / "broken.cu"
    kernel_file.write_text(
        'extern "C" __global__ void broken(float* out) {\n    out[0] = undefined_name;\n}\n'
    )
    spec = spec_with(tmp_path, {"broken": {"file": "broken.cu", "entry": "broken"}})
    with pytest.raises(InputError) as error:
        build_spec(spec, "sm_90")
    message = str(error.value)
    assert 'broken.cu(2): error: identifier "undefined_name" is undefined' in message
    assert "does not compile for sm_90" in message


def test_missing_entry_point_lists_what_exists(tmp_path):
    spec = spec_with(
        tmp_path,
        {"k": {"source": 'extern "C" __global__ void real(float* o) { o[0] = 1.f; }', "entry": "imagined"}},
    )
    with pytest.raises(InputError, match=r"no kernel entry point 'imagined' \(it defines: real\)"):
        build_spec(spec, "sm_90")


def test_nvrtc_options_carry_the_choices(tmp_path):
    from ncuverify.build import _unit

    spec = spec_with(
        tmp_path,
        {
            "k": {
                "source": "x",
                "entry": "k",
                "lineinfo": True,
                "std": "c++20",
                "max_registers": 40,
                "defines": {"A": 1, "B": None},
                "flags": ["--use_fast_math"],
            }
        },
    )
    options = nvrtc_options(_unit(spec.path, spec.content.kernels["k"], "sm_90"))
    for expected in [
        "-arch=sm_90",
        "--std=c++20",
        "--ptxas-options=-v",
        "--generate-line-info",
        "--maxrregcount=40",
        "--define-macro=A=1",
        "--define-macro=B",
        "--no-cache",
    ]:
        assert expected in options
    assert options[-1] == "--use_fast_math"
