"""The one reader of ncu's CSV pages (raw, details, source), bounded for every page it reads.

ncu quotes every field. Its metric pages (raw; details without rules) are tables: every row has the
header's fields, read strictly as CSV, so that a damaged report is refused rather than misread. Its
pages of free text (the details page with its rules, the source page) are written by hand: quotes
inside a field are not doubled (`"extern "C" __global__ ..."`) and rows are ragged (metric rows stop
after "Metric Value", rule rows run to "Estimated Speedup"). A standard CSV reader splits such rows in
the wrong places, so they are split by ncu's own rule (`_split_text`).
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator
from enum import Enum

# Far more than ncu prints (about 300 columns a launch on the raw page, device attributes included):
# bounds on what a broken or hostile report can make the parser hold.
MAX_CSV_COLUMNS = 10_000
MAX_CSV_CELLS = 4_000_000


class Quoting(Enum):
    """How a page's rows are split."""

    TABLE = "table"  # strict CSV: a field's quotes doubled, nothing after a closing quote but a comma
    TEXT = "text"  # ncu's free text: quotes inside a field as they are


class UnreadablePage(ValueError):
    """A page that cannot be read; the message says why, to be worded by the caller."""


def read_page(text: str, quoting: Quoting, header: str | None = None) -> list[list[str]]:
    """The rows of an ncu page: its lines that start with a quote (ncu's `==PROF==` lines, blank lines
    and anything else ncu printed are not CSV), from the first that starts with header where one is
    given ([] where none does). Before any row after the first is split, the first row's width and
    that width times the rows after it are bounded; as the rows are split, so are all their values."""
    lines = [line for line in (raw.strip() for raw in text.splitlines()) if line.startswith('"')]
    if header is not None:
        start = next((i for i, line in enumerate(lines) if line.startswith(header)), len(lines))
        lines = lines[start:]
    if not lines:
        return []
    split = _split_table if quoting is Quoting.TABLE else _split_text
    first = next(split(lines[:1]))
    check_size(len(first), len(lines) - 1)
    rows, cells = [first], 0
    for row in split(lines[1:]):
        cells += len(row)
        if cells > MAX_CSV_CELLS:
            raise UnreadablePage(f"rows of more than {MAX_CSV_CELLS} values in all")
        rows.append(row)
    return rows


def check_size(columns: int, rows: int) -> None:
    """Refuse, before reading them, more columns or values than any report of ncu's holds."""
    if columns > MAX_CSV_COLUMNS:
        raise UnreadablePage(f"{columns} columns, more than {MAX_CSV_COLUMNS}")
    if columns * rows > MAX_CSV_CELLS:
        raise UnreadablePage(f"{rows} rows of {columns} columns, more than {MAX_CSV_CELLS} values")


def _split_table(lines: Iterable[str]) -> Iterator[list[str]]:
    try:
        yield from csv.reader(lines, strict=True)
    except csv.Error as error:
        raise UnreadablePage(str(error)) from None


def _split_text(lines: Iterable[str]) -> Iterator[list[str]]:
    return (_split_record(line) for line in lines)


def _split_record(line: str) -> list[str]:
    """Split one row as ncu writes it: quoted fields, quotes inside them not escaped.

    A quoted field ends at a quote followed by `,"`, by a comma at the end of the line, or by the end of
    the line, which is how ncu separates fields; a quote followed by anything else is part of the text.
    """
    fields: list[str] = []
    i, n = 0, len(line)
    while True:
        if i < n and line[i] == '"':
            end = _closing_quote(line, i + 1)
            fields.append(line[i + 1 : end])
            i = end + 1
        else:
            comma = line.find(",", i)
            end = n if comma == -1 else comma
            fields.append(line[i:end].strip())
            i = end
        if i >= n:
            return fields
        i += 1  # the comma
        if i == n:  # a trailing comma opens one last, empty field
            fields.append("")
            return fields


def _closing_quote(line: str, start: int) -> int:
    n = len(line)
    quote = line.find('"', start)
    while quote != -1:
        after = line[quote + 1 : quote + 3]
        if after in ("", ",", ',"'):
            return quote
        quote = line.find('"', quote + 1)
    return n  # no closing quote: the field runs to the end of the line


def fit(fields: list[str], width: int, text_column: int | None) -> list[str]:
    """Rejoin a free-text field that `_split_record` split on a `","` inside it.

    Only one column of a row holds free text (a source line, a rule description), so the surplus
    fields of a row wider than its header belong there.
    """
    surplus = len(fields) - width
    if surplus <= 0 or text_column is None or text_column >= len(fields):
        return fields
    end = text_column + surplus + 1
    return [*fields[:text_column], '","'.join(fields[text_column:end]), *fields[end:]]
