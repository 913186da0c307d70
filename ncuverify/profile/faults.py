"""Naming a fault: under ncu a kernel's fault only ends the application ("LaunchFailed"), so the case
runs again without the profiler to learn the CUDA error it raises."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

from ncuverify.errors import EnvironmentProblem
from ncuverify.profile.command import NcuOptions
from ncuverify.profile.outcome import clear_outcomes, read_status
from ncuverify.profile.process import start, wait
from ncuverify.runner import CUDA_DID_NOT_START, PROGRESS_FILE, CaseStatus, Plan, PlannedCase


def name_the_fault(
    work_dir: Path, case: PlannedCase, timeout_s: float, device: int | None = None
) -> str | None:
    """Run one case again without the profiler, to learn the CUDA error its kernel raises: under ncu
    a fault only ends the application ("LaunchFailed"). None where the run tells nothing: it was
    stopped, left no readable status, or CUDA itself could not start there (no GPU for it)."""
    work_dir.mkdir(parents=True, exist_ok=True)
    status_file = work_dir / "status.json"
    plan_file = work_dir / "plan.json"
    clear_outcomes(work_dir)
    Plan(device=0, status_path=str(status_file), cases=[case]).write(plan_file)
    runner = [sys.executable, "-m", "ncuverify.runner", str(plan_file)]
    try:
        process = start(runner, work_dir / "output.txt", device)
    except OSError:
        return None
    if wait(process, work_dir / PROGRESS_FILE, [case.name], timeout_s).stalled:
        return None
    try:
        status = read_status(status_file, [case.name])
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
            case = next(c for c in planned if c.name == entry.case)
            error = name_the_fault(work_dir / "fault", case, ncu.case_timeout_s, gpu)
            if error is not None:
                entry = replace(
                    entry, error=f"{error} (run again without the profiler; under it: {entry.error})"
                )
        named.append(entry)
    return named
