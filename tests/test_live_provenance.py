"""Where a live profile's figures come from: the tools' own versions, and the
digests that tie its figures to the files they were measured of."""

import hashlib
import json

from conftest import COMPILE_CACHE, DATA, FAKE_NCU
from stalling_runs import STALLING_NCU

from ncuverify import environment
from ncuverify.build import build_spec
from ncuverify.environment import Gpu
from ncuverify.profile import NcuOptions, recording
from ncuverify.profile.measurement_keys import gpu_identity, measurement_keys
from ncuverify.profile.plan import FileCases
from ncuverify.provenance import Provenance
from ncuverify.spec import load
from ncuverify.spec.digests import case_digests
from ncuverify.stages.live_provenance import live_provenance


def test_an_ncu_that_no_longer_answers_leaves_its_version_unknown_not_the_run_lost(tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_NCU_NOTES", str(tmp_path / "notes.jsonl"))
    monkeypatch.setenv("FAKE_NCU_STALL", "probes")
    monkeypatch.setattr(environment, "VERSION_TIMEOUT_S", 1)
    gpu = Gpu(0, "NVIDIA H200", "sm_90", "13.0")
    provenance = live_provenance(gpu, NcuOptions(executable=str(STALLING_NCU)), ["ncu"], [])
    assert provenance.ncu_version is None and provenance.gpu == "NVIDIA H200"


def test_a_live_provenance_keeps_each_case_s_digest_and_each_program_case_s_files(tmp_path):
    (tmp_path / ".ncuverify-root").touch()
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "add.py").write_text("print('adding')\n")
    path = tmp_path / "programs.yaml"
    path.write_text(
        "cases:\n"
        "  add:\n    program: {command: [python3, add.py], cwd: bench}\n    kernel: add\n"
        "  other:\n    program: {command: [nvidia-smi]}\n    kernel: add\n"
        "claims:\n  - {id: t, case: add, metric: gpu__time_duration.sum, expect: {at_least: 0},\n"
        "     cite: {document: d.txt, section: '1', figure: t}}\n"
    )
    spec = load(path)
    files = [FileCases("programs.yaml", spec, {}, [])]
    gpu = Gpu(0, "NVIDIA H200", "sm_90", "13.0")
    provenance = live_provenance(gpu, NcuOptions(executable=str(STALLING_NCU)), ["ncu"], files)
    assert provenance.cases == {f"programs.yaml::{name}": d for name, d in case_digests(spec).items()}
    script = hashlib.sha256(b"print('adding')\n").hexdigest()
    # a program found on the PATH names no file of the project: its digests are there, and none
    assert provenance.program_files == {
        "programs.yaml::add": {"bench/add.py": script},
        "programs.yaml::other": {},
    }


def test_a_live_provenance_says_which_nvcc_compiled_each_kernel_nvcc_built(tmp_path):
    from types import SimpleNamespace

    (tmp_path / ".ncuverify-root").touch()
    path = tmp_path / "k.yaml"
    path.write_text(
        "kernels:\n  a: {source: 'x', entry: a}\n  b: {source: 'x', entry: b}\n"
        "claims:\n  - {id: t, kernels: a, metric: static__registers_per_thread, expect: {at_least: 0},\n"
        "     cite: {document: d.txt, section: '1', figure: t}}\n"
    )
    builds = {
        "a": SimpleNamespace(source_digest="1", nvcc="nvcc 13.0.88 at /usr/local/cuda-13.0"),
        "b": SimpleNamespace(source_digest="2", nvcc=None),  # NVRTC's
    }
    files = [FileCases("k.yaml", load(path), builds, [])]  # type: ignore[arg-type]
    gpu = Gpu(0, "NVIDIA H200", "sm_90", "13.0")
    provenance = live_provenance(gpu, NcuOptions(executable=str(STALLING_NCU)), ["ncu"], files)
    assert provenance.nvcc == {"k.yaml::a": "nvcc 13.0.88 at /usr/local/cuda-13.0"}
    assert provenance.kernels == {"k.yaml::a": "1", "k.yaml::b": "2"}


def test_a_live_provenance_keeps_each_profiled_case_s_measurement_key_and_a_recording_too(tmp_path):
    spec = load(DATA / "sample.yaml")
    files = [
        FileCases("sample.yaml", spec, build_spec(spec, "sm_90", COMPILE_CACHE), list(spec.content.claims))
    ]
    gpu = Gpu(0, "NVIDIA H200", "sm_90", "13.0")
    provenance = live_provenance(gpu, NcuOptions(executable=str(FAKE_NCU)), ["ncu"], files)
    assert provenance.ncu_version == "2025.3.1.0"
    assert provenance.measurement_keys == measurement_keys(files, gpu_identity(provenance))
    assert sorted(provenance.measurement_keys) == [
        f"sample.yaml::{case}" for case in sorted(spec.content.cases)
    ]
    recording.save(tmp_path, [], provenance)
    saved = json.loads((tmp_path / recording.PROVENANCE).read_text())
    assert Provenance.from_json(saved) == provenance
