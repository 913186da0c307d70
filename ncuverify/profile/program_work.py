"""What an ncu process of program cases profiles: a program's command, run by ncu, and the program
cases whose launches it selects; with ncu's command line for them and their measurements from its
report."""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ncuverify.errors import EnvironmentProblem
from ncuverify.measurements import Measurements
from ncuverify.profile.command import NcuOptions
from ncuverify.profile.process import visible_device
from ncuverify.profile.program_command import Sections, program_ncu_command
from ncuverify.profile.program_launches import (
    launch_measurements,
    program_measurements,
    push_pop_range,
    shared_launches,
)
from ncuverify.profile.shown import shown_output
from ncuverify.profile.table import launch_ranges, parse_csv
from ncuverify.spec.programs import ProgramCase

if TYPE_CHECKING:  # run is imported by what runs programs: a Run is only named here
    from ncuverify.profile.run import Run

# What of the program's own environment it keeps: where programs are, whose home, where temporary files go.
KEPT_VARIABLES = ("PATH", "HOME", "TMPDIR", "USER", "LOGNAME")


@dataclass(frozen=True)
class PlannedProgram:
    """A program case of a file, to run: its qualified name, the case, its file's folder, its metrics."""

    name: str
    case: ProgramCase
    folder: Path
    metrics: frozenset[str]


@dataclass(frozen=True)
class ProgramWork:
    """A program's command under ncu, for its program cases (with sections: for one launch of the one
    case, into a report); device: the GPU it sees. Cases that share_key puts together share one
    process: ncu profiles the union of their selections (`selector`), and each case's launches are
    found again in its report by kernel name and NVTX range (`selection`)."""

    programs: tuple[PlannedProgram, ...]
    device: int | None = None
    sections: Sections | None = None

    @property
    def first(self) -> PlannedProgram:
        return self.programs[0]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(program.name for program in self.programs)

    @property
    def metrics(self) -> frozenset[str]:
        return frozenset(metric for program in self.programs for metric in program.metrics)

    @property
    def written(self) -> str:
        """The command as the file writes it."""
        return " ".join(self.first.case.program.command)

    @property
    def environment(self) -> dict[str, str]:
        return program_environment(self.first.case, self.device)

    @property
    def cwd(self) -> Path:
        return (self.first.folder / (self.first.case.program.cwd or ".")).resolve()

    @property
    def timeout_s(self) -> float:
        return self.first.case.program.timeout_s

    def argv(self) -> list[str] | str:
        """The command with its program found, or why not."""
        return program_argv(self.first.case, self.first.folder, self.environment["PATH"])

    @property
    def shared(self) -> bool:
        return len(self.programs) > 1

    @property
    def selector(self) -> ProgramCase:
        """The launches ncu profiles: the one case's, or the union of the cases' (their kernel patterns
        as alternatives, their NVTX ranges, as many launches as they ask for together)."""
        if not self.shared:
            return self.first.case
        cases = [program.case for program in self.programs]
        update: dict[str, object] = {
            "nvtx_include": list(dict.fromkeys(rule for case in cases for rule in case.nvtx_include)),
            "launch_count": sum(case.launch_count for case in cases),
        }
        patterns = list(dict.fromkeys(case.kernel for case in cases if case.kernel is not None))
        if len(patterns) > 1:
            update["kernel"] = "|".join(f"({pattern})" for pattern in patterns)
        return cases[0].model_copy(update=update)

    def command(self, options: NcuOptions, log_file: Path) -> list[str]:
        argv = self.argv()
        if isinstance(argv, str):
            raise ValueError(argv)  # run_program fails the cases with why before it asks
        return program_ncu_command(options, self.selector, self.metrics, log_file, argv, self.sections)

    def selection(self, report: str) -> dict[str, list[int]] | str:
        """Each case's launches in the report of a shared process, or why it cannot be split back."""
        try:
            table, ranges = parse_csv(report), launch_ranges(report)
        except EnvironmentProblem as unreadable:
            return str(unreadable)
        return shared_launches(table, ranges, {program.name: program.case for program in self.programs})

    def measurements(self, run: Run) -> Measurements:
        if not self.shared:
            return program_measurements(run.cases[0], run.report, self.first.case)
        if share_key(self.first) is None or len({share_key(program) for program in self.programs}) > 1:
            raise EnvironmentProblem("its cases run different commands or selections: they share no process")
        failed = {status.case: str(status.error) for status in run.cases if not status.ok}
        measured = Measurements(failed_cases=failed)
        if len(failed) == len(run.cases):
            return measured
        selection = self.selection(run.report)
        if isinstance(selection, str):  # a live run that cannot be split runs its cases alone
            raise EnvironmentProblem(f"ncu's report of a shared process cannot be split: {selection}")
        table = parse_csv(run.report)
        for program in self.programs:
            if program.name not in failed:
                launches, combine = selection[program.name], program.case.combine
                measured = measured.combined(launch_measurements(table, launches, program.name, combine))
        return measured

    def alone(self) -> list[ProgramWork]:
        """Each case in a process of its own."""
        return [ProgramWork((program,), self.device, self.sections) for program in self.programs]


def share_key(planned: PlannedProgram) -> tuple[object, ...] | None:
    """What cases must have alike to share an ncu process: the same command (words, folder, working
    folder, environment, time limit, processes profiled), the same NVTX exclusions, and NVTX ranges or
    none; kernel patterns may differ, exact names may not. None for a case that runs alone: one that
    skips launches (ncu's count starts after a skip, which is the case's alone), or one with an NVTX
    rule other than a push/pop range of the default domain (its meaning is left to ncu)."""
    case = planned.case
    if case.launch_skip or any(push_pop_range(rule) is None for rule in case.nvtx_include):
        return None
    program = case.program
    return (
        planned.folder.resolve(),
        tuple(program.command),
        program.cwd,
        tuple(sorted(program.env.items())),
        program.timeout_s,
        case.target_processes,
        tuple(case.nvtx_exclude),
        bool(case.nvtx_include),
        case.kernel_exact,
    )


def program_works(
    planned: Sequence[PlannedProgram], device: int | None, shared: bool = True
) -> list[ProgramWork]:
    """The ncu processes of the program cases, in the order of their first case: those of one share_key
    together where shared, else one each."""
    groups: dict[object, list[PlannedProgram]] = {}
    for number, program in enumerate(planned):
        key = share_key(program) if shared else None
        groups.setdefault(number if key is None else key, []).append(program)
    return [ProgramWork(tuple(programs), device) for programs in groups.values()]


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
