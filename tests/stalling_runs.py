"""Runs of the stand-in for ncu that stops making progress where FAKE_NCU_STALL says."""

import json
from pathlib import Path

from conftest import DATA

from ncuverify.processes import group_ended
from ncuverify.profile import NcuOptions, Run, run_ncu
from ncuverify.runner import PlannedCase

STALLING_NCU = DATA / "fake_ncu" / "stalling_ncu"


CASES = [
    PlannedCase(name, "/none.cubin", f"k_{name}", (1, 1, 1), (32, 1, 1), 0, []) for name in ("a", "b", "c")
]


def stalled(tmp_path: Path, monkeypatch, stall: str, timeout_s: float = 1) -> tuple[Run, int]:
    """A run of the stalling stand-in for ncu, stopped where FAKE_NCU_STALL says; and its process group."""
    notes = tmp_path / "notes.jsonl"
    monkeypatch.setenv("FAKE_NCU_NOTES", str(notes))
    monkeypatch.setenv("FAKE_NCU_STALL", stall)
    options = NcuOptions(executable=str(STALLING_NCU), case_timeout_s=timeout_s)
    run = run_ncu(tmp_path / "run", CASES, ["a.sum"], options)
    return run, json.loads(notes.read_text().splitlines()[0])["pgid"]


def assert_no_process_of(group: int) -> None:
    """No process of the group can run: run_ncu returns only once the killed group has ended."""
    assert group_ended(group)
