"""Where a live profile's figures come from: what the tools say of themselves, asked while ncu profiles."""

import threading

from conftest import FAKE_NCU
from stalling_runs import STALLING_NCU

from ncuverify import environment
from ncuverify.profile import NcuOptions
from ncuverify.stages import live_provenance
from ncuverify.stages.live_provenance import machine_facts, machine_facts_meanwhile


def test_the_tools_say_their_versions():
    facts = machine_facts(NcuOptions(executable=str(FAKE_NCU)))
    assert facts.ncu_version == "2025.3.1.0"
    assert facts.nvrtc_version.count(".") == 1 and all(p.isdigit() for p in facts.nvrtc_version.split("."))


def test_an_ncu_that_no_longer_answers_leaves_its_version_unknown_not_the_run_lost(tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_NCU_NOTES", str(tmp_path / "notes.jsonl"))
    monkeypatch.setenv("FAKE_NCU_STALL", "probes")
    monkeypatch.setattr(environment, "VERSION_TIMEOUT_S", 1)
    assert machine_facts(NcuOptions(executable=str(STALLING_NCU))).ncu_version is None


def test_the_facts_are_asked_on_a_thread_of_their_own_while_the_run_goes_on(monkeypatch):
    asked, answer = threading.Event(), threading.Event()

    def slow_nvidia_smi() -> str:
        asked.set()
        answer.wait(10)
        return "580.159.04"

    monkeypatch.setattr(live_provenance.recording, "nvidia_driver_version", slow_nvidia_smi)
    facts = machine_facts_meanwhile(NcuOptions(executable=str(FAKE_NCU)))
    assert asked.wait(10) and not facts.done()  # returned while nvidia-smi was still being asked
    answer.set()
    assert facts.result(10).nvidia_driver == "580.159.04"
