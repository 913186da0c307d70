"""cmake/NcuVerify.cmake end to end: a CMake project of the test's own builds a kernel library (CMake's
CUDA language, with nvcc from the CUDA wheels) and registers its expectation files with
ncuverify_add_test; ctest builds the library first (the module's fixture), judges it through
`check --binary`, and reports a claim that holds as passed, one that fails as failed, and exit 3 (a
file whose claims all need a GPU, under --static-only) as skipped. No GPU is needed."""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from artifact_builds import _nvcc
from conftest import cmake_tools, ncuverify_script
from junitparser import JUnitXml

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parent.parent


LIBRARY = """namespace ops {
__global__ void copy(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i];
}
}  // namespace ops
"""
PROJECT = f"""cmake_minimum_required(VERSION 3.18)
project(gate LANGUAGES CUDA)
list(APPEND CMAKE_MODULE_PATH "{REPO / "cmake"}")
include(NcuVerify)
add_library(ops SHARED ops.cu)
set_target_properties(ops PROPERTIES CUDA_ARCHITECTURES 90)
enable_testing()
ncuverify_add_test(NAME gate FILES gate/holds.yaml gate/fails.yaml ARGS --static-only
                   BINARY_TARGET ops BINARY_KERNELS library)
ncuverify_add_test(NAME timed FILES gate/profiled.yaml ARGS --static-only)
ncuverify_add_test(NAME gpu FILES gate/profiled.yaml)
"""
CITE = {"document": "d", "section": "1", "figure": "f"}


def _static_claim(expected: int) -> dict:
    """Claims over the library's kernels, on a `binary:` path that is not there: only the target's file,
    given by the module, can be judged."""
    return {
        "arch": "sm_90",
        "kernels": {"library": {"binary": "../build/absent.so", "match": "ops::"}},
        "claims": [
            {
                "id": "no_stack_frame",
                "kernels": "library",
                "metric": "static__stack_frame_bytes",
                "expect": {"equals": expected},
                "cite": CITE,
            }
        ],
    }


PROFILED = {
    "kernels": {"k": {"source": 'extern "C" __global__ void k(float* x) { x[0] = 1.f; }\n', "entry": "k"}},
    "cases": {"c": {"kernel": "k", "grid": 1, "block": 32, "args": [{"buffer": "float32", "count": 32}]}},
    "claims": [
        {
            "id": "fast",
            "case": "c",
            "metric": "gpu__time_duration.sum",
            "expect": {"at_most": 1e9},
            "cite": CITE,
        }
    ],
}


