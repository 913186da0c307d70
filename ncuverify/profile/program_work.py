"""What an ncu process of program cases profiles: a program's command, run by ncu, and the program
cases whose launches it selects; with ncu's command line for them and their measurements from its
report."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ncuverify.measurements import Measurements
from ncuverify.profile.command import NcuOptions
from ncuverify.profile.process import visible_device
from ncuverify.profile.program_command import Sections, program_ncu_command
from ncuverify.profile.program_launches import program_measurements
from ncuverify.profile.shown import shown_output
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
    case, into a report); device: the GPU it sees."""

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

    def command(self, options: NcuOptions, log_file: Path) -> list[str]:
        argv = self.argv()
        if isinstance(argv, str):
            raise ValueError(argv)  # run_program fails the cases with why before it asks
        case = self.first.case
        return program_ncu_command(options, case, self.metrics, log_file, argv, self.sections)

    def measurements(self, run: Run) -> Measurements:
        return program_measurements(run.cases[0], run.report, self.first.case)


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
