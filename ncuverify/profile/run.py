"""One ncu process over a plan of cases on one GPU (or the runner alone, where the cases need no ncu),
and what it left behind."""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from ncuverify.errors import EnvironmentProblem
from ncuverify.profile.command import NcuOptions
from ncuverify.profile.outcome import (
    ELAPSED_FILE,
    MAX_OUTPUT_BYTES,
    after_stall,
    clear_outcomes,
    ending,
    lost,
    read_end,
    read_log,
    read_status,
)
from ncuverify.profile.process import start, wait
from ncuverify.profile.saved_report import REPORT_FILE
from ncuverify.profile.work import DriverWork, KernelWork
from ncuverify.runner import PROGRESS_FILE, CaseStatus, Plan, PlannedCase


@dataclass(frozen=True)
class Run:
    """One ncu process: ncu's log and the runner's status per case, as a live run leaves them or a
    recording keeps them. A file takes more than one run when a case faults or hangs: the cases after
    it run again in a fresh process."""

    report: str  # ncu's log: messages and the CSV
    cases: tuple[CaseStatus, ...]  # the runner's outcome per case
    command: list[str] = field(default_factory=list)  # ncu's command line (as provenance keeps it)
    output: str = ""  # the runner's own stdout and stderr (a recording keeps none)
    returncode: int | None = None  # ncu's exit status; None for a run read from a recording
    stopped: str | None = None  # why the process was stopped after the runner's last case, if it was
    source: str | None = None  # where a recorded run was read from, for messages


@dataclass(frozen=True)
class Gate:
    """What a process waits for before it launches: a file that the process before it creates once its
    cases have run, and after_ready: the ready files of the processes after it that start CUDA before
    it launches (its kernels time themselves, and a context starting is work on the GPU). ready: the
    file this process's runner creates once CUDA has started (where one before it waits); opens: the next process's gate, which
    this one's runner creates when its cases have all run. The profile stage creates both after the
    process in any case."""

    path: Path
    opens: Path | None = None
    ready: Path | None = None
    after_ready: tuple[Path, ...] = ()


def run_ncu(
    work_dir: Path,
    cases: Sequence[PlannedCase],
    metrics: Iterable[str],
    options: NcuOptions,
    device: int | None = None,
    keep_report: bool = False,
    sections: Sequence[str] = (),
    gate: Gate | None = None,
    driver: bool = False,
) -> Run:
    """Profile the cases in one ncu process on one GPU (device: its index; None: CUDA's default).
    With keep_report, ncu also saves its report as REPORT_FILE in work_dir; with sections, it collects
    them instead of metrics (see ncu_command). With a gate, the runner starts (Python and CUDA)
    but launches nothing until the gate file exists, and those of after_ready. With driver, the runner
    runs alone, and writes the metrics (launch facts) of each launch where ncu would write its report.

    The process is stopped when it makes no progress for the case timeout: ncu not starting the
    runner, a case that never ends, ncu not ending after the runner's last case. The cases it kept
    from running get an error saying which. ncu and the runner get a process group of their own,
    killed whole on a stop, on Ctrl-C and after ncu ends, so that no process outlives the run or
    writes into work_dir after it.
    """
    work_dir.mkdir(parents=True, exist_ok=True)
    plan_file = work_dir / "plan.json"
    status_file = work_dir / "status.json"
    log_file = work_dir / "ncu.log"
    clear_outcomes(work_dir)
    plan = Plan(0, str(status_file), list(cases))
    if gate is not None:
        plan = replace(
            plan,
            gate=str(gate.path),
            ready=str(gate.ready or ""),
            wait_ready=[str(path) for path in gate.after_ready],
            opens=str(gate.opens or ""),
        )
    report_file = work_dir / REPORT_FILE.removesuffix(".ncu-rep") if keep_report else None
    work: DriverWork | KernelWork
    if driver:
        work = DriverWork.of(cases, metrics, plan_file)
        plan = replace(plan, report=str(log_file), facts=sorted(work.metrics))
    else:
        work = KernelWork.of(cases, metrics, plan_file, report_file, sections)
    plan.write(plan_file)
    command = work.command(options, log_file)
    names = list(work.names)
    started = time.monotonic()
    try:
        process = start(command, work_dir / "output.txt", device)
    except OSError as error:
        raise ncu_not_started(options, error) from None
    watched = wait(process, work_dir / PROGRESS_FILE, names, options.case_timeout_s, options)
    (work_dir / ELAPSED_FILE).write_text(f"{time.monotonic() - started:.3f}\n")
    report = read_log(log_file)
    output = read_end(work_dir / "output.txt", MAX_OUTPUT_BYTES)
    status = read_status(status_file, names)
    if watched.stalled:
        status, stopped = after_stall(status, watched.last, names, options.case_timeout_s)
        return Run(report, tuple(status), command, output, process.returncode, stopped)
    last = watched.last
    if last is not None and last.running and last.case not in {s.case for s in status}:
        # The process ended in the middle of a case (ncu ends an application whose kernel faults).
        status.append(lost(str(last.case), ending(report + "\n" + output, process.returncode), names))
    return Run(report, tuple(status), command, output, process.returncode)


def ncu_not_started(options: NcuOptions, error: OSError) -> EnvironmentProblem:
    """Why ncu could not be started: not there, or refused by the system."""
    if isinstance(error, FileNotFoundError):
        return EnvironmentProblem(
            f"ncu not found at {options.executable!r}: install Nsight Compute or pass --ncu"
        )
    return EnvironmentProblem(f"ncu could not be started ({options.executable!r}): {error}")
