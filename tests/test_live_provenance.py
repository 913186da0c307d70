"""Where a live profile's figures come from: ncu's version as it said when the run began."""

from stalling_runs import STALLING_NCU

from ncuverify.environment import Gpu
from ncuverify.profile import NcuOptions
from ncuverify.stages.live_provenance import live_provenance


def test_ncu_s_version_is_the_one_found_at_the_start_and_ncu_is_not_asked_again(tmp_path, monkeypatch):
    notes = tmp_path / "notes.jsonl"
    monkeypatch.setenv("FAKE_NCU_NOTES", str(notes))
    monkeypatch.setenv("FAKE_NCU_STALL", "probes")  # an ncu asked now would hold the run up
    gpu = Gpu(0, "NVIDIA H200", "sm_90", "13.0")
    ncu = NcuOptions(executable=str(STALLING_NCU))
    provenance = live_provenance(gpu, ncu, "2025.3.1.0", ["ncu"], [])
    assert provenance.ncu_version == "2025.3.1.0" and provenance.gpu == "NVIDIA H200"
    assert not notes.exists(), "ncu was started again after the run"
    assert live_provenance(gpu, ncu, None, ["ncu"], []).ncu_version is None
