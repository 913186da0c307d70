"""A whole run that recovers, on the CPU, through the fake ncu: a case whose kernel faults ends its ncu
process, its fault is named by running it again without the profiler, and the cases after it run again
in a fresh ncu process; a runner that never writes a status fails its cases with what it said last."""

import json
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import COMPILE_CACHE, DATA, NO_GPU, fake_profiled

from ncuverify.names import QualifiedCase
from ncuverify.options import CheckOptions
from ncuverify.pipeline import check_files
from ncuverify.profile.session import RUNS
from ncuverify.results import FileResult, Verdict, run_keys
from ncuverify.runner.status import CaseStatus, read_statuses

FAULTS = DATA / "faults.yaml"
FAULTING = ("bad_address", "bad_alignment", "trapped")
# What the fake ncu logs as a real one does when the application's kernel faults.
UNDER_THE_PROFILER = "the process ended while this case ran (exit 9): LaunchFailed; The application returned an error code (9)."


@dataclass(frozen=True)
class Checked:
    """faults.yaml checked with the fake ncu: its result, each ncu process's cases, the kept profile."""

    result: FileResult
    processes: list[list[str]]
    saved: Path


def check_faults(folder: Path, monkeypatch: pytest.MonkeyPatch, **variables: str) -> Checked:
    notes = folder / "notes.jsonl"
    notes.touch()
    monkeypatch.setenv("FAKE_NCU_NOTES", str(notes))
    monkeypatch.setenv("FAKE_NCU_VALUES", "by_case")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    [result] = fake_profiled([FAULTS], folder / "saved")
    assert result.input_error is None
    processes = [json.loads(line)["cases"] for line in notes.read_text().splitlines()]
    return Checked(result, processes, folder / "saved")


@pytest.fixture(scope="module")
def faulted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Checked]:
    """Three cases of faults.yaml fault, one after another (their kernels do, on a GPU)."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        yield check_faults(tmp_path_factory.mktemp("faulted"), monkeypatch, FAKE_NCU_FAULT=",".join(FAULTING))


def full(case: str) -> str:
    [key] = run_keys([FAULTS])
    return str(QualifiedCase(key.name, case))


def own_value(case: str, metric: str) -> float:
    """What the fake ncu reports of metric for the case (FAKE_NCU_VALUES=by_case)."""
    return len(metric) + 1000 * (zlib.crc32(full(case).encode()) % 997)


def named_without_the_profiler(saved: Path) -> list[tuple[list[str], CaseStatus]]:
    """The cases run again without ncu, with the status of each, in the order of the processes."""
    reruns = sorted(
        (saved / RUNS).glob("*/*/fault"), key=lambda p: (int(p.parent.parent.name), int(p.parent.name))
    )
    named = []
    for folder in reruns:
        plan = json.loads((folder / "plan.json").read_text())
        [status] = read_statuses((folder / "status.json").read_text())
        named.append(([c["name"] for c in plan["cases"]], status))
    return named


def reason_of_a_fault(case: str, without_the_profiler: CaseStatus) -> str:
    """Here, without a GPU, the run without the profiler fails as CUDA cannot start, which names no
    fault: the reason is what ncu said. On a GPU, a faulting kernel's own CUDA error names it, and a
    healthy one names none."""
    if without_the_profiler.ok or str(without_the_profiler.error).startswith("CUDA could not start"):
        return f"case {case} did not run: {UNDER_THE_PROFILER}"
    error = without_the_profiler.error
    return (
        f"case {case} did not run: {error} (run again without the profiler; under it: {UNDER_THE_PROFILER})"
    )


def saved_statuses(saved: Path) -> list[Path]:
    """The kept profile's status of each process, in the order they ran: status.json, status.1.json, ..."""
    return sorted(
        saved.glob("status*.json"), key=lambda p: int(p.suffixes[0][1:]) if len(p.suffixes) > 1 else 0
    )