@pytest.fixture(scope="module")
def configured(tmp_path_factory) -> tuple[Path, str]:
    """The project configured in build/ (not built: ctest builds it), and the ctest executable."""
    tools, nvcc = cmake_tools(), _nvcc()
    if tools is None or nvcc is None or shutil.which("g++") is None:
        pytest.skip("needs cmake and ctest (the machine's or the cmake wheel's), nvcc and g++")
    cmake, ctest = tools
    project = tmp_path_factory.mktemp("cmake") / "project"
    (project / "gate").mkdir(parents=True)
    (project / ".ncuverify-root").touch()
    (project / "ops.cu").write_text(LIBRARY)
    (project / "CMakeLists.txt").write_text(PROJECT)
    (project / "gate" / "holds.yaml").write_text(yaml.safe_dump(_static_claim(0)))
    (project / "gate" / "fails.yaml").write_text(yaml.safe_dump(_static_claim(8)))
    (project / "gate" / "profiled.yaml").write_text(yaml.safe_dump(PROFILED))
    executable = ncuverify_script(project.parent, project.parent / "calls.log")
    build = project / "build"
    subprocess.run(
        [cmake, "-S", str(project), "-B", str(build), f"-DCMAKE_CUDA_COMPILER={nvcc}",
         f"-DNCUVERIFY_EXECUTABLE={executable}"],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    return build, ctest


def _ctest(configured: tuple[Path, str], *args: str) -> tuple[int, dict[str, str], str]:
    """ctest's exit code, each test's status from its JUnit report, and its output."""
    build, ctest = configured
    report = build / "ctest.xml"
    ran = subprocess.run(
        [ctest, "--output-junit", str(report), "--output-on-failure", *args],
        cwd=build, capture_output=True, text=True, timeout=600, env={**os.environ, "NO_COLOR": "1"},
    )  # fmt: skip
    statuses = {}
    for suite in JUnitXml.fromfile(str(report)):  # ctest writes one <testsuite>
        for case in suite:
            # a failure, an error or a skip, as CI reads the report; none: passed
            statuses[case.name] = type(case.result[0]).__name__.lower() if case.result else "passed"
    return ran.returncode, statuses, ran.stdout + ran.stderr


def test_a_claim_that_holds_passes_after_the_build(configured):
    code, statuses, output = _ctest(configured, "-R", "holds")
    assert code == 0, output
    assert statuses == {"gate.build.ops": "passed", "gate.holds": "passed"}, output
    assert (configured[0] / "libops.so").is_file()  # built by the fixture, not by the test


def test_a_failing_claim_fails_ctest_and_exit_3_is_skipped(configured):
    code, statuses, output = _ctest(configured, "-E", "^gpu[.]")  # gpu.*: listed below, not run
    assert code != 0
    assert statuses["gate.holds"] == "passed", output
    assert statuses["gate.fails"] == "failure", output
    assert "fails.yaml: 0 passed, 1 failed" in output  # a claim failed (exit 1), not a bad input
    assert statuses["timed.profiled"] == "skipped", output
    assert "timed.profiled" in output.split("did not run:")[1]


def test_the_tests_ask_for_a_gpu_unless_static_only(configured):
    build, ctest = configured
    listed = subprocess.run(
        [ctest, "--show-only=json-v1"], cwd=build, capture_output=True, text=True, check=True, timeout=60
    ).stdout
    tests = {test["name"]: test for test in yaml.safe_load(listed)["tests"]}
    properties = {p["name"]: p["value"] for p in tests["gate.holds"]["properties"]}
    assert properties["SKIP_RETURN_CODE"] == 3
    assert "RESOURCE_GROUPS" not in properties  # --static-only needs no GPU
    assert properties["FIXTURES_REQUIRED"] == ["ncuverify.build.ops"]
    on_gpu = {p["name"]: p["value"] for p in tests["gpu.profiled"]["properties"]}
    assert on_gpu["RESOURCE_GROUPS"] == [{"requirements": [{".type": "gpus", "slots": 1}]}]
    command = tests["gate.holds"]["command"]
    assert "--binary" in command
    assert f"library={build / 'libops.so'}" in command


def _resources(build: Path) -> Path:
    """A ctest resource spec: one GPU, CUDA device 0, one test on it at a time."""
    resources = build / "resources.json"
    resources.write_text(
        json.dumps({"version": {"major": 1, "minor": 0}, "local": [{"gpus": [{"id": "0", "slots": 1}]}]})
    )
    return resources


def test_a_profiled_test_runs_on_the_gpu_ctest_gives_it(configured):
    build = configured[0]
    calls = build.parent.parent / "calls.log"
    for spec, expected in (([], ""), (["--resource-spec-file", str(_resources(build))], "--gpus 0 ")):
        calls.unlink(missing_ok=True)
        _, statuses, output = _ctest(configured, "-R", "^gpu[.]", *spec)
        assert statuses["gpu.profiled"] in ("skipped", "passed"), output  # exit 3 comes through sh
        (call,) = calls.read_text().splitlines()
        assert call == f"check {expected}{build.parent / 'gate' / 'profiled.yaml'}"


@pytest.mark.gpu
def test_on_a_gpu_the_profiled_claim_holds_with_the_gpu_ctest_gives(configured, gpu_environment):
    resources = _resources(configured[0])
    code, statuses, output = _ctest(configured, "-R", "^gpu[.]", "--resource-spec-file", str(resources))
    assert code == 0, output
    assert statuses == {"gpu.profiled": "passed"}, output
