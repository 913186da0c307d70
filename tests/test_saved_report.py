"""Reading back a report ncu saved, within a time limit."""

import json

import pytest
from conftest import assert_group_ends
from stalling_runs import STALLING_NCU

from ncuverify.errors import EnvironmentProblem
from ncuverify.profile import NcuOptions


def test_an_import_that_never_ends_is_stopped(tmp_path, monkeypatch):
    from ncuverify.profile import saved_report

    notes = tmp_path / "notes.jsonl"
    monkeypatch.setenv("FAKE_NCU_NOTES", str(notes))
    monkeypatch.setenv("FAKE_NCU_STALL", "probes")
    monkeypatch.setattr(saved_report, "IMPORT_TIMEOUT_S", 1)
    report = tmp_path / "profile.ncu-rep"
    with pytest.raises(EnvironmentProblem) as problem:
        saved_report.import_report(NcuOptions(executable=str(STALLING_NCU)), report, "details")
    assert (
        str(problem.value)
        == f"ncu could not read its report {report}: stalling_ncu did not finish within 1 s; stopped"
    )
    assert_group_ends(json.loads(notes.read_text())["pgid"])
