"""Launches to cases: each profiled launch given the case that made it, and the values of each case."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ncuverify.errors import EnvironmentProblem
from ncuverify.measurements import MEASUREMENT_COLUMNS, Measurements
from ncuverify.profile.shown import shown_name, shown_output
from ncuverify.runner import CaseStatus

if TYPE_CHECKING:  # pandas is imported where a table is made: a static check needs none
    import pandas as pd


def measurements(table: pd.DataFrame, status: Sequence[CaseStatus], symbols: dict[str, str]) -> Measurements:
    """Give each profiled launch its case: the cases that ran, in order, each as many times as it was
    launched; a case launched more than once gets the median of its launches.

    symbols maps case -> the mangled kernel name it launches. A launch is only ever given to a case
    of its own kernel: a row for a launch that failed is passed over, any other surprise is refused.
    Cases that ran but have no row (ncu stopped early) are listed as unmeasured.
    """
    import pandas as pd

    expected = [(s.case, _symbol(s.case, symbols), s.launch_count) for s in status if s.ok]
    failed = {s.case: str(s.error) for s in status if not s.ok}
    failed_kernels = {symbols[case] for case in failed if case in symbols}
    case_of_launch: dict[int, str] = {}
    position, left = 0, expected[0][2] if expected else 0
    launches = table.drop_duplicates("launch").sort_values("launch")
    for launch, kernel in zip(launches["launch"], launches["kernel"], strict=True):
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
    frame = table[table["launch"].isin(case_of_launch)]
    frame = frame.assign(case=frame["launch"].map(case_of_launch))
    medians = frame.groupby(["case", "kernel", "metric"], sort=False).agg(
        value=("value", "median"), unit=("unit", "first")
    )
    frame = pd.concat(
        [medians.reset_index()[MEASUREMENT_COLUMNS], _read_back(status, symbols)], ignore_index=True
    )
    unmeasured = tuple(dict.fromkeys(case for case, _, _ in expected[position:]))
    return Measurements.of_frame(frame, failed, unmeasured)


def _symbol(case: str, symbols: dict[str, str]) -> str:
    if case not in symbols:
        raise EnvironmentProblem(f"the runner reported case {shown_name(case)}, whose kernel is not known")
    return symbols[case]


def _read_back(status: Sequence[CaseStatus], symbols: dict[str, str]) -> pd.DataFrame:
    """What the runner read back from named buffers, as rows like ncu's."""
    import pandas as pd

    rows = [
        (s.case, symbols[s.case], metric, value, "")
        for s in status
        if s.ok
        for metric, value in (s.values or {}).items()
    ]
    return pd.DataFrame(rows, columns=MEASUREMENT_COLUMNS)
