"""`ncuverify init` on the command line, without a GPU: the file it writes passes `ncuverify lint` and
`ncuverify check --static-only` as written; bad input exits 2 with one line."""

import os
import shutil

import pytest
import yaml
from cli_invoke import invoke_command

from ncuverify.build.toolkit import find_tool
from ncuverify.errors import ExitCode

OPS = """
struct Pair { int a; int b; };
extern "C" __global__ void scale(float* a, float s) { a[threadIdx.x] *= s; }
namespace ns { __global__ void copy(float* out, const float* in) { out[threadIdx.x] = in[threadIdx.x]; } }
template <int N> __global__ void unroll(float* a) { for (int i = 0; i < N; i++) a[threadIdx.x * N + i] += 1; }
template __global__ void unroll<2>(float*);
template __global__ void unroll<8>(float*);
__global__ void with_pair(Pair p, int* out) { out[0] = p.a * p.b; }
__global__ void nothing() {}
extern "C" __global__ void yes(int* a) { a[0] = 1; }
"""


@pytest.fixture
def project(tmp_path, monkeypatch):
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "expectations").mkdir()
    (root / ".ncuverify-root").write_text("")
    (root / "src" / "ops.cu").write_text(OPS)
    monkeypatch.chdir(root)
    return root


def test_the_written_file_passes_lint_and_the_static_check_unchanged(no_gpu, project):
    result = invoke_command("init", "src/ops.cu", "-o", "expectations/ops.yaml")
    assert result.exit_code == ExitCode.OK, result.stdout
    assert result.stdout.strip() == "expectations/ops.yaml: 7 kernels for sm_90"
    written = (project / "expectations" / "ops.yaml").read_text()
    content = yaml.safe_load(written)
    assert set(content["kernels"]) == {
        "scale",
        "ns_copy",
        "unroll_2",
        "unroll_8",
        "with_pair",
        "nothing",
        "yes",
    }
    assert content["kernels"]["unroll_8"] == {"file": "../src/ops.cu", "entry": "unroll<8>"}
    linted = invoke_command("lint", "expectations/ops.yaml")
    assert linted.exit_code == ExitCode.OK, linted.stdout
    checked = invoke_command("check", "--static-only", "expectations/ops.yaml")
    assert checked.exit_code == ExitCode.OK, checked.stdout
    assert "35 passed, 0 failed, 0 errors, 0 skipped" in checked.stdout
    assert (project / "expectations" / "ops.yaml").read_text() == written


def test_a_kernel_that_gets_worse_fails_the_static_check(no_gpu, project):
    assert invoke_command("init", "src/ops.cu", "-o", "expectations/ops.yaml").exit_code == ExitCode.OK
    shared = "__shared__ int s[64]; s[threadIdx.x] = 1; __syncthreads(); a[0] = s[63 - threadIdx.x];"
    worse = OPS.replace("a[0] = 1;", shared)
    (project / "src" / "ops.cu").write_text(worse)
    checked = invoke_command("check", "--static-only", "expectations/ops.yaml")
    assert checked.exit_code == ExitCode.CLAIM_FAILED
    assert "failed yes_shared_static: measured 256, expected <= 0" in checked.stdout


def test_without_an_output_it_prints_the_file_with_paths_from_here(no_gpu, project):
    result = invoke_command("init", "src/ops.cu", "--arch", "sm_80")
    assert result.exit_code == ExitCode.OK
    content = yaml.safe_load(result.stdout)
    assert content["arch"] == "sm_80"
    assert content["kernels"]["scale"] == {"file": "src/ops.cu", "entry": "scale"}
    assert result.stdout.startswith("# yaml-language-server: $schema=schema/expectations.schema.json\n")
    assert sorted(path.name for path in project.iterdir()) == [".ncuverify-root", "expectations", "src"]
    assert list((project / "expectations").iterdir()) == []  # printing writes nothing


def _one_line_refusal(*args: str) -> str:
    result = invoke_command("init", *args)
    assert result.exit_code == ExitCode.BAD_INPUT, result.stdout
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stdout, result.stdout
    return lines[0]


