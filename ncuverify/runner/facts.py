"""The runner run without ncu, for cases whose claims read only launch facts (or only buffers): each
case launched as under ncu, and its facts, computed from the driver's attributes
(`runner/occupancy.py`), written as the rows of ncu's raw page would give them, one row per launch, so
that the profile stage reads them as it reads ncu's report.

A case whose occupancy as worked out is not the driver's own (`cuOccupancyMaxActiveBlocksPerMultiprocessor`)
is not launched: its status says it needs ncu, and the profile stage profiles it with ncu instead.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

from ncuverify.runner.case import Launcher
from ncuverify.runner.occupancy import (
    DRIVER_METRICS,
    FunctionAttributes,
    device_facts,
    launch_facts,
    ncu_text,
    occupancy,
    unit_of,
)
from ncuverify.runner.plan import PlannedCase
from ncuverify.runner.progress import write_atomically
from ncuverify.runner.status import NEEDS_NCU


class NeedsNcu(Exception):
    """A case whose facts the runner does not give: ncu measures it."""


@runtime_checkable
class FactsLauncher(Launcher, Protocol):
    """A launcher that also reads the driver's attributes and occupancy."""

    def device_attributes(self) -> dict[str, int]:
        """The device's attributes of occupancy.DRIVER_DEVICE_ATTRIBUTES, by those names."""
        ...

    def function_attributes(self, kernel: object) -> FunctionAttributes:
        """A loaded kernel's registers per thread and static shared memory."""
        ...

    def active_blocks(self, kernel: object, block_threads: int, dynamic_shared: int) -> int:
        """The driver's occupancy: blocks of the kernel per SM."""
        ...


def case_facts(
    launcher: FactsLauncher, device: Mapping[str, int], case: PlannedCase, metrics: Sequence[str]
) -> dict[str, float]:
    """The metrics of one launch of the case; NeedsNcu where they are not the runner's to give."""
    unknown = sorted(set(metrics) - DRIVER_METRICS)
    if unknown:
        raise NeedsNcu(f"{NEEDS_NCU}: {unknown[0]} is not computed without it")
    kernel = launcher.kernel(case.cubin, case.symbol, case.shared_bytes)
    function = launcher.function_attributes(kernel)
    threads = math.prod(case.block)
    ours = occupancy(device, function, threads, case.shared_bytes).active_blocks
    drivers = launcher.active_blocks(kernel, threads, case.shared_bytes)
    if ours != drivers:
        raise NeedsNcu(
            f"{NEEDS_NCU}: the occupancy worked out ({ours} blocks per SM) is not the driver's ({drivers})"
        )
    computed = launch_facts(device, function, case.grid, case.block, case.shared_bytes)
    computed |= device_facts(device)
    return {metric: computed[metric] for metric in metrics}


@dataclass
class FactsReport:
    """The rows of the launches so far, as ncu's raw page (`--csv --page raw --print-units base`) gives
    them: a header, the units, then one row per launch, numbered from 0 in launch order."""

    path: Path
    metrics: tuple[str, ...]
    rows: list[list[str]] = field(default_factory=list)

    def add(self, symbol: str, facts: Mapping[str, float], launches: int) -> None:
        for _ in range(launches):
            values = [ncu_text(facts[metric]) for metric in self.metrics]
            self.rows.append([str(len(self.rows)), symbol, *values])

    def write(self) -> None:
        """The report so far, rewritten whole (a crash loses no case already measured)."""
        text = io.StringIO()
        writer = csv.writer(text, quoting=csv.QUOTE_ALL, lineterminator="\n")
        writer.writerow(["ID", "Kernel Name", *self.metrics])
        writer.writerow(["", "", *(unit_of(metric) for metric in self.metrics)])
        writer.writerows(self.rows)
        write_atomically(self.path, text.getvalue())


class DriverFacts:
    """The facts of a plan's cases on one launcher, into its report; the device's attributes read once."""

    def __init__(self, launcher: Launcher, report: FactsReport) -> None:
        self.launcher = launcher
        self.report = report
        self._device: dict[str, int] | None = None

    def of(self, case: PlannedCase) -> dict[str, float]:
        """The facts of one launch of the case (before it launches); NeedsNcu where they are not the
        runner's to give."""
        if not isinstance(self.launcher, FactsLauncher):
            raise NeedsNcu(f"{NEEDS_NCU}: this launcher reads no driver attributes")
        if self._device is None:
            self._device = self.launcher.device_attributes()
        return case_facts(self.launcher, self._device, case, self.report.metrics)

    def launched(self, case: PlannedCase, facts: Mapping[str, float]) -> None:
        """The case ran: a row for each of its launches, the report rewritten."""
        self.report.add(case.symbol, facts, case.repeat)
        self.report.write()


def driver_facts(launcher: Launcher, report: str, metrics: Sequence[str]) -> DriverFacts | None:
    """The plan's facts where no ncu runs it (it names its report), else None."""
    if not report:
        return None
    return DriverFacts(launcher, FactsReport(Path(report), tuple(sorted(set(metrics)))))
