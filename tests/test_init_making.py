"""Starter files made from a source of the tests' own, compiled with NVRTC: every kernel with its
entry, a case with an argument per parameter, static claims at the build's values; and the refusals."""

from datetime import date
from pathlib import Path

import pytest
import yaml

from ncuverify.build import build_spec
from ncuverify.build.params import check_arguments
from ncuverify.errors import InputError
from ncuverify.init import starter_file
from ncuverify.spec import load

KERNELS = """
struct Pair { int a; int b; };
extern "C" __global__ void scale(float* a, float s) { a[threadIdx.x] *= s; }
namespace ns {
__global__ void copy(float* out, const float* __restrict__ in, unsigned n) {
    if (threadIdx.x < n) out[threadIdx.x] = in[threadIdx.x];
}
}
template <typename T> __global__ void stride(T* a, int n, size_t m, double d) { a[threadIdx.x * n + m] = (T)d; }
template __global__ void stride<float>(float*, int, size_t, double);
template __global__ void stride<int>(int*, int, size_t, double);
__global__ void with_pair(Pair p, int* out) { out[0] = p.a + p.b; }
__global__ void nothing() {}
__global__ void tiled(float* out) {
    __shared__ float tile[256];
    tile[threadIdx.x] = threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = tile[255 - threadIdx.x];
}
"""
TODAY = date(2025, 3, 14)


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "expectations").mkdir()
    (root / ".ncuverify-root").write_text("")
    return root


def _made(project: Path, source: str, name: str = "ops.cu", compiler: str = "auto"):
    (project / "src" / name).write_text(source)
    out = project / "expectations" / "ops.yaml"
    made = starter_file(project / "src" / name, out, "sm_90", TODAY, compiler=compiler)
    out.write_text(made.text)
    return made, out, yaml.safe_load(made.text)


@pytest.mark.slow
def test_every_kernel_gets_an_entry_a_case_and_static_claims_that_hold(project):
    made, out, content = _made(project, KERNELS)
    assert made.text.startswith("# yaml-language-server: $schema=../schema/expectations.schema.json\n")
    assert content["arch"] == "sm_90"
    entries = {key: kernel["entry"] for key, kernel in content["kernels"].items()}
    assert entries == {
        "nothing": "nothing",
        "ns_copy": "ns::copy",
        "scale": "scale",
        "stride_float": "stride<float>",
        "stride_int": "stride<int>",
        "tiled": "tiled",
        "with_pair": "with_pair",
    }
    assert {kernel["file"] for kernel in content["kernels"].values()} == {"../src/ops.cu"}
    cases = content["cases"]
    assert set(cases) == set(entries)
    assert all(case["grid"] == 1 and case["block"] == 32 for case in cases.values())
    assert cases["ns_copy"]["args"] == [
        {"buffer": "float32", "count": 32},
        {"buffer": "float32", "count": 32},
        {"uint32": 0},
    ]
    assert cases["stride_int"]["args"] == [
        {"buffer": "int32", "count": 32},
        {"int32": 0},
        {"uint64": 0},
        {"float64": 0},
    ]
    assert cases["with_pair"]["args"] == [{"uint64": 0}, {"buffer": "int32", "count": 32}]
    assert cases["nothing"]["args"] == []
    # The file loads, builds, and its arguments fit the cubin's parameters, as a run checks them.
    spec = load(out)
    builds = build_spec(spec, "sm_90")
    check_arguments(spec, builds)
    claims = {claim["id"]: claim for claim in content["claims"]}
    assert len(claims) == 5 * len(entries)
    for key, build in builds.items():
        facts = build.facts.metrics()
        assert claims[f"{key}_registers"]["expect"] == {"at_most": facts["static__registers_per_thread"]}
        assert claims[f"{key}_spill_stores"]["expect"] == {"equals": facts["static__spill_store_bytes"]}
        assert claims[f"{key}_spill_loads"]["expect"] == {"equals": facts["static__spill_load_bytes"]}
        assert claims[f"{key}_stack_frame"]["expect"] == {"at_most": facts["static__stack_frame_bytes"]}
        assert claims[f"{key}_shared_static"]["expect"] == {"at_most": facts["static__shared_static_bytes"]}
    assert claims["tiled_shared_static"]["expect"] == {"at_most": 1024}  # 256 floats
    registers = builds["scale"].facts.ptxas.registers
    # the kernel's own contract: no document to cite, what it holds to and since when
    assert "cite" not in claims["scale_registers"]
    assert claims["scale_registers"]["why"] == (
        f"{registers} registers per thread, recorded on 2025-03-14 for sm_90 by ncuverify init"
    )


@pytest.mark.slow
def test_placeholders_say_what_to_replace(project):
    made, _, _ = _made(project, KERNELS)
    lines = made.text.splitlines()
    assert "      - {uint64: 0}  # replace: parameter 0: Pair" in lines
    assert "      - {buffer: float32, count: 32}  # replace: parameter 0: 8 bytes" in lines  # extern "C"
    assert "      - {buffer: float32, count: 32}  # parameter 1: float const*" in lines
    assert any("edit each case" in line.lower() for line in lines)