def test_an_existing_file_is_kept_without_force(no_gpu, project):
    out = project / "expectations" / "ops.yaml"
    out.write_text("mine\n")
    assert _one_line_refusal("src/ops.cu", "-o", str(out)) == f"{out}: exists; pass --force to overwrite it"
    assert out.read_text() == "mine\n"
    assert invoke_command("init", "src/ops.cu", "-o", str(out), "--force").exit_code == ExitCode.OK
    assert "kernels:" in out.read_text()


@pytest.mark.parametrize("output", ["src/ops.cu", "src/../src/ops.cu", "hard.cu", "soft.cu", "src/ops.cuh"])
def test_init_never_writes_over_the_source_or_a_file_it_includes_even_with_force(no_gpu, project, output):
    source = project / "src" / "ops.cu"
    source.write_text('#include "ops.cuh"\n' + OPS)
    (project / "src" / "ops.cuh").write_text("#pragma once\n")
    (project / "hard.cu").hardlink_to(source)
    (project / "soft.cu").symlink_to(source)
    before = {path: path.read_bytes() for path in (source, project / "src" / "ops.cuh")}
    said = _one_line_refusal("src/ops.cu", "-o", output, "--force")
    assert said.startswith(f"{output}: is ") and "which init reads; refusing to overwrite it" in said
    assert {path: path.read_bytes() for path in before} == before
    assert (project / "soft.cu").is_symlink() and os.path.samefile(project / "hard.cu", source)


def test_bad_input_exits_2_with_one_line(no_gpu, project):
    (project / "src" / "notes.txt").write_text("hello")
    assert "not a CUDA source (.cu)" in _one_line_refusal("src/notes.txt")
    outside = _one_line_refusal("src/ops.cu", "-o", "../absent/ops.yaml")
    assert outside.startswith("../absent: no such folder, and it would lie outside the project")
    assert "cannot be read" in _one_line_refusal("src/missing.cu")
    (project / "src" / "host.cu").write_text("__global__ void k() {}\nint main() { k<<<1, 1>>>(); }\n")
    said = _one_line_refusal("src/host.cu", "--compiler", "nvrtc")
    assert said.endswith(
        "it holds host code (main at line 2), which NVRTC does not compile: pass --compiler nvcc (or auto)"
    )
    (project / "src" / "empty.cu").write_text("__device__ int twice(int x) { return 2 * x; }\n")
    assert "src/empty.cu: defines no kernel" in _one_line_refusal("src/empty.cu")
    assert not (project.parent / "absent").exists()


NEEDS_NVCC = pytest.mark.skipif(
    find_tool("nvcc") is None or shutil.which("g++") is None, reason="needs nvcc and g++"
)

# A whole program, as most .cu files are: host headers, a host launcher and main().
WHOLE_PROGRAM = """#include <cstdio>
#include <cuda_runtime.h>

__global__ void vecadd(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

void launch(const float* a, const float* b, float* c, int n) { vecadd<<<(n + 255) / 256, 256>>>(a, b, c, n); }

int main() {
    float* a;
    cudaMalloc(&a, 1024 * sizeof(float));
    launch(a, a, a, 1024);
    printf("done\\n");
    return 0;
}
"""
BROKEN = "__global__ void broken(float* a) { a[0] = undefined_name; }\n"


@NEEDS_NVCC
def test_a_whole_program_is_compiled_with_nvcc_and_its_file_passes_as_written(no_gpu, project):
    (project / "src" / "vecadd.cu").write_text(WHOLE_PROGRAM)
    result = invoke_command("init", "src/vecadd.cu", "-o", "expectations/new/vecadd.yaml")
    assert result.exit_code == ExitCode.OK, result.output
    assert result.stdout.strip() == "expectations/new/vecadd.yaml: 1 kernel for sm_90"
    assert "src/vecadd.cu: host code (main at line 11): compiled with nvcc\n" in result.stderr
    written = yaml.safe_load((project / "expectations" / "new" / "vecadd.yaml").read_text())
    assert written["kernels"]["vecadd"] == {
        "file": "../../src/vecadd.cu",
        "entry": "vecadd",
        "compiler": "nvcc",
    }
    linted = invoke_command("lint", "expectations/new/vecadd.yaml")
    assert linted.exit_code == ExitCode.OK, linted.output
    checked = invoke_command("check", "--static-only", "expectations/new/vecadd.yaml")
    assert checked.exit_code == ExitCode.OK, checked.output
    assert "5 passed, 0 failed" in checked.stdout


