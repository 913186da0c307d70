"""Launches to cases: each profiled launch given the case that made it, and the values of each case."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

from ncuverify.errors import EnvironmentProblem
from ncuverify.measurements import Measurements, Row
from ncuverify.profile.shown import shown_name, shown_output
from ncuverify.profile.table import LaunchRow
from ncuverify.runner import CaseStatus


def measurements(
    rows: Sequence[LaunchRow], status: Sequence[CaseStatus], symbols: dict[str, str]
) -> Measurements:
    """Give each profiled launch its case: the cases that ran, in order, each as many times as it was
    launched; a case launched more than once gets the median of its launches.

    rows are ncu's, as tidy_rows reads them. symbols maps case -> the mangled kernel name it launches.
    A launch is only ever given to a case of its own kernel: a row for a launch that failed is passed
    over, any other surprise is refused. Cases that ran but have no row (ncu stopped early) are listed
    as unmeasured.
    """
    case_of_launch, expected, position = launch_cases(rows, status, symbols)
    failed = {s.case: str(s.error) for s in status if not s.ok}
    launched: dict[tuple[str, str, str], tuple[list[float], str]] = {}  # in the order of their first rows
    for launch, kernel, metric, value, unit in rows:
        if launch in case_of_launch:
            values, _ = launched.setdefault((case_of_launch[launch], kernel, metric), ([], unit))
            values.append(value)
    medians = [
        (case, kernel, metric, _median(values), unit)
        for (case, kernel, metric), (values, unit) in launched.items()
    ]
    unmeasured = tuple(dict.fromkeys(case for case, _, _ in expected[position:]))
    return Measurements((*medians, *_read_back(status, symbols)), failed, unmeasured)


def launch_cases(
    rows: Sequence[LaunchRow], status: Sequence[CaseStatus], symbols: dict[str, str]
) -> tuple[dict[int, str], list[tuple[str, str, int]], int]:
    """Each launch's case (launches of failed cases passed over), the cases that ran with their kernels
    and launch counts, and how many of those the launches cover (see measurements)."""
    expected = [(s.case, _symbol(s.case, symbols), s.launch_count) for s in status if s.ok]
    failed_kernels = {symbols[s.case] for s in status if not s.ok and s.case in symbols}
    case_of_launch: dict[int, str] = {}
    position, left = 0, expected[0][2] if expected else 0
    kernels: dict[int, str] = {}  # each launch's kernel, as its first row names it
    for launch, kernel, *_ in rows:
        kernels.setdefault(launch, kernel)
    for launch, kernel in sorted(kernels.items()):
        if position < len(expected) and kernel == expected[position][1]:
            case_of_launch[launch] = expected[position][0]
            left -= 1
            if left == 0:
                position += 1
                left = expected[position][2] if position < len(expected) else 0
        elif kernel not in failed_kernels:  # the profiler's row for a launch that failed is passed over
            wanted = expected[position][1] if position < len(expected) else "no further launch"
            raise EnvironmentProblem(
                f"launch {launch} ran {shown_output(str(kernel), 200)}, expected {wanted}: is another profiler or kernel filter in the way?"
            )
    return case_of_launch, expected, position


def _median(values: list[float]) -> float:
    """The median of the launches' values that are numbers (as pandas takes it); NaN if none is."""
    numbers = [value for value in values if not math.isnan(value)]
    return statistics.median(numbers) if numbers else math.nan


def _symbol(case: str, symbols: dict[str, str]) -> str:
    if case not in symbols:
        raise EnvironmentProblem(f"the runner reported case {shown_name(case)}, whose kernel is not known")
    return symbols[case]


def _read_back(status: Sequence[CaseStatus], symbols: dict[str, str]) -> list[Row]:
    """What the runner read back from named buffers, as rows like ncu's."""
    return [
        (s.case, symbols[s.case], metric, float(value), "")
        for s in status
        if s.ok
        for metric, value in (s.values or {}).items()
    ]
