"""Kernel sets: every kernel a `match:` entry selects, built with NVRTC and named as C++ names them."""

import re

import pytest
from build_projects import spec_with

from ncuverify.build.inventory import build_sets
from ncuverify.errors import InputError
from ncuverify.spec import load

OPS = """
template <int N> __global__ void axpy_gemm(float* a, const float* b) {
    float acc[N];
    for (int i = 0; i < N; i++) acc[i] = b[threadIdx.x + i];
    for (int i = 0; i < N; i++) a[threadIdx.x] += acc[i];
}
template __global__ void axpy_gemm<4>(float*, const float*);
template __global__ void axpy_gemm<64>(float*, const float*);
namespace ns { __global__ void copy(float* a) { a[threadIdx.x] = 1; } }
extern "C" __global__ void scale(float* a) { a[threadIdx.x] *= 2; }
"""


def _spec(tmp_path, **sets):
    (tmp_path / "ops.cu").write_text(OPS)
    kernels = {"one": {"file": "ops.cu", "entry": "scale"}}
    kernels |= {key: {"file": "ops.cu", "match": pattern} for key, pattern in sets.items()}
    return spec_with(tmp_path, kernels)


def test_a_set_holds_every_kernel_its_pattern_matches_by_demangled_name(tmp_path):
    sets = build_sets(_spec(tmp_path, gemms="_gemm", every="."), "sm_90")
    gemms = sets["gemms"].kernels
    assert [k.name for k in gemms] == ["axpy_gemm<4>", "axpy_gemm<64>"]
    assert [k.symbol for k in gemms] == ["_Z9axpy_gemmILi4EEvPfPKf", "_Z9axpy_gemmILi64EEvPfPKf"]
    assert gemms[0].signature == "void axpy_gemm<4>(float*, float const*)"
    assert gemms[1].facts.ptxas.registers > gemms[0].facts.ptxas.registers  # 64 values held, not 4
    assert all(k.arch == "sm_90" for k in gemms)
    assert [k.name for k in sets["every"].kernels] == ["axpy_gemm<4>", "axpy_gemm<64>", "ns::copy", "scale"]


def test_a_pattern_may_name_the_mangled_symbol_too(tmp_path):
    sets = build_sets(_spec(tmp_path, copies="^_ZN2ns"), "sm_90")
    assert [k.name for k in sets["copies"].kernels] == ["ns::copy"]


def test_a_set_that_selects_nothing_says_what_the_source_defines(tmp_path):
    with pytest.raises(InputError) as raised:
        build_sets(_spec(tmp_path, typo="_gmem"), "sm_90")
    assert "kernels.typo.match: '_gmem' matches none of the 4 kernels of" in str(raised.value)
    assert "(it defines: axpy_gemm<4>, axpy_gemm<64>, ns::copy, scale)" in str(raised.value)


def test_entries_and_sets_are_built_apart(tmp_path):
    from ncuverify.build import build_spec

    spec = _spec(tmp_path, gemms="_gemm")
    assert set(build_spec(spec, "sm_90")) == {"one"}
    assert set(build_sets(spec, "sm_90")) == {"gemms"}


def test_a_case_cannot_launch_a_set(tmp_path):
    (tmp_path / "ops.cu").write_text(OPS)
    (tmp_path / "k.yaml").write_text(
        "kernels:\n  gemms: {file: ops.cu, match: _gemm}\n"
        "cases:\n  c: {kernel: gemms, grid: 1, block: 32}\n"
        "claims:\n  - {id: x, case: c, metric: m.sum, expect: {equals: 1},"
        " cite: {document: d, section: '1', figure: f}}\n"
    )
    with pytest.raises(InputError, match="kernel 'gemms' is every kernel its 'match' selects"):
        load(tmp_path / "k.yaml")


@pytest.mark.parametrize(
    ("kernel", "message"),
    [
        ({"file": "ops.cu"}, "give exactly one of 'entry' (one kernel) or 'match'"),
        ({"file": "ops.cu", "entry": "scale", "match": "x"}, "give exactly one of 'entry'"),
        ({"file": "ops.cu", "match": "(a"}, "kernel pattern '(a' is not a regular expression"),
        ({"file": "ops.cu", "match": "(a)\\1"}, "kernel pattern '(a)\\1' is not supported"),
    ],
)
def test_set_entries_are_checked_when_loaded(tmp_path, kernel, message):
    with pytest.raises(InputError, match=re.escape(message)):
        spec_with(tmp_path, {"k": {"file": "ops.cu", "entry": "scale"}, "s": kernel})


def test_a_set_of_a_whole_program_is_built_with_nvcc(tmp_path):
    """Host code beside the kernels: nvcc builds it as it is, and the set holds its kernels."""
    from ncuverify.build.host import host_toolchain

    try:
        host_toolchain()
    except InputError as missing:
        pytest.skip(f"no nvcc or host compiler here: {missing}")
    (tmp_path / "ops.cu").write_text("#include <cstdio>\n" + OPS + 'int main() { std::printf("hi\\n"); }\n')
    kernels = {
        "one": {"file": "ops.cu", "entry": "scale", "compiler": "nvcc"},
        "gemms": {"file": "ops.cu", "match": "_gemm", "compiler": "nvcc"},
    }
    sets = build_sets(spec_with(tmp_path, kernels), "sm_90")
    assert [k.name for k in sets["gemms"].kernels] == ["axpy_gemm<4>", "axpy_gemm<64>"]
