"""A .cu file compiled whole for `init` and `build`: NVRTC where it compiles, else nvcc, saying why."""

import shutil
from pathlib import Path

import pytest

from ncuverify.build import BuildLimits
from ncuverify.build.built import roots_at
from ncuverify.build.toolkit import find_tool
from ncuverify.build.units import unit_of
from ncuverify.build.whole_source import compile_source, first_error, host_code, problem_line
from ncuverify.errors import InputError
from ncuverify.spec import KernelSpec

NEEDS_NVCC = pytest.mark.skipif(
    find_tool("nvcc") is None or shutil.which("g++") is None, reason="needs nvcc and g++"
)


@pytest.mark.parametrize(
    ("source", "said"),
    [
        ("__global__ void k() {}\nint main() { return 0; }\n", "host code (main at line 2)"),
        (
            "__global__ void k() {}\nvoid go() {\n k<<<1, 1>>>(); }\n",
            "host code (a <<<...>>> launch at line 3)",
        ),
        ("void f(float** p) { cudaMalloc(p, 4); }\n", "host code (a CUDA runtime call at line 1)"),
        ("#include <vector>\n__global__ void k() {}\n", "host code (a host header <vector> at line 1)"),
        ("__global__ void k(int* p) { *p = 1; }\n", None),
    ],
)
def test_host_code_is_named_with_its_line(source, said):
    assert host_code(source) == said


def test_a_failed_compile_is_one_line_with_the_first_error():
    log = "k.cu: does not compile for sm_90:\nk.cu(1): error: a\n  code\nk.cu(2): error: b\n2 errors detected"
    assert first_error(log) == "k.cu: does not compile for sm_90: k.cu(1): error: a (and 1 more errors)"
    assert problem_line(Path("k.cu"), log).startswith("k.cu: does not compile")
    assert problem_line(Path("src/k.cu"), "exists").startswith("src/k.cu: exists")


def _compiled(tmp_path: Path, text: str, compiler: str):
    source = tmp_path / "k.cu"
    source.write_text(text)
    roots = roots_at(tmp_path, BuildLimits())
    kernel = KernelSpec(file="k.cu", match=".")
    return compile_source(
        lambda chosen: unit_of(tmp_path / "k.yaml", "k", kernel, "sm_90", roots, chosen),
        compiler,
        None,
        roots,
        BuildLimits(),
    )


def test_what_nvrtc_compiles_stays_with_nvrtc(tmp_path):
    built = _compiled(tmp_path, "__global__ void k(int* p) { *p = 1; }\n", "auto")
    assert built.unit.compiler == "nvrtc" and built.note is None


@NEEDS_NVCC
def test_host_code_goes_to_nvcc_and_says_why(tmp_path):
    built = _compiled(
        tmp_path, "#include <cstdio>\n__global__ void k(int* p) { *p = 1; }\nint main() {}\n", "auto"
    )
    assert built.unit.compiler == "nvcc"
    assert built.note is not None and built.note.endswith(
        "k.cu: host code (main at line 3): compiled with nvcc"
    )


@NEEDS_NVCC
def test_a_broken_file_gives_nvrtcs_reason_where_it_has_no_host_code(tmp_path):
    with pytest.raises(InputError, match=r"does not compile for sm_90:\n.*undefined_name") as refused:
        _compiled(tmp_path, "__global__ void k(int* p) { *p = undefined_name; }\n", "auto")
    assert "nvcc" not in str(refused.value)


@NEEDS_NVCC
def test_what_nvrtc_refuses_and_nvcc_takes_goes_to_nvcc_with_nvrtcs_reason(tmp_path):
    source = tmp_path / "k.cu"
    source.write_bytes(b"__global__ void k(int* p) { *p = 1; }\n// \xff\n")
    roots = roots_at(tmp_path, BuildLimits())
    kernel = KernelSpec(file="k.cu", match=".")
    built = compile_source(
        lambda chosen: unit_of(tmp_path / "k.yaml", "k", kernel, "sm_90", roots, chosen),
        "auto",
        None,
        roots,
        BuildLimits(),
    )
    assert built.unit.compiler == "nvcc"
    assert built.note is not None
    assert "k.cu: NVRTC refuses it (the byte 0xff at byte offset 41 (line 2)" in built.note
