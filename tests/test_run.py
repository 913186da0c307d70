"""One ncu process kept within the case timeout, with stand-ins for ncu."""

import json

import pytest
from stalling_runs import CASES, assert_no_process_of, stalled

from ncuverify.errors import EnvironmentProblem
from ncuverify.profile import NcuOptions, parse_csv, run_ncu
from ncuverify.runner import CaseStatus, Progress


def test_an_ncu_that_never_starts_the_runner_is_stopped_and_its_cases_say_why(tmp_path, monkeypatch):
    run, group = stalled(tmp_path, monkeypatch, "before_runner")
    reason = "ncu did not start the runner within 1 s; stopped"
    assert run.cases == tuple(CaseStatus(name, False, reason) for name in ("a", "b", "c"))
    assert run.stopped is None and run.returncode == -9
    assert_no_process_of(group)


def test_a_runner_that_never_starts_a_case_is_stopped_and_its_cases_say_why(tmp_path, monkeypatch):
    run, group = stalled(tmp_path, monkeypatch, "before_cases")
    reason = "the runner did not start its first case within 1 s (is CUDA stuck?); stopped"
    assert run.cases == tuple(CaseStatus(name, False, reason) for name in ("a", "b", "c"))
    assert_no_process_of(group)


def test_a_case_that_never_ends_is_stopped_and_the_cases_after_it_run_again(tmp_path, monkeypatch):
    run, group = stalled(tmp_path, monkeypatch, "in_case")
    error = "did not finish within 1 s under the profiler; stopped"
    assert run.cases == (CaseStatus("a", False, error, context_lost=True, not_run=("b", "c")),)
    assert_no_process_of(group)


def test_an_ncu_that_stops_between_cases_is_stopped_and_the_cases_left_say_why(tmp_path, monkeypatch):
    run, group = stalled(tmp_path, monkeypatch, "between_cases")
    reason = "ncu made no progress within 1 s after case a ended; stopped"
    assert run.cases == (
        CaseStatus("a", True, None, "k_a", 1),
        CaseStatus("b", False, reason),
        CaseStatus("c", False, reason),
    )
    assert_no_process_of(group)


def test_an_ncu_that_hangs_after_the_runner_is_stopped_and_its_report_kept(tmp_path, monkeypatch):
    run, group = stalled(tmp_path, monkeypatch, "after_runner")
    assert run.stopped == "ncu did not end within 1 s after the runner's last case; stopped"
    assert [s.ok for s in run.cases] == [True, True, True]
    assert list(parse_csv(run.report)["kernel"]) == ["k_a", "k_b", "k_c"]
    assert_no_process_of(group)


def test_nothing_writes_into_the_work_folder_once_a_run_returns(tmp_path, monkeypatch):
    import time

    stalled(tmp_path, monkeypatch, "before_runner")
    before = {path: path.stat().st_mtime_ns for path in (tmp_path / "run").iterdir()}
    time.sleep(0.5)
    assert {path: path.stat().st_mtime_ns for path in (tmp_path / "run").iterdir()} == before


def test_what_an_earlier_run_in_the_folder_left_is_not_taken_for_this_one_s(tmp_path, monkeypatch):
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "status.json").write_text(json.dumps([CaseStatus("a", True, None, "k_a", 1).to_json()]))
    (folder / "progress.json").write_text(Progress("c", False, True, 9).to_json())
    run, _ = stalled(tmp_path, monkeypatch, "before_runner")
    reason = "ncu did not start the runner within 1 s; stopped"
    assert run.cases == tuple(CaseStatus(name, False, reason) for name in ("a", "b", "c"))


def test_an_ncu_that_cannot_be_started_is_an_environment_problem(tmp_path):
    not_executable = tmp_path / "ncu"
    not_executable.write_text("")
    with pytest.raises(
        EnvironmentProblem, match=r"^ncu could not be started \('.*/ncu'\): \[Errno 13\] Permission denied"
    ):
        run_ncu(tmp_path / "run", CASES, ["a.sum"], NcuOptions(executable=str(not_executable)))
