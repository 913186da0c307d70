"""Explanations for failed coalescing and bank-conflict claims, read from a second ncu pass.

That pass profiles the failing cases with `--section SourceCounters --section
MemoryWorkloadAnalysis_Tables` and its report is imported twice: the details page (which ncu rules
fired, with their text) and the source page (per CUDA source line, how many sectors or wavefronts were
excessive). This module parses both texts and picks what explains a failure.

ncu writes these CSV pages by hand rather than through a CSV library: every field is quoted but quotes
inside a field are not doubled (`"extern "C" __global__ ..."`), and rows of the details page are ragged
(metric rows stop after "Metric Value", rule rows run to "Estimated Speedup"). A standard CSV reader
splits such rows in the wrong places, so the rows are split here by `_split_record`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ncuverify.errors import InputError


@dataclass(frozen=True)
class Topic:
    """What explains one kind of claim: a per-line metric of the source page and the ncu rules."""

    name: str
    excess_metric: str  # source-page column: what this line did beyond the ideal
    total_metric: str  # source-page column: what this line did in all, to put the excess in proportion
    rules: tuple[str, ...]  # ncu rule names that speak about this topic
    unit: str  # what the metrics count, for the report


# Read-only so that no caller can change what another one sees.
TOPICS: Mapping[str, Topic] = MappingProxyType(
    {
        "global": Topic(
            name="global",
            excess_metric="L2 Theoretical Sectors Global Excessive",
            total_metric="L2 Theoretical Sectors Global",
            rules=("UncoalescedGlobalAccess", "MemoryCacheAccessPattern"),
            unit="sectors",
        ),
        "shared": Topic(
            name="shared",
            excess_metric="L1 Wavefronts Shared Excessive",
            total_metric="L1 Wavefronts Shared",
            rules=("SharedMemoryConflicts", "UncoalescedSharedAccess"),
            unit="wavefronts",
        ),
    }
)

# ncu writes these in log lines (==PROF==, ==WARNING==, ==ERROR==) that can precede the CSV.
_LOG_PREFIX = "=="
# Values ncu prints where a metric has no value for a row.
_NO_VALUE = frozenset({"", "-", "n/a", "N/A"})
# ncu groups digits in threes ("3,670,016"); anything else with a comma is text, not a number.
_GROUPED_NUMBER = re.compile(r"[+-]?\d{1,3}(?:,\d{3})+(?:\.\d*)?")
# Rule text markup: @kind:body@, e.g. @section:SourceCounters:Source Counters@ or @url:Label:https://...@.
_MARKUP = re.compile(r"@([A-Za-z_]+):([^@]*)@")
# Source-page columns that describe a row rather than measure it.
_SOURCE_DESCRIPTIVE = frozenset({"Line No", "Source", "Address"})


def topic_of(metric_names: Iterable[str]) -> str | None:
    """The topic of a claim, from the ncu metric names it reads; None when no topic fits.

    Shared memory wins over global memory: a claim that reads both is about the shared-memory side,
    since the global side of such kernels is usually only the loads that feed the tile.
    """
    names = [name.lower() for name in metric_names]
    if any("shared" in name or "bank_conflicts" in name for name in names):
        return "shared"
    if any(_concerns_global(name) for name in names):
        return "global"
    return None


def _concerns_global(name: str) -> bool:
    return (
        "global" in name
        or name.startswith(("dram__", "lts__"))
        or name.startswith("smsp__sass_average_data_bytes_per_sector")
    )


@dataclass(frozen=True)
class RuleFinding:
    rule: str  # e.g. "UncoalescedSharedAccess"
    section: str  # the section identifier as ncu printed it, e.g. "SourceCounters"
    severity: str  # ncu's Rule Type: "OPT", "WRN", "INF", ...
    text: str  # the rule's description, markup rendered as plain text
    speedup_pct: float | None  # ncu's estimated speedup in percent, where it gave one


@dataclass(frozen=True)
class SourceLine:
    file: str  # as ncu printed it (absolute on the machine that profiled)
    line: int
    text: str  # the source text, stripped
    excess: float  # the topic's excess metric on this line
    share: float  # excess / the excess of all lines of the launch, 0..1
    total: float | None = None  # the topic's total metric on this line, where ncu gave it


@dataclass(frozen=True)
class Explanation:
    kernel: str
    topic: str
    rules: tuple[RuleFinding, ...]
    lines: tuple[SourceLine, ...]
    # False when ncu had no CUDA source lines for the launch (kernel built without line info): then
    # "no lines" means "could not attribute", not "nothing to attribute".
    line_info: bool = True

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able data; `from_dict` reads it back."""
        return {
            "kernel": self.kernel,
            "topic": self.topic,
            "rules": [_rule_dict(rule) for rule in self.rules],
            "lines": [_line_dict(line) for line in self.lines],
            "line_info": self.line_info,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Explanation:
        return cls(
            kernel=str(data["kernel"]),
            topic=str(data["topic"]),
            rules=tuple(RuleFinding(**rule) for rule in data.get("rules", ())),
            lines=tuple(SourceLine(**line) for line in data.get("lines", ())),
            line_info=bool(data.get("line_info", True)),
        )


def _rule_dict(rule: RuleFinding) -> dict[str, Any]:
    return {
        "rule": rule.rule,
        "section": rule.section,
        "severity": rule.severity,
        "text": rule.text,
        "speedup_pct": rule.speedup_pct,
    }


def _line_dict(line: SourceLine) -> dict[str, Any]:
    return {
        "file": line.file,
        "line": line.line,
        "text": line.text,
        "excess": line.excess,
        "share": line.share,
        "total": line.total,
    }


@dataclass(frozen=True)
class LineRow:
    """One CUDA source line of the source page, with that line's metrics aggregated over its SASS."""

    file: str
    line: int
    text: str
    metrics: Mapping[str, float]  # NaN where ncu printed "-" or "n/a"; text-valued columns left out


@dataclass(frozen=True)
class SourceBlock:
    """One profiled launch of the source page."""

    kernel: str
    lines: tuple[LineRow, ...]


# ---------------------------------------------------------------------------------------------------
# Splitting ncu's CSV


def _records(text: str) -> Iterator[list[str]]:
    """The rows of an ncu CSV page, without ncu's log lines and blank lines."""
    for raw in text.splitlines():
        line = raw.strip()
        if line and not line.startswith(_LOG_PREFIX):
            yield _split_record(line)


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


def _fit(fields: list[str], width: int, text_column: int | None) -> list[str]:
    """Rejoin a free-text field that `_split_record` split on a `","` inside it.

    Only one column of a row holds free text (a source line, a rule description), so the surplus
    fields of a row wider than its header belong there.
    """
    surplus = len(fields) - width
    if surplus <= 0 or text_column is None or text_column >= len(fields):
        return fields
    end = text_column + surplus + 1
    return [*fields[:text_column], '","'.join(fields[text_column:end]), *fields[end:]]


def _number(value: str) -> float | None:
    """A value of an ncu CSV as a float: NaN where ncu gave none, None where the value is text."""
    value = value.strip()
    if value in _NO_VALUE:
        return math.nan
    if _GROUPED_NUMBER.fullmatch(value):
        value = value.replace(",", "")
    try:
        return float(value)
    except ValueError:
        return None


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


# ---------------------------------------------------------------------------------------------------
# The details page: rules


@dataclass(frozen=True)
class _DetailsRow:
    launch: int
    values: Mapping[str, str]

    def get(self, column: str) -> str:
        return self.values.get(column, "").strip()


_DETAILS_REQUIRED = ("ID", "Section Name", "Rule Name", "Rule Type", "Rule Description")


def _details_rows(details_csv: str) -> list[_DetailsRow]:
    records = _records(details_csv)
    header = next((fields for fields in records if fields[0] == "ID"), None)
    if header is None:
        raise InputError(
            'the ncu details page is not a CSV of the expected shape: no header row starting with "ID" '
            "(expected the output of `ncu -i REPORT --csv --page details --print-details all`)"
        )
    missing = [column for column in _DETAILS_REQUIRED if column not in header]
    if missing:
        raise InputError(f"the ncu details page lacks the column(s) {', '.join(missing)}")
    description = header.index("Rule Description")
    return [_details_row(_fit(fields, len(header), description), header) for fields in records]


def _details_row(fields: list[str], header: list[str]) -> _DetailsRow:
    values = dict(zip(header, fields, strict=False))  # rows are ragged: metric rows stop early
    launch = values.get("ID", "").strip()
    if not launch.isdigit():
        raise InputError(f"the ncu details page has a row whose ID is not a launch index: {launch!r}")
    return _DetailsRow(int(launch), values)


def _finding(row: _DetailsRow) -> RuleFinding | None:
    """The rule a details row reports, if it is a rule row with something to say."""
    text = render_markup(row.get("Rule Description"))
    if not row.get("Rule Name") or not text:
        return None
    speedup = _number(row.get("Estimated Speedup"))
    return RuleFinding(
        rule=row.get("Rule Name"),
        section=row.get("Section Name"),
        severity=row.get("Rule Type"),
        text=" ".join(text.split()),  # ncu pads its sentences with double spaces
        speedup_pct=None if speedup is None or math.isnan(speedup) else speedup,
    )


def _rules_by_launch(rows: Sequence[_DetailsRow]) -> dict[int, list[RuleFinding]]:
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
    return _rules_by_launch(_details_rows(details_csv))


# ---------------------------------------------------------------------------------------------------
# The source page: lines


@dataclass(frozen=True)
class _Columns:
    """Where a source-page header puts the columns this module reads."""

    names: tuple[str, ...]
    source: int  # the first "Source" column is the CUDA text; the second one is the SASS text

    @classmethod
    def of(cls, header: list[str]) -> _Columns:
        if "Source" not in header:
            raise InputError('the ncu source page has a "Line No" header without a "Source" column')
        return cls(tuple(header), header.index("Source"))


def parse_source(source_csv: str) -> list[SourceBlock]:
    """One block per profiled launch, in launch order, with its CUDA source lines.

    A launch runs from a "Function Name" row to the next one. A "File Path" row sets the file of the
    rows after it, which ncu prints before the "Function Name" row and again within a launch where the
    kernel spans several files (inlined headers). SASS rows (no line number) are skipped: the CUDA line
    row above them already holds their sum.
    """
    blocks: list[SourceBlock] = []
    kernel: str | None = None
    lines: list[LineRow] = []
    file = ""
    columns: _Columns | None = None
    for fields in _records(source_csv):
        key = fields[0]
        if key == "File Path":
            file = _second(fields)
        elif key == "Function Name":
            if kernel is not None:
                blocks.append(SourceBlock(kernel, tuple(lines)))
            kernel, lines = _second(fields), []
        elif key == "Line No":
            columns = _Columns.of(fields)
        elif columns is not None and key.isdigit():
            kernel = "" if kernel is None else kernel  # rows before any "Function Name": unnamed launch
            lines.append(_line_row(_fit(fields, len(columns.names), columns.source), columns, file))
    if columns is None:
        raise InputError(
            'the ncu source page is not a CSV of the expected shape: no header row starting with "Line No" '
            "(expected the output of `ncu -i REPORT --csv --page source --print-source cuda,sass`)"
        )
    if kernel is not None:
        blocks.append(SourceBlock(kernel, tuple(lines)))
    return blocks


def _second(fields: list[str]) -> str:
    return fields[1].strip() if len(fields) > 1 else ""


def _line_row(fields: list[str], columns: _Columns, file: str) -> LineRow:
    metrics: dict[str, float] = {}
    for name, value in zip(columns.names, fields, strict=False):
        number = _number(value)
        if name not in _SOURCE_DESCRIPTIVE and number is not None:
            metrics[name] = number
    text = fields[columns.source] if columns.source < len(fields) else ""
    return LineRow(file=file, line=int(fields[0]), text=text.strip(), metrics=MappingProxyType(metrics))


# ---------------------------------------------------------------------------------------------------
# Explaining one launch


def explain(details_csv: str, source_csv: str, launch: int, topic: str, top: int = 3) -> Explanation:
    """What explains a failed claim of `topic` on the `launch`-th profiled launch (0-based).

    The rules of that launch that speak about the topic, and the `top` source lines with the largest
    nonzero excess, largest first.
    """
    spec = _topic(topic)
    rows = _details_rows(details_csv)
    rules = _rules_by_launch(rows)
    blocks = parse_source(source_csv)
    block = blocks[launch] if 0 <= launch < len(blocks) else None
    if block is None and launch not in rules:
        raise InputError(
            f"launch {launch} is in neither ncu page: the details page has launches "
            f"{sorted(rules)}, the source page {len(blocks)}"
        )
    return Explanation(
        kernel=block.kernel if block else _kernel_name(rows, launch),
        topic=spec.name,
        rules=tuple(rule for rule in rules.get(launch, ()) if rule.rule in spec.rules),
        lines=_worst_lines(block.lines if block else (), spec, top),
        line_info=bool(block and block.lines),
    )


def _topic(topic: str) -> Topic:
    if topic not in TOPICS:
        raise ValueError(f"unknown topic {topic!r}; known: {', '.join(TOPICS)}")
    return TOPICS[topic]


def _kernel_name(rows: Sequence[_DetailsRow], launch: int) -> str:
    return next((row.get("Kernel Name") for row in rows if row.launch == launch), "")


def _worst_lines(rows: Sequence[LineRow], topic: Topic, top: int) -> tuple[SourceLine, ...]:
    excess = [_finite(row.metrics.get(topic.excess_metric)) for row in rows]
    whole = sum(excess)
    if whole <= 0:
        return ()
    # sorted() is stable, so lines with equal excess stay in source order.
    ranked = sorted((pair for pair in zip(excess, rows, strict=True) if pair[0] > 0), key=lambda p: -p[0])
    return tuple(_source_line(row, value, whole, topic) for value, row in ranked[: max(top, 0)])


def _finite(value: float | None) -> float:
    return value if value is not None and math.isfinite(value) else 0.0


def _source_line(row: LineRow, excess: float, whole: float, topic: Topic) -> SourceLine:
    total = row.metrics.get(topic.total_metric)
    return SourceLine(
        file=row.file,
        line=row.line,
        text=row.text,
        excess=excess,
        share=excess / whole,
        total=total if total is not None and math.isfinite(total) else None,
    )


# ---------------------------------------------------------------------------------------------------
# Text for a terminal, JUnit or Markdown


def render(explanation: Explanation, display_path: Callable[[str], str] = lambda p: p) -> list[str]:
    """Plain text lines: one per rule, one per source line, or one saying why there is no line."""
    unit = f"excessive {TOPICS[explanation.topic].unit}" if explanation.topic in TOPICS else "excess"
    out = [f"ncu {rule.rule}: {rule.text}" for rule in explanation.rules]
    out += [_render_line(line, unit, display_path) for line in explanation.lines]
    if not explanation.lines:
        out.append(_nothing_attributed(explanation, unit))
    return out


def _render_line(line: SourceLine, unit: str, display_path: Callable[[str], str]) -> str:
    amount = f"{_count(line.excess)} {unit}"
    if line.total is not None:
        amount += f" of {_count(line.total)}"
    where = f"{display_path(line.file)}:{line.line}"
    return f"{where}  {line.text}  {amount} ({_percent(line.share)} of the kernel's excess)"


def _nothing_attributed(explanation: Explanation, unit: str) -> str:
    kernel = explanation.kernel or "the kernel"
    if explanation.line_info:
        return f"ncu attributed no {unit} to a source line of {kernel}"
    # Without line info ncu cannot map SASS back to CUDA lines, which is what the per-line view needs.
    return (
        f"ncu attributed no {unit} to a source line of {kernel}: it had no source lines for it "
        "(build the kernel with `lineinfo: true`)"
    )


def _count(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"


def _percent(share: float) -> str:
    # A small but real share should not read as "0%".
    return "<1%" if 0 < share < 0.005 else f"{share:.0%}"


def shown_path(path: str) -> str:
    """A source path as the report shows it: relative to the working folder where it lies under it."""
    try:
        return str(Path(path).relative_to(Path.cwd()))
    except ValueError:
        return path


def claim_lines(claim_id: str, explanation: Explanation) -> list[str]:
    """What ncu says about a failed claim, as report lines: a heading, then the explanation indented."""
    return [
        f"{claim_id}: what ncu says about {explanation.kernel}",
        *(f"  {line}" for line in render(explanation, shown_path)),
    ]
