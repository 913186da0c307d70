"""The program cases of a run: each file's program cases that its claims read, each profiled in an ncu
process of its own (only where the run allows programs), or replayed from a recording."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from ncuverify.errors import EnvironmentProblem, InputError
from ncuverify.measurements import Measurements
from ncuverify.names import QualifiedCase
from ncuverify.profile.command import NcuOptions
from ncuverify.profile.plan import FileCases, claim_needs
from ncuverify.profile.program_run import run_program
from ncuverify.profile.program_work import PlannedProgram, ProgramWork, program_works
from ncuverify.profile.run import Run
from ncuverify.spec.programs import ProgramCase, launch_of

# "each": every program case in an ncu process of its own, as before cases shared one (for benchmarks)
PROCESSES_VARIABLE = "NCUVERIFY_PROGRAM_PROCESSES"
PROGRAM_RUNS = "programs"  # under the work folder: one folder per program case's ncu process
NOT_ALLOWED = (
    "a program case runs a command that the expectation file names: pass --allow-programs"
    " (allow_programs=True from Python) to run it"
)


def planned_programs(files: Sequence[FileCases]) -> list[PlannedProgram]:
    """Every program case the files' claims read, in file order, with the ncu metrics it needs."""
    planned = []
    for file in files:
        needs: dict[str, set[str]] = {}
        for read, metrics in claim_needs(file.claims).items():  # `add#2`, a launch of add: add's needs
            needs.setdefault(launch_of(read)[0], set()).update(metrics)
        for name, case in file.spec.content.programs.items():
            if name in needs and name not in file.reused:
                planned.append(
                    PlannedProgram(
                        str(QualifiedCase(file.key, name)), case, file.spec.folder, frozenset(needs[name])
                    )
                )
    return planned


def program_cases(files: Sequence[FileCases]) -> dict[str, ProgramCase]:
    """Every program case of the files, under its qualified name."""
    return {
        str(QualifiedCase(file.key, name)): case
        for file in files
        for name, case in file.spec.content.programs.items()
    }


def profile_programs(
    files: Sequence[FileCases], work_dir: Path, ncu: NcuOptions, device: int | None, allowed: bool
) -> tuple[list[Run], Measurements]:
    """Run each program case under ncu, one after another on the device: the runs (to record) and
    what they measured. Where programs are not allowed, none runs and their cases fail saying how."""
    runs: list[Run] = []
    measured = Measurements.empty()
    planned = planned_programs(files)
    if not allowed:
        return [], Measurements(failed_cases=dict.fromkeys((p.name for p in planned), NOT_ALLOWED))
    shared = os.environ.get(PROCESSES_VARIABLE, "shared") != "each"
    for number, work in enumerate(program_works(planned, device, shared)):
        for run, ran in _runs_of(work, work_dir / PROGRAM_RUNS / str(number), ncu):
            runs.append(run)
            measured = measured.combined(ran.measurements(run))
    return runs, measured


def _runs_of(work: ProgramWork, folder: Path, ncu: NcuOptions) -> list[tuple[Run, ProgramWork]]:
    """The work's run; where a shared process's report cannot be split back exactly (see
    shared_launches), a process for each of its cases instead."""
    run = run_program(work, folder, ncu)
    if not work.shared or run.returncode != 0 or not isinstance(work.selection(run.report), str):
        return [(run, work)]
    return [(run_program(alone, folder / str(n), ncu), alone) for n, alone in enumerate(work.alone())]


def is_program_run(run: Run, programs: dict[str, ProgramCase]) -> bool:
    return bool(run.cases) and all(status.case in programs for status in run.cases)


def replayed_programs(runs: Sequence[Run], programs: dict[str, ProgramCase]) -> Measurements:
    """What the recorded runs of program cases measured."""
    measured = Measurements.empty()
    for run in runs:
        if is_program_run(run, programs):
            # the run's cases, as they were run: the folder and metrics split nothing back
            ran = [PlannedProgram(s.case, programs[s.case], Path(), frozenset()) for s in run.cases]
            try:
                ours = ProgramWork(tuple(ran)).measurements(run)
            except EnvironmentProblem as problem:  # a recorded log that is not ncu's CSV: damaged
                raise InputError(f"{run.source or 'a recorded run'}: {problem}") from None
            measured = measured.combined(ours)
    return measured
