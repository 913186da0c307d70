"""The details page of the second pass: which ncu rules fired for each launch, with their text."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ncuverify.errors import InputError
from ncuverify.explain.explanation import RuleFinding
from ncuverify.explain.reading import page_rows
from ncuverify.ncu.numbers import cell_number
from ncuverify.ncu.pages import fit

# Rule text markup: @kind:body@, e.g. @section:SourceCounters:Source Counters@ or @url:Label:https://...@.
_MARKUP = re.compile(r"@([A-Za-z_]+):([^@]*)@")


def render_markup(text: str) -> str:
    """ncu's rule markup as plain text: a section link as its label, a URL link as "label (url)"."""
    return _MARKUP.sub(_render_link, text)


def _render_link(match: re.Match[str]) -> str:
    kind, body = match.group(1).lower(), match.group(2)
    if kind == "url":
        # The URL itself contains colons, so split off the label only; a bare URL has no label.
        label, sep, url = body.partition(":")
        if not sep or url.startswith("//"):
            return body
        return f"{label} ({url})" if label else url
    # @section:Identifier:Label@ and other links: the reader wants the label, the last part.
    return body.rpartition(":")[2] or body


@dataclass(frozen=True)
class DetailsRow:
    launch: int
    values: Mapping[str, str]

    def get(self, column: str) -> str:
        return self.values.get(column, "").strip()


_DETAILS_REQUIRED = ("ID", "Section Name", "Rule Name", "Rule Type", "Rule Description")


def details_rows(details_csv: str) -> list[DetailsRow]:
    rows = page_rows(details_csv, "details", header='"ID"')
    if not rows:
        raise InputError(
            'the ncu details page is not a CSV of the expected shape: no header row starting with "ID" '
            "(expected the output of `ncu -i REPORT --csv --page details --print-details all`)"
        )
    header, records = rows[0], rows[1:]
    missing = [column for column in _DETAILS_REQUIRED if column not in header]
    if missing:
        raise InputError(f"the ncu details page lacks the column(s) {', '.join(missing)}")
    description = header.index("Rule Description")
    return [_details_row(fit(fields, len(header), description), header) for fields in records]


def _details_row(fields: list[str], header: list[str]) -> DetailsRow:
    values = dict(zip(header, fields, strict=False))  # rows are ragged: metric rows stop early
    launch = values.get("ID", "").strip()
    if not launch.isdigit():
        raise InputError(f"the ncu details page has a row whose ID is not a launch index: {launch!r}")
    return DetailsRow(int(launch), values)


def _finding(row: DetailsRow) -> RuleFinding | None:
    """The rule a details row reports, if it is a rule row with something to say."""
    text = render_markup(row.get("Rule Description"))
    if not row.get("Rule Name") or not text:
        return None
    speedup = cell_number(row.get("Estimated Speedup"))
    return RuleFinding(
        rule=row.get("Rule Name"),
        section=row.get("Section Name"),
        severity=row.get("Rule Type"),
        text=" ".join(text.split()),  # ncu pads its sentences with double spaces
        speedup_pct=None if speedup is None or math.isnan(speedup) else speedup,
    )


def rules_by_launch(rows: Sequence[DetailsRow]) -> dict[int, list[RuleFinding]]:
    rules: dict[int, list[RuleFinding]] = {}
    for row in rows:
        found = rules.setdefault(row.launch, [])  # a launch without rules still appears
        finding = _finding(row)
        if finding is not None:
            found.append(finding)
    return rules


def parse_rules(details_csv: str) -> dict[int, list[RuleFinding]]:
    """Launch index (ncu's ID, 0-based in profiling order) -> the rules that fired with text.

    Every launch of the page is a key, one without rules with an empty list.
    """
    return rules_by_launch(details_rows(details_csv))
