"""`ncuverify init` on the command line, without a GPU: the file it writes passes `ncuverify lint` and
`ncuverify check --static-only` as written; bad input exits 2 with one line."""

import os

import pytest
import yaml
from cli_invoke import invoke_command

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
    assert "no such folder" in _one_line_refusal("src/ops.cu", "-o", "absent/ops.yaml")
    assert "cannot be read" in _one_line_refusal("src/missing.cu")
    (project / "src" / "host.cu").write_text("__global__ void k() {}\nint main() { k<<<1, 1>>>(); }\n")
    assert _one_line_refusal("src/host.cu").endswith("such a source needs `compiler: nvcc`")
    (project / "src" / "empty.cu").write_text("__device__ int twice(int x) { return 2 * x; }\n")
    assert "src/empty.cu: defines no kernel" in _one_line_refusal("src/empty.cu")
    assert not (project / "absent").exists()