def test_each_fault_ends_its_process_and_the_cases_after_it_run_again_in_a_fresh_one(faulted: Checked):
    cases = ["first", "bad_address", "second", "bad_alignment", "trapped", "hung", "last"]
    assert faulted.processes == [
        [full(c) for c in cases],
        [full(c) for c in cases[2:]],
        [full(c) for c in cases[4:]],
        [full(c) for c in cases[5:]],
    ]


def test_no_case_is_measured_twice_and_each_gets_its_own_values(faulted: Checked):
    runs = [read_statuses(path.read_text()) for path in saved_statuses(faulted.saved)]
    ran = [s.case for statuses in runs for s in statuses if s.ok]
    assert sorted(ran) == sorted(full(c) for c in ("first", "second", "hung", "last"))
    assert len(ran) == len(set(ran)), "every case measured once"
    failed = [s.case for statuses in runs for s in statuses if not s.ok]
    assert failed == [full(c) for c in FAULTING], "each fault reported once, by the process it ended"
    measured = faulted.result.measurements
    assert measured is not None
    for claim in faulted.result.claims:
        if claim.claim.case not in FAULTING and not claim.claim.metric.startswith("static__"):
            metric = claim.claim.metric
            if "." in metric:  # a raw ncu metric, not a measure derived from several
                assert measured.value(claim.claim.case, metric) == own_value(claim.claim.case, metric)
                assert claim.measured == own_value(claim.claim.case, metric)


def test_a_faulting_case_s_claims_are_errors_naming_the_fault_found_without_the_profiler(faulted: Checked):
    named = named_without_the_profiler(faulted.saved)
    assert [cases for cases, _ in named] == [[full(c)] for c in FAULTING], "each fault run again alone"
    by_case = {claim.claim.case: claim for claim in faulted.result.claims}
    for (_, status), case in zip(named, FAULTING, strict=True):
        assert by_case[case].verdict is Verdict.ERROR
        assert by_case[case].reason == reason_of_a_fault(case, status)
    healthy = [c for c in faulted.result.claims if c.claim.case not in FAULTING]
    assert all(c.verdict is not Verdict.ERROR for c in healthy)


def test_the_recovered_run_replays_from_its_recording_to_the_same_verdicts(faulted: Checked):
    [replayed] = check_files(
        [FAULTS],
        CheckOptions(cache=COMPILE_CACHE, from_profile=faulted.saved),
        NO_GPU,
    )
    assert [(c.claim.id, c.verdict, c.reason) for c in replayed.claims] == [
        (c.claim.id, c.verdict, c.reason) for c in faulted.result.claims
    ]


def test_a_fault_in_the_last_case_starts_no_other_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    checked = check_faults(tmp_path, monkeypatch, FAKE_NCU_FAULT="last")
    assert len(checked.processes) == 1
    [(cases, status)] = named_without_the_profiler(checked.saved)
    assert cases == [full("last")]
    [last] = [c for c in checked.result.claims if c.claim.case == "last"]
    assert last.verdict is Verdict.ERROR and last.reason == reason_of_a_fault("last", status)


def test_a_runner_that_writes_no_status_fails_every_case_with_what_was_said_last(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    checked = check_faults(tmp_path, monkeypatch, FAKE_NCU_STATUS="none")
    assert len(checked.processes) == 1, "nothing is run again"
    assert named_without_the_profiler(checked.saved) == []
    profiled = [c for c in checked.result.claims if not c.claim.metric.startswith("static__")]
    # The runner's own last words say why, not ncu's "No kernels were profiled" after them.
    why = "the runner did not start (exit 1): ImportError: the runner could not import numpy"
    assert profiled and all(
        c.verdict is Verdict.ERROR and c.reason == f"case {c.claim.case} did not run: {why}" for c in profiled
    )
    static = [c for c in checked.result.claims if c.claim.metric.startswith("static__")]
    assert [c.verdict for c in static] == [Verdict.PASSED], "a static claim needs no launch"
