"""The kinds of work a run profiles (kernel cases, launched by the runner; program cases, launched by
their commands), each measured live or replayed from a recording the same way, so that the profile
stage asks every kind alike and never which kind a case is."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ncuverify.explain import Explanation
from ncuverify.measurements import Measurements
from ncuverify.names import QualifiedCase
from ncuverify.profile import explain_pass, per_file, programs, session
from ncuverify.profile.plan import FileCases
from ncuverify.profile.run import Run

# keys -> each of those files' measurements, with its own case names
Split = Callable[[list[str]], dict[str, Measurements]]
# case -> its explanation; case -> why its second pass gave none
Explained = tuple[dict[str, Explanation], dict[str, str]]


class CaseKind(Protocol):
    def profiled(
        self, files: Sequence[FileCases], work_dir: Path, settings: session.Settings
    ) -> tuple[list[Run], Measurements]:
        """Its cases profiled live: the runs of its ncu processes (to record) and what they measured."""
        ...

    def replayed(self, runs: Sequence[Run], files: Sequence[FileCases]) -> Split:
        """Its cases' measurements from the recorded runs that are its own; InputError for a damaged one."""
        ...

    def explained(
        self,
        wanted: Mapping[QualifiedCase, str],
        files: Sequence[FileCases],
        work_dir: Path,
        settings: session.Settings,
    ) -> Explained:
        """A second pass, with ncu's sections, over those of the wanted cases (qualified name -> topic)
        that are its own: their explanations, and why each other gave none."""
        ...


@dataclass(frozen=True)
class KernelCases:
    def profiled(
        self, files: Sequence[FileCases], work_dir: Path, settings: session.Settings
    ) -> tuple[list[Run], Measurements]:
        return session.profile_files(files, work_dir, settings)

    def replayed(self, runs: Sequence[Run], files: Sequence[FileCases]) -> Split:
        named = programs.program_cases(files)
        built = [run for run in runs if not programs.is_program_run(run, named)]
        symbols = per_file.symbols_of(files)
        return lambda keys: per_file.measurements_by_file(built, keys, symbols)

    def explained(
        self,
        wanted: Mapping[QualifiedCase, str],
        files: Sequence[FileCases],
        work_dir: Path,
        settings: session.Settings,
    ) -> Explained:
        named = programs.program_cases(files)
        ours = {case: topic for case, topic in wanted.items() if str(case.without_launch()) not in named}
        return explain_pass.explain_cases(ours, files, work_dir, settings), {}


@dataclass(frozen=True)
class ProgramCases:
    allowed: bool = True  # whether the run may start programs (else their cases fail saying how)

    def profiled(
        self, files: Sequence[FileCases], work_dir: Path, settings: session.Settings
    ) -> tuple[list[Run], Measurements]:
        return programs.profile_programs(files, work_dir, settings.ncu, settings.gpus[0], self.allowed)

    def replayed(self, runs: Sequence[Run], files: Sequence[FileCases]) -> Split:
        replayed = programs.replayed_programs(
            runs, programs.program_cases(files)
        )  # read now: a damaged log refuses the run
        return lambda keys: per_file.by_file(replayed, keys)

    def explained(
        self,
        wanted: Mapping[QualifiedCase, str],
        files: Sequence[FileCases],
        work_dir: Path,
        settings: session.Settings,
    ) -> Explained:
        if not self.allowed:  # a program runs only where the run allows it
            return {}, {}
        planned = {program.name: program for program in programs.planned_programs(files)}
        ours = {case: topic for case, topic in wanted.items() if str(case.without_launch()) in planned}
        return explain_pass.explain_programs(ours, planned, work_dir, settings)


def kinds(allow_programs: bool = True) -> tuple[CaseKind, ...]:
    """The kinds of cases, in the order their runs are recorded."""
    return (KernelCases(), ProgramCases(allow_programs))


def profiled(
    files: Sequence[FileCases], work_dir: Path, settings: session.Settings, allow_programs: bool
) -> tuple[list[Run], Measurements]:
    """Every kind's cases profiled, kind after kind: their runs, in order, and what they measured."""
    runs: list[Run] = []
    measured = Measurements.empty()
    for kind in kinds(allow_programs):
        ours, by_kind = kind.profiled(files, work_dir, settings)
        runs, measured = [*runs, *ours], measured.combined(by_kind)
    return runs, measured


def explained(
    wanted: Mapping[QualifiedCase, str],
    files: Sequence[FileCases],
    work_dir: Path,
    settings: session.Settings,
    allow_programs: bool,
) -> Explained:
    """Every kind's explanations of the wanted cases, and why some gave none."""
    found: dict[str, Explanation] = {}
    unexplained: dict[str, str] = {}
    for kind in kinds(allow_programs):
        ours, without = kind.explained(wanted, files, work_dir, settings)
        found, unexplained = found | ours, unexplained | without
    return found, unexplained


def replayed(runs: Sequence[Run], files: Sequence[FileCases]) -> Split:
    """Every kind's measurements from the recorded runs, each file's combined."""
    splits = [kind.replayed(runs, files) for kind in kinds()]

    def split(keys: list[str]) -> dict[str, Measurements]:
        combined: dict[str, Measurements] = {}
        for one in splits:
            for key, ours in one(keys).items():
                combined[key] = combined[key].combined(ours) if key in combined else ours
        return combined

    return split
