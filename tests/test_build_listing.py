"""`ncuverify build PATH` on .cu files, artifacts and folders; `--json`; `--diff`, end to end."""

import copy
import json
import math
import shutil

import pytest
from artifact_builds import artifacts  # noqa: F401 (a fixture)
from cli_invoke import invoke_command

from ncuverify.build.toolkit import find_tool
from ncuverify.errors import ExitCode


@pytest.mark.slow
def test_an_artifact_and_a_source_are_listed_and_written(artifacts, no_gpu, tmp_path):  # noqa: F811
    out = tmp_path / "build.json"
    source = artifacts("kernels.cubin").parent / "kernels.cu"
    result = invoke_command(
        "build", "--arch", "sm_90", str(artifacts("kernels.fatbin")), str(source), "--json", str(out)
    )
    assert result.exit_code == ExitCode.OK, result.output
    assert "kernels.fatbin: 5 kernels" in result.output and "kernels.cu: 5 kernels" in result.output
    listed = json.loads(out.read_text())["kernels"]
    assert {(k["name"], k["arch"]) for k in listed} >= {("stride<float>", "sm_90")}
    from_source = next(k for k in listed if k["source"].endswith(".cu") and k["name"] == "stride<float>")
    assert from_source["facts"]["static__barriers"] == 1


def test_a_diff_of_a_build_against_itself_changes_nothing(artifacts, no_gpu):  # noqa: F811
    path = str(artifacts("kernels.o"))
    result = invoke_command("build", "--diff", "--fail-on-change", path, path)
    assert result.exit_code == ExitCode.OK, result.output
    assert "0 changed, 0 added, 0 removed, 5 unchanged" in result.output


def test_a_diff_with_a_kernel_added_fails_on_change(artifacts, no_gpu, tmp_path):  # noqa: F811
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps({"format": "ncuverify-build", "version": 1, "kernels": []}))
    result = invoke_command("build", "--diff", "--fail-on-change", str(empty), str(artifacts("kernels.o")))
    assert result.exit_code == ExitCode.CLAIM_FAILED, result.output
    assert "added stride<float> (sm_90)" in result.output


def test_nothing_to_build_is_bad_input_and_a_source_without_arch_is_built_for_sm_90(no_gpu, tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "k.cu").write_text("__global__ void k() {}\n")
    result = invoke_command("build", str(tmp_path / "empty"), str(tmp_path / "k.cu"))
    assert result.exit_code == ExitCode.BAD_INPUT, result.output
    assert "nothing to build in this folder" in result.output and "Traceback" not in result.output
    assert result.output.startswith("no GPU here: building for sm_90 (pass --arch to choose)\n")
    assert f"{tmp_path / 'k.cu'}: 1 kernel" in result.output
    built = invoke_command("build", str(tmp_path / "k.cu"), "--json", "-")
    assert [kernel["arch"] for kernel in json.loads(built.stdout)["kernels"]] == ["sm_90"]


GOOD = 'extern "C" __global__ void scale(float* a, float s) { a[threadIdx.x] *= s; }\n'
WHOLE_PROGRAM = """#include <cstdio>
__global__ void vecadd(const float* a, float* c) { c[threadIdx.x] = a[threadIdx.x]; }
void launch(const float* a, float* c) { vecadd<<<1, 32>>>(a, c); }
int main() { launch(nullptr, nullptr); printf("done\\n"); return 0; }
"""
BROKEN = "__global__ void broken(float* a) { a[0] = undefined_name; }\n"
NEEDS_NVCC = pytest.mark.skipif(
    find_tool("nvcc") is None or shutil.which("g++") is None, reason="needs nvcc and g++"
)


@NEEDS_NVCC
def test_a_folder_lists_what_builds_and_says_in_one_line_what_does_not(no_gpu, tmp_path):
    (tmp_path / "good.cu").write_text(GOOD)
    (tmp_path / "host.cu").write_text(WHOLE_PROGRAM)
    (tmp_path / "broken.cu").write_text(BROKEN)
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "old.cu").write_text(BROKEN)
    result = invoke_command("build", "--arch", "sm_90", str(tmp_path), "--json", str(tmp_path / "out.json"))
    assert result.exit_code == ExitCode.OK, result.output
    lines = result.output.splitlines()
    assert lines[:3] == [
        f"{tmp_path}/: not entered: build (build outputs and other projects' sources; name a folder to build it)",
        f"{tmp_path / 'broken.cu'}: does not compile for sm_90: {tmp_path / 'broken.cu'}(1): error:"
        ' identifier "undefined_name" is undefined',
        f"{tmp_path / 'host.cu'}: host code (main at line 4): compiled with nvcc",
    ]
    listed = json.loads((tmp_path / "out.json").read_text())["kernels"]
    assert sorted(kernel["name"] for kernel in listed) == ["scale", "vecadd"]


