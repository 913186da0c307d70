"""Naming a fault: under ncu a kernel's fault only ends the application ("LaunchFailed"), so the case
runs again without the profiler to learn the CUDA error it raises."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from ncuverify.errors import EnvironmentProblem
from ncuverify.profile.command import NcuOptions
from ncuverify.profile.outcome import clear_outcomes, read_status
from ncuverify.profile.process import start, wait
from ncuverify.profile.work import runner_command
from ncuverify.runner import CUDA_DID_NOT_START, PROGRESS_FILE, CaseStatus, Plan, PlannedCase, steps_up_to


def name_the_fault(
    work_dir: Path, cases: Sequence[PlannedCase], timeout_s: float, device: int | None = None
) -> str | None:
    """Run a case again without the profiler, to learn the CUDA error its kernel raises: under ncu
    a fault only ends the application ("LaunchFailed"). The case is the last of cases: a step of a
    sequence comes after the steps before it. None where the run tells nothing: it was stopped, left
    no readable status, or CUDA itself could not start there (no GPU for it)."""
    work_dir.mkdir(parents=True, exist_ok=True)
    status_file = work_dir / "status.json"
    plan_file = work_dir / "plan.json"
    clear_outcomes(work_dir)
    Plan(device=0, status_path=str(status_file), cases=list(cases)).write(plan_file)
    runner = runner_command(plan_file)
    names = [case.name for case in cases]
    try:
        process = start(runner, work_dir / "output.txt", device)
    except OSError:
        return None
    if wait(process, work_dir / PROGRESS_FILE, names, timeout_s).stalled:
        return None
    try:
        status = [s for s in read_status(status_file, names) if s.case == names[-1]]
    except EnvironmentProblem:
        return None
    if not status or status[0].ok or str(status[0].error).startswith(CUDA_DID_NOT_START):
        return None
    return status[0].error


def faults_named(
    status: list[CaseStatus],
    planned: list[PlannedCase],
    work_dir: Path,
    ncu: NcuOptions,
    gpu: int,
) -> list[CaseStatus]:
    """Where a kernel's fault ended the process under ncu, the CUDA error it raises without ncu."""
    named = []
    for entry in status:
        if entry.context_lost and "process ended" in str(entry.error):
            error = name_the_fault(
                work_dir / "fault", steps_up_to(planned, entry.case), ncu.case_timeout_s, gpu
            )
            if error is not None:
                entry = replace(
                    entry, error=f"{error} (run again without the profiler; under it: {entry.error})"
                )
        named.append(entry)
    return named
