"""The loop over a plan's cases: each launched in order, its outcome and the progress recorded as it
ends, and what a lost CUDA context means for the cases after it."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from ncuverify.runner.ahead import ContentsAhead
from ncuverify.runner.case import Launcher, SequenceBuffers, run_case
from ncuverify.runner.facts import NeedsNcu, driver_facts
from ncuverify.runner.launch import CudaLauncher
from ncuverify.runner.plan import Plan
from ncuverify.runner.progress import PROGRESS_FILE, ProgressWriter, write_atomically
from ncuverify.runner.status import (
    AFTER_FAILED_STEP,
    CUDA_DID_NOT_START,
    NEEDS_NCU,
    CaseStatus,
    statuses_json,
)


def run_plan(plan: Plan, start: Callable[[int], Launcher] = CudaLauncher) -> list[CaseStatus]:
    """Launch every case in order; record each outcome as it ends, and the progress: the runner's
    start, each case's start and end, and the end of the plan.

    A fault that leaves the CUDA context unusable (an illegal address, a trap) ends the run after
    recording it: the cases after it are not tried here, and the caller runs them again in a fresh
    process. start gives the launcher for the plan's device (CUDA's start).
    """
    status_path = Path(plan.status_path)
    progress = ProgressWriter(status_path.with_name(PROGRESS_FILE))
    progress.write(None, running=False)  # started: what follows is CUDA's start, then the cases
    ahead = ContentsAhead(plan.cases)  # the first case's contents made while CUDA starts
    try:
        return _run_cases(plan, start, status_path, progress, ahead)
    finally:
        ahead.close()


def _run_cases(
    plan: Plan,
    start: Callable[[int], Launcher],
    status_path: Path,
    progress: ProgressWriter,
    ahead: ContentsAhead,
) -> list[CaseStatus]:
    status: list[CaseStatus] = []
    try:
        launcher = start(plan.device)
    except Exception as error:
        status = [
            CaseStatus(c.name, False, f"{CUDA_DID_NOT_START}: {error}", kernel=c.symbol) for c in plan.cases
        ]
        write_atomically(status_path, statuses_json(status))
        progress.write(None, running=False, done=True)
        return status
    finally:
        if plan.ready:
            _open(Path(plan.ready))  # CUDA has started here, or never will: no more work on the GPU
    for gate in [plan.gate, *plan.wait_ready]:
        if gate:
            wait_for_gate(Path(gate), progress)
    shared = SequenceBuffers()
    facts = driver_facts(launcher, plan.report, plan.facts)
    for index, case in enumerate(plan.cases):
        contents = ahead.contents(index)
        if case.sequence != shared.sequence or not case.sequence:
            _release(shared, launcher)
            shared = SequenceBuffers(case.sequence)
        progress.write(case.name, running=True)
        if shared.failed:
            status.append(CaseStatus(case.name, False, AFTER_FAILED_STEP, kernel=case.symbol))
        else:
            try:
                measured = facts.of(case) if facts is not None else None
                values = run_case(launcher, case, shared, contents)
                status.append(CaseStatus(case.name, True, None, case.symbol, case.repeat, values))
                if facts is not None and measured is not None:
                    facts.launched(case, measured)
            except NeedsNcu as refusal:  # not launched: ncu measures it, in a process after this one
                status.append(CaseStatus(case.name, False, str(refusal), kernel=case.symbol))
            except Exception as error:
                status.append(CaseStatus(case.name, False, _one_line(error), kernel=case.symbol))
                shared.failed = True
                if not launcher.usable():
                    later = plan.cases[plan.cases.index(case) + 1 :]
                    status[-1] = replace(status[-1], context_lost=True, not_run=tuple(c.name for c in later))
                    write_atomically(status_path, statuses_json(status))
                    break
        write_atomically(status_path, statuses_json(status))
        progress.write(case.name, running=False)
    else:
        _release(shared, launcher)
        # a case left to ncu runs before the next process launches (the profile stage opens the gate)
        if plan.opens and not any(str(s.error).startswith(NEEDS_NCU) for s in status):
            _open(Path(plan.opens))
    progress.write(status[-1].case if status else None, running=False, done=True)
    return status


# How often the gate is looked for, and the progress rewritten while it is shut.
_GATE_POLL_S = 0.005
_GATE_PROGRESS_S = 1.0


def wait_for_gate(gate: Path, progress: ProgressWriter) -> None:
    """Wait until the gate exists (the process before this one on the GPU has profiled its cases, or
    one after it has started CUDA), rewriting the progress each second meanwhile: a wait is not a
    stall."""
    written = time.monotonic()
    while not gate.exists():
        time.sleep(_GATE_POLL_S)
        if time.monotonic() - written >= _GATE_PROGRESS_S:
            progress.write(None, running=False)
            written = time.monotonic()


def _open(gate: Path) -> None:
    """Let another process on the GPU launch: here, every case has run, and what is left of this
    process (Python's end, CUDA's, ncu writing its report) touches no kernel; or CUDA has started.
    Where the file cannot be made, the profile stage makes it once this process has ended."""
    with contextlib.suppress(OSError):
        gate.touch()


def _release(shared: SequenceBuffers, launcher: Launcher) -> None:
    """The buffers of a sequence that ended; a failure to free them loses no result."""
    with contextlib.suppress(Exception):
        shared.release(launcher)


def _one_line(error: Exception) -> str:
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text}" if text else type(error).__name__