@NEEDS_NVCC
def test_a_folder_makes_a_file_per_source_and_says_which_cannot_be_built(no_gpu, project):
    (project / "src" / "vecadd.cu").write_text(WHOLE_PROGRAM)
    (project / "src" / "more").mkdir()
    (project / "src" / "more" / "broken.cu").write_text(BROKEN)
    result = invoke_command("init", "src", "-o", "expectations/all")
    assert result.exit_code == ExitCode.OK, result.output
    lines = result.stdout.strip().splitlines()
    assert lines == [
        "expectations/all/ops.yaml: 7 kernels",
        "src/vecadd.cu: host code (main at line 11): compiled with nvcc",
        "expectations/all/vecadd.yaml: 1 kernel",
        'src/more/broken.cu: does not compile for sm_90: src/more/broken.cu(1): error: identifier "undefined_name"'
        " is undefined",
    ]
    written = sorted(path.relative_to(project).as_posix() for path in (project / "expectations").rglob("*"))
    assert written == ["expectations/all", "expectations/all/ops.yaml", "expectations/all/vecadd.yaml"]
    for name in ("ops", "vecadd"):
        linted = invoke_command("lint", f"expectations/all/{name}.yaml")
        assert linted.exit_code == ExitCode.OK, linted.output


def test_a_folder_without_an_output_writes_nothing_and_skips_what_it_should_not_scan(no_gpu, project):
    for skipped in ("build", "third_party", ".hidden", "cmake-build-debug"):
        (project / "src" / skipped).mkdir()
        (project / "src" / skipped / "copy.cu").write_text(BROKEN)
    result = invoke_command("init", "src")
    assert result.exit_code == ExitCode.OK, result.output
    assert result.stdout.strip().splitlines() == [
        "src/: not entered: build, cmake-build-debug, third_party (build outputs and other projects' sources;"
        " name a folder to build it)",
        "src/ops.cu: 7 kernels",
        "nothing written: pass -o FOLDER to write one starter file per source there",
    ]
    assert list((project / "expectations").iterdir()) == []


def test_a_folder_where_nothing_builds_exits_2(no_gpu, project):
    (project / "src" / "ops.cu").write_text(BROKEN)
    result = invoke_command("init", "src", "-o", "expectations")
    assert result.exit_code == ExitCode.BAD_INPUT, result.output
    assert result.stdout.startswith("src/ops.cu: does not compile for sm_90")
    assert list((project / "expectations").iterdir()) == []


def test_the_output_folders_are_made_inside_the_project(no_gpu, project):
    result = invoke_command("init", "src/ops.cu", "-o", "expectations/a/b/ops.yaml")
    assert result.exit_code == ExitCode.OK, result.output
    assert (project / "expectations" / "a" / "b" / "ops.yaml").is_file()
    said = _one_line_refusal("src/ops.cu", "-o", "../away/ops.yaml")
    assert all(marker in said for marker in (".git", "pyproject.toml", ".ncuverify-root"))
    assert not (project.parent / "away").exists()


def test_without_a_gpu_or_arch_it_builds_for_sm_90_and_says_so(no_gpu, project):
    result = invoke_command("init", "src/ops.cu")
    assert result.exit_code == ExitCode.OK, result.output
    assert yaml.safe_load(result.stdout)["arch"] == "sm_90"
    assert result.stderr == "no GPU here: building for sm_90 (pass --arch to choose)\n"
    chosen = invoke_command("init", "src/ops.cu", "--arch", "sm_80")
    assert yaml.safe_load(chosen.stdout)["arch"] == "sm_80" and chosen.stderr == ""
