"""One program case under ncu: its command resolved, run in its folder with a minimal environment and
its time limit, in a process group of its own; what it left, as a Run of one case."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ncuverify.errors import EnvironmentProblem
from ncuverify.ncu.log import error_lines
from ncuverify.processes import TimedOut, run_bounded
from ncuverify.profile.command import NcuOptions
from ncuverify.profile.outcome import clear_outcomes, read_log
from ncuverify.profile.program_launches import NO_LAUNCH, selected_launches
from ncuverify.profile.program_work import PlannedProgram, ProgramWork
from ncuverify.profile.run import Run, ncu_not_started
from ncuverify.profile.shown import shown_output
from ncuverify.profile.table import parse_csv
from ncuverify.runner import CaseStatus

_STDERR_LINES = 5  # shown of a failed program's standard error: its last lines


def shown_command(command: Iterable[str]) -> str:
    return shown_output(" ".join(command), 200)


def run_program(work: ProgramWork, work_dir: Path, options: NcuOptions) -> Run:
    """Run the work's program under ncu (with sections: for one launch, into a report). A program that
    cannot start, exits non-zero, runs past its time limit or launches nothing a case selects fails
    its cases, with its command and the end of its standard error; EnvironmentProblem only where ncu
    itself cannot start."""
    work_dir.mkdir(parents=True, exist_ok=True)
    clear_outcomes(work_dir)
    log_file = work_dir / "ncu.log"
    written = work.written
    argv = work.argv()
    if isinstance(argv, str):
        return Run("", _all_failed(work, argv), [])
    command = work.command(options, log_file)
    try:
        finished = run_bounded(command, work.timeout_s, work.environment, work.cwd)
    except TimedOut:
        error = f"the program `{shown_command([written])}` did not end within {work.timeout_s:g} s under ncu; stopped"
        return Run(read_log(log_file), _all_failed(work, error), command)
    except OSError as error:
        raise ncu_not_started(options, error) from None
    report = read_log(log_file)
    saved = work.sections.saved if work.sections is not None else None
    selected = work.selection(report) if work.shared and finished.returncode == 0 else None
    status = tuple(
        _status(planned, report, finished.returncode, finished.stderr, written, saved, selected)
        for planned in work.programs
    )
    return Run(report, status, command, _tail(finished.stderr), finished.returncode)


def _all_failed(work: ProgramWork, error: str) -> tuple[CaseStatus, ...]:
    return tuple(CaseStatus(name, False, error) for name in work.names)


def _status(
    planned: PlannedProgram,
    report: str,
    returncode: int,
    stderr: str,
    written: str,
    saved: Path | None,
    selected: dict[str, list[int]] | str | None = None,
) -> CaseStatus:
    """How the run went: its launches are the CSV's in the log, or (a run for sections, whose report
    is saved) the one launch of the report ncu saved, or (a shared process) those selected for it."""
    tail = _tail(stderr)
    said = f"; its standard error ends: {tail}" if tail else ""
    if returncode != 0:
        errors = error_lines(report)
        ncu_said = f"; ncu: {shown_output('; '.join(errors))}" if errors else ""
        error = f"the program `{shown_command([written])}` exited with {returncode} under ncu{ncu_said}{said}"
        return CaseStatus(planned.name, False, error)
    if selected is not None:
        launches, problem = ([], selected) if isinstance(selected, str) else (selected[planned.name], None)
    elif saved is not None:
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
