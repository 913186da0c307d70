"""The claims audit: one row per documented claim, saying whether the document's figure holds on the
GPU that was measured, by how much it is off where it does not, and why. A report of check results,
rendered as a rich table or as Markdown.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ncuverify.judge.claims import describe, format_number
from ncuverify.provenance import Provenance
from ncuverify.report.claims import field_lines, table_fits
from ncuverify.results import ClaimResult, FileResult, Verdict
from ncuverify.text import one_line

_NUMBER = re.compile(r"[0-9]{1,18}")
# A `<` that could open an HTML tag, comment or declaration in a Markdown renderer (`<img`, `</`, `<!`).
_TAG_START = re.compile(r"<(?=[A-Za-z/!?])")

HOLDS = "holds"
APPROXIMATELY = "holds approximately"
DOES_NOT_HOLD = "does not hold here"
UNSETTLED = "not settled"
NOT_MEASURED = "not measured here"

_STYLE = {
    HOLDS: "green",
    APPROXIMATELY: "cyan",
    DOES_NOT_HOLD: "yellow",
    UNSETTLED: "bold red",
    NOT_MEASURED: "dim",
}


@dataclass(frozen=True)
class AuditRow:
    document: str
    section: str
    claim: str
    figure: str  # what the document states, with its number where it gives one
    measured: str  # what the GPU gave, and what the claim asserts
    verdict: str  # one of HOLDS .. NOT_MEASURED
    reason: str


def verdict_of(result: ClaimResult) -> str:
    """The document's standing: settled by a passing claim, else why it is not settled."""
    if result.verdict is Verdict.PASSED:
        holds = result.claim.cite.holds if result.claim.cite is not None else "yes"
        return {"yes": HOLDS, "approximately": APPROXIMATELY, "no": DOES_NOT_HOLD}[holds]
    if result.verdict in (Verdict.SKIPPED, Verdict.OTHER_ARCH):
        return NOT_MEASURED
    return UNSETTLED  # the claim failed, erred or passed against its xfail: the expectation needs work


def row(result: ClaimResult) -> AuditRow:
    """The row of a claim that cites a document."""
    claim = result.claim
    assert claim.cite is not None, "audit_rows passes only claims that cite a document"
    figure = claim.cite.figure + (
        f" ({format_number(claim.cite.value)})" if claim.cite.value is not None else ""
    )
    measured = (
        "-"
        if result.measured is None
        else f"{format_number(result.measured)} (asserted {describe(claim.expect)})"
    )
    verdict = verdict_of(result)
    reason = (claim.note or "") if verdict in (APPROXIMATELY, DOES_NOT_HOLD) else (result.reason or "")
    return AuditRow(claim.cite.document, claim.cite.section, claim.id, figure, measured, verdict, reason)


def audit_rows(results: Sequence[FileResult]) -> list[AuditRow]:
    """A row per claim that cites a document (a claim of one's own, with no document, is none)."""
    return in_order(
        [row(claim_result) for result in results for claim_result in result.claims if claim_result.claim.cite]
    )


def in_order(rows: Sequence[AuditRow]) -> list[AuditRow]:
    """Rows by document, then section (as numbers where they are), then claim."""
    return sorted(rows, key=lambda r: (r.document, _section_key(r.section), r.claim))


def _section_key(section: str) -> tuple[tuple[int, int | str], ...]:
    """Sections sort as numbers where they are (2.10 after 2.9), as text where not (App Q1). Only
    ASCII digits are numbers: int() refuses '²', which str.isdigit accepts, and 5000 digits."""
    parts = [p.strip() for p in section.replace("§", "").replace(",", ".").split(".")]
    return tuple((0, int(p)) if _NUMBER.fullmatch(p) else (1, p) for p in parts)


def provenance_of(results: Sequence[FileResult]) -> Provenance | None:
    return next((r.provenance for r in results if r.provenance is not None), None)


