"""Measurement keys: each case's key changes with everything that can change its figures (its kernel's
code, its launch, the steps before it, its metrics, the GPU and tools, a program's files), and not with
a comment that only moves the kernel's lines."""

from dataclasses import replace
from pathlib import Path

import yaml
from conftest import COMPILE_CACHE

from ncuverify.build import build_spec
from ncuverify.profile.measurement_keys import IDENTITY_FIELDS, code_digest, gpu_identity, measurement_keys
from ncuverify.profile.plan import FileCases
from ncuverify.provenance import Provenance
from ncuverify.spec import load

SCALE = """extern "C" __global__ void scale(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= 2.0f;
}
"""
# the same kernel, its lines moved by comments: with -lineinfo (the default) only its line table differs
COMMENTED = "// scales x in place\n// (a comment that moves every line after it)\n" + SCALE.replace(
    "x[i] *= 2.0f;", "x[i] *= 2.0f;  // doubled"
)
CHANGED = SCALE.replace("2.0f", "3.0f")
COPY = 'extern "C" __global__ void copy(const float* a, float* b) { b[threadIdx.x] = a[threadIdx.x]; }\n'
TIME = "gpu__time_duration.sum"
SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
IDENTITY = {
    "gpu": "NVIDIA H200",
    "arch": "sm_90",
    "nvidia_driver": "580.159.04",
    "cuda_driver": "13.0",
    "ncu_version": "2025.3.1.0",
    "clock_control": "none",
    "cache_control": "all",
    "ncuverify_version": "0.1.0",
}


def claim(case: str, metric: str = TIME, number: int = 0) -> dict:
    return {
        "id": f"c{number}",
        "case": case,
        "metric": metric,
        "expect": {"at_least": 0},
        "cite": {"document": "d", "section": "1", "figure": "f"},
    }


def project(
    folder: Path, source: str = SCALE, grid: int = 4, metric: str = TIME, script: str = ""
) -> FileCases:
    """A project of one file: kernel scale's case `one`, a sequence `pair` of two copy steps, a program
    case `run`, each read by a claim; built for sm_90."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / ".ncuverify-root").write_text("")
    (folder / "scale.cu").write_text(source)
    (folder / "add.py").write_text(script or "print('adding')\n")
    copy_step = {"kernel": "copy", "grid": 1, "block": 32}
    content = {
        "arch": "sm_90",
        "kernels": {
            "scale": {"file": "scale.cu", "entry": "scale"},
            "copy": {"source": COPY, "entry": "copy"},
        },
        "cases": {
            "one": {
                "kernel": "scale",
                "grid": grid,
                "block": 32,
                "args": [{"buffer": "float32", "count": 128}, {"int32": 128}],
            },
            "pair": {
                "steps": [
                    {
                        **copy_step,
                        "args": [
                            {"buffer": "float32", "count": 32, "fill": "iota"},
                            {"buffer": "float32", "count": 32, "name": "mid"},
                        ],
                    },
                    {**copy_step, "args": [{"use": "mid"}, {"buffer": "float32", "count": 32}]},
                ]
            },
            "run": {"program": {"command": ["python3", "add.py"]}, "kernel": "add"},
        },
        "claims": [claim("one", metric, 0), claim("pair#2", TIME, 1), claim("run", TIME, 2)],
    }
    path = folder / "e.yaml"
    path.write_text(yaml.safe_dump(content))
    spec = load(path)
    return FileCases("e.yaml", spec, build_spec(spec, "sm_90", COMPILE_CACHE), list(spec.content.claims))


def keys_of(files: FileCases, identity: dict = IDENTITY) -> dict[str, str]:
    return measurement_keys([files], identity)


def test_every_profiled_case_has_a_key_a_step_with_the_steps_before_it_and_a_program_case(tmp_path):
    keys = keys_of(project(tmp_path))
    assert sorted(keys) == ["e.yaml::one", "e.yaml::pair#1", "e.yaml::pair#2", "e.yaml::run"]
    assert keys == keys_of(project(tmp_path / "elsewhere")), "the same inputs in another folder"


def test_a_comment_that_moves_the_lines_changes_the_cubin_but_not_the_key(tmp_path):
    plain, commented = project(tmp_path / "a"), project(tmp_path / "b", COMMENTED)
    plain_cubin, commented_cubin = plain.builds["scale"].cubin, commented.builds["scale"].cubin
    assert plain_cubin != commented_cubin, "NVRTC's line table (-lineinfo) follows the lines"
    assert code_digest(plain_cubin) == code_digest(commented_cubin)
    assert keys_of(plain) == keys_of(commented)


def test_a_change_of_the_code_changes_that_kernel_s_cases_keys_alone(tmp_path):
    before, after = keys_of(project(tmp_path / "a")), keys_of(project(tmp_path / "b", CHANGED))
    assert [name for name in before if before[name] != after[name]] == ["e.yaml::one"]


def test_the_launch_and_the_metrics_asked_change_the_key(tmp_path):
    before = keys_of(project(tmp_path / "a"))
    regridded = keys_of(project(tmp_path / "b", grid=8))
    assert [name for name in before if before[name] != regridded[name]] == ["e.yaml::one"]
    other_metric = keys_of(project(tmp_path / "c", metric=SECTORS))
    assert [name for name in before if before[name] != other_metric[name]] == ["e.yaml::one"]


def test_a_program_s_file_changes_its_key(tmp_path):
    before = keys_of(project(tmp_path / "a"))
    edited = keys_of(project(tmp_path / "b", script="print('adding twice')\n"))
    assert [name for name in before if before[name] != edited[name]] == ["e.yaml::run"]


def test_a_step_s_key_follows_the_steps_before_it(tmp_path):
    files = project(tmp_path)
    before = keys_of(files)
    first = files.spec.content.cases["pair#1"]
    cases = {**files.spec.content.cases, "pair#1": first.model_copy(update={"grid": (2, 1, 1)})}
    spec = replace(files.spec, content=files.spec.content.model_copy(update={"cases": cases}))
    after = keys_of(replace(files, spec=spec))
    assert before["e.yaml::pair#1"] != after["e.yaml::pair#1"]
    assert before["e.yaml::pair#2"] != after["e.yaml::pair#2"], "its input came from the step before"
    assert before["e.yaml::one"] == after["e.yaml::one"]


def test_each_field_of_the_gpu_and_tools_changes_every_key(tmp_path):
    files = project(tmp_path)
    before = keys_of(files)
    for name in IDENTITY_FIELDS:
        after = keys_of(files, {**IDENTITY, name: "other"})
        assert all(before[case] != after[case] for case in before), name


def test_no_keys_where_ncu_s_version_is_unknown(tmp_path):
    identity = {**IDENTITY, "ncu_version": None}
    provenance = Provenance(recorded_at="now", nvrtc_version="13.0", ncu_command=[], **identity)  # type: ignore[arg-type]
    assert gpu_identity(provenance) is None
    assert measurement_keys([project(tmp_path)], gpu_identity(provenance)) == {}
    assert gpu_identity(replace(provenance, ncu_version="2025.3.1.0")) == IDENTITY


def test_a_cubin_that_is_no_elf_is_digested_whole():
    assert code_digest(b"not an elf") != code_digest(b"not an elf either")
    assert code_digest(b"not an elf").startswith("bytes:")
