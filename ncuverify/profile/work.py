"""What one process profiles, whatever its kind: the runner with a plan of kernel cases under ncu, a
program's command with its program cases under ncu, or the runner alone with a plan of cases that need
no ncu (their launch facts from the driver). Each the same four things: the cases it reports on (what
progress names, what a fault fails), its metrics, its command line, and how its report splits back
into each case's measurements."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ncuverify.measurements import Measurements
from ncuverify.profile.cases import measurements
from ncuverify.profile.command import NcuOptions, ncu_command
from ncuverify.profile.table import tidy_rows
from ncuverify.runner import PlannedCase
from ncuverify.runner.occupancy import DEFAULT_FACT

if TYPE_CHECKING:  # run imports this module: a Run is only named here
    from ncuverify.profile.run import Run


class Work(Protocol):
    """What an ncu process profiles."""

    @property
    def names(self) -> tuple[str, ...]:
        """Its cases' qualified names, as its progress and its faults name them."""
        ...

    @property
    def metrics(self) -> frozenset[str]:
        """What ncu collects for its cases."""
        ...

    def command(self, options: NcuOptions, log_file: Path) -> list[str]:
        """ncu's command line, its report going to log_file."""
        ...

    def measurements(self, run: Run) -> Measurements:
        """The run's report split back into each case's values (cases that failed, with why)."""
        ...


def refused(work: Work, reason: str) -> Measurements:
    """Every case of the work failed with reason, where its process is not run at all."""
    return Measurements(failed_cases=dict.fromkeys(work.names, reason))


@dataclass(frozen=True)
class KernelWork:
    """Kernel cases, launched by the runner from its plan file; ncu profiles only their kernels (by
    mangled name) and collects metrics, or sections into report_file."""

    cases: tuple[PlannedCase, ...]
    metrics: frozenset[str]
    plan_file: Path
    report_file: Path | None = None
    sections: tuple[str, ...] = ()

    @classmethod
    def of(
        cls,
        cases: Sequence[PlannedCase],
        metrics: Iterable[str],
        plan_file: Path,
        report_file: Path | None = None,
        sections: Sequence[str] = (),
    ) -> KernelWork:
        return cls(tuple(cases), frozenset(metrics), plan_file, report_file, tuple(sections))

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(case.name for case in self.cases)

    @property
    def symbols(self) -> dict[str, str]:
        """case -> the mangled kernel name it launches."""
        return {case.name: case.symbol for case in self.cases}

    def command(self, options: NcuOptions, log_file: Path) -> list[str]:
        symbols = [case.symbol for case in self.cases]
        return ncu_command(
            options, self.metrics, symbols, log_file, self.plan_file, self.report_file, self.sections
        )

    def measurements(self, run: Run) -> Measurements:
        return run_measurements(run, self.symbols)


@dataclass(frozen=True)
class DriverWork:
    """Kernel cases whose claims read only launch facts (or only buffers), launched by the runner with no
    ncu: the runner writes each launch's facts, computed from the driver's attributes, into its report
    as ncu's raw page would give them (runner/facts.py), so that the report splits back as ncu's does."""

    cases: tuple[PlannedCase, ...]
    metrics: frozenset[str]
    plan_file: Path

    @classmethod
    def of(cls, cases: Sequence[PlannedCase], metrics: Iterable[str], plan_file: Path) -> DriverWork:
        # a case that reads only buffers still gets a row per launch, as ncu is asked for the time
        return cls(tuple(cases), frozenset(metrics) or frozenset([DEFAULT_FACT]), plan_file)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(case.name for case in self.cases)

    def command(self, options: NcuOptions, log_file: Path) -> list[str]:
        """The runner itself (the plan names log_file as its report)."""
        return runner_command(self.plan_file)

    def measurements(self, run: Run) -> Measurements:
        return run_measurements(run, {case.name: case.symbol for case in self.cases})


def runner_command(plan_file: Path) -> list[str]:
    return [sys.executable, "-m", "ncuverify.runner", str(plan_file)]


def is_driver_command(command: Sequence[str]) -> bool:
    """Whether a run's command (as a recording keeps it) started the runner with no ncu."""
    return list(command[1:3]) == ["-m", "ncuverify.runner"]


def run_measurements(run: Run, symbols: dict[str, str]) -> Measurements:
    """A run's measurements; each case's kernel comes from the status (the runner writes it) or symbols."""
    known = {s.case: s.kernel for s in run.cases if s.kernel}
    return measurements(tidy_rows(run.report), run.cases, {**symbols, **known})
