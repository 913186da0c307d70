"""One program case under ncu: its command resolved, run in its folder with a minimal environment and
its time limit, in a process group of its own; what it left, as a Run of one case."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ncuverify.errors import EnvironmentProblem
from ncuverify.ncu.log import error_lines
from ncuverify.processes import TimedOut, run_bounded
from ncuverify.profile.command import NcuOptions
from ncuverify.profile.outcome import clear_outcomes, read_log
from ncuverify.profile.process import visible_device
from ncuverify.profile.program_command import Sections, program_ncu_command
from ncuverify.profile.program_launches import NO_LAUNCH, selected_launches
from ncuverify.profile.run import Run, ncu_not_started
from ncuverify.profile.shown import shown_output
from ncuverify.profile.table import parse_csv
from ncuverify.runner import CaseStatus
from ncuverify.spec.programs import ProgramCase

# What of the program's own environment it keeps: where programs are, whose home, where temporary files go.
KEPT_VARIABLES = ("PATH", "HOME", "TMPDIR", "USER", "LOGNAME")
_STDERR_LINES = 5  # shown of a failed program's standard error: its last lines


@dataclass(frozen=True)
class PlannedProgram:
    """A program case of a file, to run: its qualified name, the case, its file's folder, its metrics."""

    name: str
    case: ProgramCase
    folder: Path
    metrics: frozenset[str]


def program_argv(case: ProgramCase, folder: Path, path: str) -> list[str] | str:
    """The command with its program found (a name on path, a path relative to folder), or why not."""
    first, *rest = case.program.command
    found = str((folder / first).resolve()) if "/" in first else shutil.which(first, path=path)
    if found is None or not os.access(found, os.X_OK):
        return f"no program {shown_output(first, 200)} to run: not found, or not executable"
    return [found, *rest]


def program_environment(case: ProgramCase, device: int | None) -> dict[str, str]:
    """A minimal environment (KEPT_VARIABLES, the C locale, the GPU) and what the case adds."""
    environment = {name: os.environ[name] for name in KEPT_VARIABLES if name in os.environ}
    environment.setdefault("PATH", os.defpath)
    environment["LC_ALL"] = "C"
    if device is not None:
        environment["CUDA_VISIBLE_DEVICES"] = visible_device(device)
    return {**environment, **case.program.env}


def shown_command(command: Iterable[str]) -> str:
    return shown_output(" ".join(command), 200)


def run_program(
    planned: PlannedProgram,
    work_dir: Path,
    options: NcuOptions,
    device: int | None,
    sections: Sections | None = None,
) -> Run:
    """Run the case's program under ncu (with sections: for one launch, into a report). A program that
    cannot start, exits non-zero, runs past its time limit or launches nothing the case selects fails
    the case, with its command and the end of its standard error; EnvironmentProblem only where ncu
    itself cannot start."""
    work_dir.mkdir(parents=True, exist_ok=True)
    clear_outcomes(work_dir)
    log_file = work_dir / "ncu.log"
    environment = program_environment(planned.case, device)
    written = " ".join(planned.case.program.command)
    argv = program_argv(planned.case, planned.folder, environment["PATH"])
    if isinstance(argv, str):
        return Run("", (CaseStatus(planned.name, False, argv),), [])
    command = program_ncu_command(options, planned.case, planned.metrics, log_file, argv, sections)
    cwd = (planned.folder / (planned.case.program.cwd or ".")).resolve()
    try:
        finished = run_bounded(command, planned.case.program.timeout_s, environment, cwd)
    except TimedOut:
        limit = planned.case.program.timeout_s
        error = f"the program `{shown_command([written])}` did not end within {limit:g} s under ncu; stopped"
        return Run(read_log(log_file), (CaseStatus(planned.name, False, error),), command)
    except OSError as error:
        raise ncu_not_started(options, error) from None
    report = read_log(log_file)
    saved = sections.saved if sections is not None else None
    status = _status(planned, report, finished.returncode, finished.stderr, written, saved)
    return Run(report, (status,), command, _tail(finished.stderr), finished.returncode)


def _status(
    planned: PlannedProgram, report: str, returncode: int, stderr: str, written: str, saved: Path | None
) -> CaseStatus:
    """How the run went: its launches are the CSV's in the log, or (a run for sections, whose report
    is saved) the one launch of the report ncu saved."""
    tail = _tail(stderr)
    said = f"; its standard error ends: {tail}" if tail else ""
    if returncode != 0:
        errors = error_lines(report)
        ncu_said = f"; ncu: {shown_output('; '.join(errors))}" if errors else ""
        error = f"the program `{shown_command([written])}` exited with {returncode} under ncu{ncu_said}{said}"
        return CaseStatus(planned.name, False, error)
    if saved is not None:
        found = saved.is_file() and not saved.is_symlink()
        launches, problem = ([0], None) if found else ([], NO_LAUNCH)
    else:
        try:
            launches, problem = selected_launches(parse_csv(report), planned.case)
        except EnvironmentProblem as unreadable:
            launches, problem = [], str(unreadable)
    if problem is not None:
        return CaseStatus(planned.name, False, f"the program `{shown_command([written])}`: {problem}{said}")
    return CaseStatus(planned.name, True, launches=len(launches))


def _tail(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()][-_STDERR_LINES:]
    return shown_output(" | ".join(lines), 600)