def print_audit(console: Console, rows: Sequence[AuditRow]) -> None:
    """The audit as a table where it fits the console with every id whole, else a block per claim: its
    id and verdict, then a line per field broken at spaces (an id is never cut or folded)."""
    audit = table(rows)
    if table_fits(console, audit):
        console.print(audit)
        return
    console.print(Text("claims audit", style="bold"), soft_wrap=True)
    for r in rows:
        console.print(
            Text.assemble((one_line(r.claim), "bold"), "  ", (r.verdict, _STYLE[r.verdict])), soft_wrap=True
        )
        fields = (("document", f"{r.document} §{r.section}"), ("figure", r.figure), ("measured", r.measured))
        for label, value in (*fields, ("why", r.reason)):
            for line in field_lines(label, value, console.width) if value.strip() else ():
                console.print(Text(line), soft_wrap=True)


# Ids and verdicts stay whole in the table; the prose columns wrap at spaces.
_UNBROKEN = ("document", "§", "claim", "verdict")


def table(rows: Sequence[AuditRow]) -> Table:
    audit = Table(title="claims audit", title_justify="left", show_lines=True)
    for column in ("document", "§", "claim", "document's figure", "measured", "verdict", "why"):
        audit.add_column(column, overflow="fold", no_wrap=column in _UNBROKEN)
    for r in rows:
        # Every cell but the verdict comes from a file: as Text, never read as rich markup.
        audit.add_row(
            *(Text(one_line(cell)) for cell in (r.document, r.section, r.claim, r.figure, r.measured)),
            Text(r.verdict, style=_STYLE[r.verdict]),
            Text(one_line(r.reason)),
        )
    return audit


def counts_line(rows: Sequence[AuditRow]) -> str:
    counts = Counter(r.verdict for r in rows)
    order = (HOLDS, APPROXIMATELY, DOES_NOT_HOLD, UNSETTLED, NOT_MEASURED)
    return ", ".join(f"{counts[v]} {v}" for v in order if counts[v]) or "no claims"


def markdown(rows: Sequence[AuditRow], provenance: Provenance | None, replayed: bool) -> str:
    """The audit as a Markdown document: header with where it was measured, then a table per document."""
    lines = ["# Claims audit", ""]
    if provenance is not None:
        how = "a recording of a run" if replayed else "a run"
        lines += [
            f"Made by `ncuverify audit` from {how} on {_cell(provenance.gpu)} ({_cell(provenance.arch)}) "
            f"on {_cell(provenance.recorded_at)}:",
            f"NVIDIA driver {_cell(provenance.nvidia_driver or '?')} (CUDA {_cell(provenance.cuda_driver)}), "
            f"Nsight Compute {_cell(provenance.ncu_version or '?')}, NVRTC {_cell(provenance.nvrtc_version)}, "
            + (f"{_cell(compiled)}, " if (compiled := provenance.compiled_with()) else "")
            + f"ncuverify {_cell(provenance.ncuverify_version)}, clock control `{_code(provenance.clock_control)}`, "
            f"cache control `{_code(provenance.cache_control)}`.",
            "",
        ]
    lines += [
        "Each row is one claim of a document, checked on the hardware. *holds*: the document's figure is what",
        "the GPU does; *holds approximately*: the mechanism holds, the number differs; *does not hold here*: the",
        "GPU does something else, measured, with the reason; *not settled*: the check itself failed.",
        "",
        f"Overall: {counts_line(rows)}.",
        "",
    ]
    for document in dict.fromkeys(r.document for r in rows):
        own = [r for r in rows if r.document == document]
        lines += [f"## {_cell(document)}", "", f"{counts_line(own)}.", ""]
        lines += [
            "| § | claim | document's figure | measured | verdict | why |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        lines += [
            "| "
            + " | ".join(
                _cell(c) for c in (r.section, f"`{r.claim}`", r.figure, r.measured, r.verdict, r.reason)
            )
            + " |"
            for r in own
        ]
        lines.append("")
    return "\n".join(lines)


def _code(text: str) -> str:
    """Text from a file inside a Markdown code span: on one line, no backtick that would end it."""
    return one_line(text).replace("`", "'")


def _cell(text: str) -> str:
    """Text from a file as one Markdown table cell: on one line, no control character, no `|` that
    would end the cell, no HTML tag or entity that a pull-request comment would render."""
    text = one_line(text).replace("\\", "\\\\").replace("|", "\\|").replace("&", "&amp;")
    return _TAG_START.sub("&lt;", text)