HOSTILE = (
    'extern "C" __global__ void yes(float* a) { a[0] = 1; }\n'
    'extern "C" __global__ void null() {}\n'
    'extern "C" __global__ void True() {}\n'
    'extern "C" __global__ void ' + "L" * 4000 + "(int* a) { a[0] = 2; }\n"
    "__global__ void " + "m" * 4000 + "(float* a) { a[0] = 3; }\n"
    "namespace a { __global__ void b(float* x) { x[0] = 4; } }\n"
    "__global__ void a_b(float* x) { x[0] = 5; }\n"
    "__global__ void over(float* x) { x[0] = 6; }\n"
    "__global__ void over(int* x) { x[0] = 7; }\n"
    "namespace { __global__ void hidden(float* x) { x[0] = 8; } }\n"
    "__global__ void halves(short h, int* x) { x[0] = h; }\n"
    "struct Wide { double a, b; };\n"
    "__global__ void wide(Wide w, double* x) { x[0] = w.a + w.b; }\n"
)


@pytest.mark.slow
def test_hostile_names_are_quoted_cut_told_apart_or_left_out_with_the_reason(project):
    made, out, content = _made(project, HOSTILE)
    entries = {key: kernel["entry"] for key, kernel in content["kernels"].items()}
    assert entries["yes"] == "yes" and entries["null"] == "null" and entries["True"] == "True"
    assert '  "yes":' in made.text and '    entry: "null"' in made.text  # quoted: YAML would misread them
    assert {entries["a_b"], entries["a_b_2"]} == {"a::b", "a_b"}
    assert entries["L" * 100] == "L" * 4000
    # A C++ name the demangler gives up on stays its mangled symbol, which an entry takes as it is.
    assert entries["Z4000" + "m" * 95] == "_Z4000" + "m" * 4000 + "Pf"
    assert "over" not in entries and "hidden" not in "".join(entries)
    assert "  # not here: over: overloaded (2 kernels share the name)" in made.text
    assert "  # not here: (anonymous namespace)::hidden: an entry cannot name it" in made.text
    # A 2-byte short has its scalar; a 16-byte struct by value gets a struct of 16 zero bytes, marked to
    # be replaced, which the argument check passes.
    assert content["cases"]["halves"]["args"] == [{"int16": 0}, {"buffer": "int32", "count": 32}]
    assert content["cases"]["wide"]["args"][0] == {
        "struct": [{"array": {"type": "uint64", "values": [0, 0]}}]
    }
    assert "# replace: parameter 0: Wide" in made.text
    assert any(claim["case"] == "wide" for claim in content["claims"])
    check_arguments(load(out), build_spec(load(out), "sm_90"))


def test_a_source_that_is_not_a_cu_file_is_refused(project):
    (project / "src" / "ops.cuh").write_text(KERNELS)
    with pytest.raises(InputError, match=r"ops.cuh: not a CUDA source \(.cu\)"):
        starter_file(project / "src" / "ops.cuh", project / "ops.yaml", "sm_90", TODAY)


def test_a_source_that_does_not_compile_gives_nvrtcs_first_error_and_the_nvcc_hint_for_host_code(project):
    with pytest.raises(InputError) as raised:
        _made(
            project,
            "#include <cstdio>\n__global__ void k() {}\nint main() { k<<<1, 1>>>(); }\n",
            compiler="nvrtc",
        )
    message = str(raised.value)
    assert "\n" not in message
    assert "ops.cu: does not compile for sm_90: " in message and "error" in message
    assert message.endswith(
        "it holds host code (main at line 3), which NVRTC does not compile: pass --compiler nvcc (or auto)"
    )
    with pytest.raises(InputError) as raised:
        _made(project, "__global__ void k() { undeclared = 1; }\n", "bad.cu")
    assert 'identifier "undeclared" is undefined' in str(raised.value)
    assert "nvcc" not in str(raised.value)


def test_a_source_without_kernels_is_refused(project):
    with pytest.raises(InputError, match=r"ops\.cu: defines no kernel"):
        _made(project, "__device__ float twice(float x) { return 2 * x; }\n")


def test_a_source_with_no_kernel_a_case_can_launch_is_refused(project):
    with pytest.raises(InputError, match="none of its 1 kernels can be named by an entry and launched"):
        _made(project, "namespace { __global__ void k(float* x) {} }\n")


def test_a_source_outside_the_files_project_is_refused(project, tmp_path):
    (tmp_path / "elsewhere.cu").write_text(KERNELS)
    with pytest.raises(InputError, match="lies outside the project of"):
        starter_file(tmp_path / "elsewhere.cu", project / "expectations" / "ops.yaml", "sm_90", TODAY)