def test_a_folder_where_nothing_builds_is_bad_input(no_gpu, tmp_path):
    (tmp_path / "broken.cu").write_text(BROKEN)
    result = invoke_command("build", "--arch", "sm_90", str(tmp_path))
    assert result.exit_code == ExitCode.BAD_INPUT, result.output
    assert "broken.cu(1): error: identifier" in result.output
    assert f"{tmp_path}/: no file in it could be built (each is said above)" in result.output


def test_nvrtc_asked_for_says_how_to_build_host_code(no_gpu, tmp_path):
    (tmp_path / "host.cu").write_text(WHOLE_PROGRAM)
    result = invoke_command("build", "--arch", "sm_90", "--compiler", "nvrtc", str(tmp_path / "host.cu"))
    assert result.exit_code == ExitCode.BAD_INPUT, result.output
    assert (
        "it holds host code (main at line 4), which NVRTC does not compile: pass --compiler nvcc"
        in " ".join(result.output.split())
    )
    refused = invoke_command("build", "--compiler", "gcc", str(tmp_path / "host.cu"))
    assert refused.exit_code == ExitCode.BAD_INPUT and "give one of auto, nvrtc, nvcc" in refused.output


def _listing(artifacts, tmp_path):  # noqa: F811
    """The `build --json` listing of a real build, as a document to tamper with."""
    out = tmp_path / "old.json"
    result = invoke_command("build", str(artifacts("kernels.o")), "--json", str(out))
    assert result.exit_code == ExitCode.OK, result.output
    return out, json.loads(out.read_text())


def _diff_against(old, tmp_path, document):
    new = tmp_path / "new.json"
    new.write_text(json.dumps(document))  # Python writes NaN and infinities as NaN, Infinity
    return new, invoke_command("build", "--diff", "--fail-on-change", str(old), str(new))


@pytest.mark.parametrize("number", [math.nan, -math.inf])
def test_a_diff_refuses_a_fact_that_is_not_a_finite_number(artifacts, no_gpu, tmp_path, number):  # noqa: F811
    old, document = _listing(artifacts, tmp_path)
    document["kernels"][1]["facts"]["static__registers_per_thread"] = number
    new, result = _diff_against(old, tmp_path, document)
    assert result.exit_code == ExitCode.BAD_INPUT, result.output
    name = document["kernels"][1]["name"]
    assert f"{new}: kernels[1] ({name}, sm_90): facts: static__registers_per_thread is" in result.output
    assert "not a finite number" in result.output and "Traceback" not in result.output


def test_a_diff_refuses_a_kernel_listed_again_with_other_facts(artifacts, no_gpu, tmp_path):  # noqa: F811
    old, document = _listing(artifacts, tmp_path)
    grown = copy.deepcopy(document["kernels"][0])
    grown["facts"]["static__registers_per_thread"] += 100
    document["kernels"].append(grown)
    new, result = _diff_against(old, tmp_path, document)
    assert result.exit_code == ExitCode.BAD_INPUT, result.output
    assert result.output.count("\n") == 1, result.output
    assert f"{new}: kernels[5] ({grown['name']}, sm_90," in result.output
    assert "listed again with other facts or opcodes than kernels[0]" in result.output


def test_a_diff_refuses_a_fact_given_twice(artifacts, no_gpu, tmp_path):  # noqa: F811
    old, document = _listing(artifacts, tmp_path)
    text = json.dumps(document).replace(
        '"static__registers_per_thread": ',
        '"static__registers_per_thread": 999, "static__registers_per_thread": ',
        1,
    )
    new = tmp_path / "new.json"
    new.write_text(text)
    result = invoke_command("build", "--diff", "--fail-on-change", str(new), str(old))
    assert result.exit_code == ExitCode.BAD_INPUT, result.output
    assert f"{new}: kernels[0] (" in result.output
    assert "facts: 'static__registers_per_thread' is given twice" in result.output


def test_a_diff_compares_a_kernel_listed_twice_alike_once(artifacts, no_gpu, tmp_path):  # noqa: F811
    # Two copies of one library in a folder list each kernel twice, alike.
    old, document = _listing(artifacts, tmp_path)
    document["kernels"] += copy.deepcopy(document["kernels"])
    _, result = _diff_against(old, tmp_path, document)
    assert result.exit_code == ExitCode.OK, result.output
    assert "0 changed, 0 added, 0 removed, 5 unchanged" in result.output
