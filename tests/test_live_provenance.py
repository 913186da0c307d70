"""Where a live profile's figures come from: the tools' own versions, asked after the run."""

from stalling_runs import STALLING_NCU

from ncuverify import environment
from ncuverify.environment import Gpu
from ncuverify.profile import NcuOptions
from ncuverify.stages.live_provenance import live_provenance


def test_an_ncu_that_no_longer_answers_leaves_its_version_unknown_not_the_run_lost(tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_NCU_NOTES", str(tmp_path / "notes.jsonl"))
    monkeypatch.setenv("FAKE_NCU_STALL", "probes")
    monkeypatch.setattr(environment, "VERSION_TIMEOUT_S", 1)
    gpu = Gpu(0, "NVIDIA H200", "sm_90", "13.0")
    provenance = live_provenance(gpu, NcuOptions(executable=str(STALLING_NCU)), ["ncu"], [])
    assert provenance.ncu_version is None and provenance.gpu == "NVIDIA H200"
