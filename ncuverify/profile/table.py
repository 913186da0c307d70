"""ncu's CSV as one tidy table: one row per launch and metric, from the raw page (wide, with a units row)
or the details page (long). Copes with the `==PROF==` preamble, thousands separators and `n/a`."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ncuverify.errors import EnvironmentProblem
from ncuverify.ncu.numbers import parse_number
from ncuverify.ncu.pages import Quoting, UnreadablePage, read_page
from ncuverify.profile.shown import shown_name

if TYPE_CHECKING:  # pandas is imported where a table is made: a static check needs none
    import pandas as pd

# ncu's fixed columns in CSV output; every other column of the raw page is a metric.
_NCU_COLUMNS = {
    "ID",
    "Process ID",
    "Process Name",
    "Host Name",
    "Kernel Name",
    "Kernel Time",
    "Context",
    "Stream",
    "Block Size",
    "Grid Size",
    "Device",
    "CC",
}

TIDY_COLUMNS = ["launch", "kernel", "metric", "value", "unit"]
_DETAILS_COLUMNS = ("Metric Name", "Metric Unit", "Metric Value")


# One launch's value of one metric, as the tidy table holds it.
LaunchRow = tuple[int, str, str, float, str]


def parse_csv(text: str) -> pd.DataFrame:
    """ncu CSV (raw or details page) -> one row per launch and metric: launch, kernel, metric, value, unit.

    Whatever the text, the result is a table or EnvironmentProblem("ncu's CSV could not be read (...)").
    """
    import pandas as pd

    frame = pd.DataFrame(tidy_rows(text), columns=TIDY_COLUMNS)
    return frame.astype({"launch": "int64", "value": "float64"})


def tidy_rows(text: str) -> list[LaunchRow]:
    """parse_csv's rows as plain tuples (what the profile stage reads: no DataFrame needed)."""
    try:
        rows = read_page(text, Quoting.TABLE, header='"ID"')
    except UnreadablePage as error:
        raise _unreadable(str(error)) from None
    if not rows:
        return []
    header, records = rows[0], rows[1:]
    _check_table(header, records)
    if "Metric Name" in header:
        return _parse_details(header, records)
    return _parse_raw(header, records)


def _unreadable(reason: str) -> EnvironmentProblem:
    return EnvironmentProblem(f"ncu's CSV could not be read ({reason})")


def _check_table(header: list[str], records: list[list[str]]) -> None:
    seen: set[str] = set()
    for name in header:
        if name in seen:
            raise _unreadable(f"the column {shown_name(name)} appears twice")
        seen.add(name)
    missing = [name for name in ("ID", "Kernel Name") if name not in seen]
    if missing:
        raise _unreadable(f"no {missing[0]!r} column")
    for number, record in enumerate(records, start=1):
        if record == header:
            raise _unreadable(f"row {number} repeats the header")
        if len(record) != len(header):
            raise _unreadable(f"row {number} has {len(record)} fields, the header {len(header)}")


def _parse_raw(header: list[str], records: list[list[str]]) -> list[LaunchRow]:
    """The raw page: one row per launch, one column per metric, the units in a row of their own."""
    id_at, kernel_at = header.index("ID"), header.index("Kernel Name")
    units = records[0] if records and records[0][id_at] == "" else None
    launches = records[1:] if units is not None else records
    ids = [_launch_id(record[id_at]) for record in launches]
    metric_columns = [i for i, name in enumerate(header) if name not in _NCU_COLUMNS]
    # Metric by metric, each over every launch (the order the table has always had).
    return [
        (launch, record[kernel_at], header[i], parse_number(record[i]), units[i] if units is not None else "")
        for i in metric_columns
        for launch, record in zip(ids, launches, strict=True)
    ]


def _parse_details(header: list[str], records: list[list[str]]) -> list[LaunchRow]:
    """The details page: one row per launch and metric."""
    missing = [name for name in _DETAILS_COLUMNS if name not in header]
    if missing:
        raise _unreadable(f"no {missing[0]!r} column")
    at = {name: header.index(name) for name in ("ID", "Kernel Name", *_DETAILS_COLUMNS)}
    return [
        (
            _launch_id(r[at["ID"]]),
            r[at["Kernel Name"]],
            r[at["Metric Name"]],
            parse_number(r[at["Metric Value"]]),
            r[at["Metric Unit"]],
        )
        for r in records
    ]


def _launch_id(text: str) -> int:
    """A launch's ID: ncu numbers them 0, 1, 2, ..."""
    if not (text.isascii() and text.isdigit() and len(text) <= 9):
        raise _unreadable(f"the launch ID {shown_name(text)} is not a number")
    return int(text)


# ncu's column (with --nvtx) of the push/pop ranges open on the launching thread: its thread's ID, then
# each range, outermost first, as `"<domain>:<range>:<payload type>:<payload>:<color type>:<color>:
# <message type>:<message>"`.
PUSH_POP_COLUMN = "thread Domain:Push/Pop_Range:"
DEFAULT_DOMAIN = "<default domain>"
_RANGE_FIELDS = 8
_RANGES_CELL = re.compile(r'\s*(?:[0-9]+\s*((?:"+[^"]*"+\s*)*))?')  # empty: no thread, no range
_RANGE = re.compile(r'"+([^"]*)"+')

# A push/pop range open on a launch's thread: its domain and its name.
Range = tuple[str, str]


def launch_ranges(text: str) -> dict[int, tuple[Range, ...]] | None:
    """Each launch of ncu's CSV (raw or details page) with the push/pop ranges open on its thread,
    outermost first; None where the page has no such column (ncu ran without --nvtx)."""
    try:
        rows = read_page(text, Quoting.TABLE, header='"ID"')
    except UnreadablePage as error:
        raise _unreadable(str(error)) from None
    if not rows:
        return {}
    header = rows[0]
    found = [i for i, name in enumerate(header) if name.startswith(PUSH_POP_COLUMN)]
    if not found or "ID" not in header:
        return None
    id_at, ranges_at = header.index("ID"), found[0]
    records = [record for record in rows[1:] if len(record) > max(id_at, ranges_at) and record[id_at]]
    return {_launch_id(record[id_at]): _ranges(record[ranges_at]) for record in records}


def _ranges(cell: str) -> tuple[Range, ...]:
    """`1144  "<default domain>:add:none:none:none:none:none:none" ` -> (("<default domain>", "add"),)."""
    matched = _RANGES_CELL.fullmatch(cell)
    if matched is None:
        raise _unreadable(f"the NVTX ranges {shown_name(cell)} are not ncu's")
    ranges = []
    for item in _RANGE.findall(matched.group(1) or ""):
        fields = item.split(":")
        if len(fields) < _RANGE_FIELDS:
            raise _unreadable(f"the NVTX range {shown_name(item)} is not ncu's")
        ranges.append((fields[0], ":".join(fields[1 : len(fields) - _RANGE_FIELDS + 2])))
    return tuple(ranges)
