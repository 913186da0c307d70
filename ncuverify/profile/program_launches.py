"""A program case's launches in ncu's report: those the case selects, made the case's values by its
`combine` (first, last, median, max; each: a case per launch, case#1, case#2, ...)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ncuverify.measurements import MEASUREMENT_COLUMNS, Measurements
from ncuverify.profile.shown import shown_name
from ncuverify.profile.table import parse_csv
from ncuverify.runner import CaseStatus
from ncuverify.spec.programs import ProgramCase, each_name

if TYPE_CHECKING:  # pandas is imported where a table is made: a static check needs none
    import pandas as pd

NO_LAUNCH = "ncu profiled no launch that the case selects"


def selected_launches(table: pd.DataFrame, case: ProgramCase) -> tuple[list[int], str | None]:
    """The launches of the report, in order, and why they are not the case's where one is not: ncu
    reads the pattern in its own dialect, ncuverify as RE2, and a launch must match both."""
    launches = table.drop_duplicates("launch").sort_values("launch")
    for launch, kernel in zip(launches["launch"], launches["kernel"], strict=True):
        if not case.matches(str(kernel)):
            return [], (
                f"ncu profiled launch {launch} of {shown_name(str(kernel), 200)}, which the case's kernel"
                " selector does not match: write a pattern that ncu and RE2 read alike"
            )
    if launches.empty:
        return [], NO_LAUNCH
    return [int(launch) for launch in launches["launch"]], None


def program_measurements(status: CaseStatus, report: str, case: ProgramCase) -> Measurements:
    """The case's values from the report of its own ncu process (status.case names it)."""
    if not status.ok:
        return Measurements(failed_cases={status.case: str(status.error)})
    table = parse_csv(report)
    launches, problem = selected_launches(table, case)
    if problem is not None:
        return Measurements(failed_cases={status.case: problem})
    rows = table[table["launch"].isin(launches)]
    return Measurements.of_frame(_combined(rows, launches, status.case, case.combine))


def _combined(rows: pd.DataFrame, launches: list[int], name: str, combine: str) -> pd.DataFrame:
    if combine == "each":
        numbers = {launch: each_name(name, number) for number, launch in enumerate(launches, start=1)}
        return rows.assign(case=rows["launch"].map(numbers))[MEASUREMENT_COLUMNS].reset_index(drop=True)
    if combine in ("first", "last"):
        chosen = launches[0] if combine == "first" else launches[-1]
        return rows[rows["launch"] == chosen].assign(case=name)[MEASUREMENT_COLUMNS].reset_index(drop=True)
    kernel = str(rows.sort_values("launch")["kernel"].iloc[0])
    values = rows.groupby("metric", sort=False).agg(value=("value", combine), unit=("unit", "first"))
    return values.reset_index().assign(case=name, kernel=kernel)[MEASUREMENT_COLUMNS]
