"""A program case's launches in ncu's report: those the case selects, made the case's values by its
`combine` (first, last, median, max; each: a case per launch, case#1, case#2, ...)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ncuverify.measurements import MEASUREMENT_COLUMNS, Measurements
from ncuverify.profile.shown import shown_name
from ncuverify.profile.table import DEFAULT_DOMAIN, Range, parse_csv
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


def launch_measurements(table: pd.DataFrame, launches: list[int], name: str, combine: str) -> Measurements:
    """The case's values from its launches' rows of the table."""
    return Measurements.of_frame(_combined(table[table["launch"].isin(launches)], launches, name, combine))


def push_pop_range(rule: str) -> str | None:
    """The range a simple --nvtx-include rule names: `add/`, the push/pop range add of the default
    domain; None for any other rule (a domain, nested ranges, a wildcard, a start/end range, a regex),
    which ncuverify leaves to ncu alone."""
    name = rule.removesuffix("/")
    if not rule.endswith("/") or not name or any(c in name for c in "/@*\\") or name.startswith("regex:"):
        return None
    return name


def in_ranges(case: ProgramCase, ranges: tuple[Range, ...]) -> bool:
    """Whether a launch, in the push/pop ranges given, is one the case's NVTX rules select (each a
    push_pop_range; no rule selects every launch)."""
    if not case.nvtx_include:
        return True
    names = {name for domain, name in ranges if domain == DEFAULT_DOMAIN}
    return any(push_pop_range(rule) in names for rule in case.nvtx_include)


def shared_launches(
    table: pd.DataFrame, ranges: dict[int, tuple[Range, ...]] | None, cases: dict[str, ProgramCase]
) -> dict[str, list[int]] | str:
    """The launches of each case (by name) in the report of an ncu process that profiled the union of
    their selections: each case's own first launch_count, by its kernel selector and NVTX range; or why
    the report cannot be split so that each case gets exactly what a process of its own would give it:
    a launch no case selects (ncu and RE2 read a pattern apart), a launch in nested ranges, a case with
    fewer launches than it asks for (ncu's union may have stopped before its own)."""
    nvtx = any(case.nvtx_include for case in cases.values())
    if nvtx and ranges is None:
        return "ncu's report names no NVTX range"
    owned: dict[str, list[int]] = {name: [] for name in cases}
    launches = table.drop_duplicates("launch").sort_values("launch")
    for launch, kernel in zip(launches["launch"], launches["kernel"], strict=True):
        around = (ranges or {}).get(int(launch), ())
        if nvtx and len(around) > 1:
            return f"launch {launch} lies in nested NVTX ranges"
        owners = [
            name for name, case in cases.items() if case.matches(str(kernel)) and in_ranges(case, around)
        ]
        if not owners:
            return f"ncu profiled launch {launch} of {shown_name(str(kernel), 200)}, which no case selects"
        for name in owners:
            owned[name].append(int(launch))
    for name, case in cases.items():
        if len(owned[name]) < case.launch_count:
            return f"case {shown_name(name)} has {len(owned[name])} of its {case.launch_count} launches"
    return {name: owned[name][: cases[name].launch_count] for name in cases}


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
