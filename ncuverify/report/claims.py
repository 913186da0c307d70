"""How claims are shown: a table row each where the table fits the terminal, else a block each (a
heading line, then a labelled line per field); the reasons they did not pass; and a claim over
kernels' tally with the kernels that failed. Neither layout cuts an id, a case or a metric name: the
table is used only when it fits whole, and a block breaks its lines at spaces alone."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ncuverify.explain import Explanation, claim_lines
from ncuverify.judge.claims import describe, format_number
from ncuverify.judge.over_kernels import kernel_line, short_tally, shown_outcomes, tally
from ncuverify.report.text import line_text, wrapped
from ncuverify.results import ClaimResult, FileResult, KernelVerdict, Verdict
from ncuverify.spec import Claim
from ncuverify.text import one_line

VERDICT_STYLE = {
    Verdict.PASSED: "bold green",
    Verdict.FAILED: "bold red",
    Verdict.ERROR: "bold magenta",
    Verdict.SKIPPED: "yellow",
    Verdict.XFAILED: "green",
    Verdict.XPASSED: "bold red",
    Verdict.OTHER_ARCH: "dim",
}


def document_column(result: ClaimResult) -> Text:
    """Whether the document's own figure holds, and by how much the hardware differs from it; "-" for
    a claim that cites none, or that did not pass (the figure's standing is then not known)."""
    cite = result.claim.cite
    if cite is None:
        return Text("-")
    if cite.holds == "yes":
        return Text("holds", style="green") if result.verdict is Verdict.PASSED else Text("-")
    text = "wrong" if cite.holds == "no" else "approximately"
    if cite.value is not None:
        text += f": says {format_number(cite.value)}"
        if result.measured is not None and cite.value != 0:
            text += f", measured ×{result.measured / cite.value:.3g} of it"
    return Text(text, style="yellow")


def claims_table(result: FileResult) -> Table:
    """The file's claims, a row each, a rule between rows; the document columns only where a claim
    cites one, the source column (with the document's figure) where a claim cites one or says why."""
    cites = any(r.claim.cite is not None for r in result.claims)
    sources = cites or any(r.claim.why for r in result.claims)
    table = Table(title=line_text(result.path), title_justify="left", show_lines=True, expand=False)
    table.add_column("claim", no_wrap=True)
    table.add_column("case", no_wrap=True)
    table.add_column("metric")  # an expression wraps at its spaces, never within a name
    table.add_column("expected", no_wrap=True)
    table.add_column("measured", justify="right", no_wrap=True)
    table.add_column("verdict", no_wrap=True)
    if cites:
        table.add_column("document")
    if sources:
        table.add_column("source" if cites else "why")
    for claim_result in result.claims:
        claim = claim_result.claim
        measured = format_number(claim_result.measured) if claim_result.measured is not None else "-"
        if claim_result.kernels:
            measured = short_tally(claim_result.kernels)
        if claim_result.control_measured is not None:
            control = one_line(f"control {claim.control}: {format_number(claim_result.control_measured)}")
            measured += f"\n{control}"
        cells = [
            line_text(claim.id),
            line_text(claim.case or claim.kernels or "-"),
            line_text(claim.metric),
            line_text(describe(claim.expect)),
            Text(measured),
            Text(claim_result.verdict.value, style=VERDICT_STYLE[claim_result.verdict]),
        ]
        if cites:
            cells.append(document_column(claim_result))
        if sources:
            cells.append(Text(_source(claim)))
        table.add_row(*cells)
    return table


def _source(claim: Claim) -> str:
    """The document, section and figure a claim cites, else its why."""
    if claim.cite is None:
        return one_line(claim.why or "-")
    return one_line(f"{claim.cite.document} §{claim.cite.section}") + f"\n“{one_line(claim.cite.figure)}”"


def reason_lines(result: FileResult) -> list[Text]:
    """Why each claim did not pass (one line for claims skipped for the same reason), and why a claim
    departs from its document (its note)."""
    lines = []
    for claim_result in result.claims:
        claim = claim_result.claim
        if claim_result.kernels and claim_result.verdict is not Verdict.SKIPPED:
            lines += kernel_lines(claim_result)
        elif claim_result.verdict not in (Verdict.PASSED, Verdict.SKIPPED) and claim_result.reason:
            lines.append(heading(claim_result))
        if claim.note:
            lines.append(Text.assemble(("note ", "cyan"), one_line(f"{claim.id}: {claim.note}")))
    return lines + skipped_lines(result.claims)


def skipped_lines(claims: Sequence[ClaimResult]) -> list[Text]:
    """One line for each cause of skipped claims: the claim, or how many share it."""
    skipped: dict[str, list[str]] = {}
    for claim_result in claims:
        if claim_result.verdict is Verdict.SKIPPED:
            skipped.setdefault(claim_result.reason or "", []).append(claim_result.claim.id)
    lines = []
    for reason, ids in skipped.items():
        what = ids[0] if len(ids) == 1 else f"{len(ids)} claims"
        lines.append(
            Text.assemble(("skipped ", VERDICT_STYLE[Verdict.SKIPPED]), one_line(f"{what}: {reason}"))
        )
    return lines


# How many kernels of a claim over kernels the terminal names; JSON, JUnit and Markdown name them all.
SHOWN_KERNELS = 20


def kernel_lines(result: ClaimResult) -> list[Text]:
    """A claim over kernels: its tally, then each kernel that failed, could not be read or is allowed
    (the first SHOWN_KERNELS, then how many more), one short line each."""
    if result.verdict is Verdict.PASSED and not shown_outcomes(result):
        return []
    return [heading(result), *outcome_lines(result)]


def heading(result: ClaimResult) -> Text:
    """A claim's first line: its verdict and id, and why it did not pass (a claim over kernels: its
    tally against what was expected)."""
    claim = result.claim
    said = f"{claim.id}: {result.reason}" if result.reason else claim.id
    expected_to_fail = result.verdict in (Verdict.XFAILED, Verdict.XPASSED) and result.reason
    if result.kernels and not expected_to_fail:
        said = f"{claim.id}: {tally(result.kernels)}, expected {describe(claim.expect)}"
    return Text.assemble((f"{result.verdict.value} ", VERDICT_STYLE[result.verdict]), one_line(said))


def outcome_lines(result: ClaimResult) -> list[Text]:
    """The kernels of a claim over kernels that failed, could not be read or are allowed (the first
    SHOWN_KERNELS, then how many more), one short line each."""
    claim, shown = result.claim, shown_outcomes(result)
    lines = []
    for outcome in shown[:SHOWN_KERNELS]:
        style = "green" if outcome.verdict is KernelVerdict.ALLOWED else "red"
        lines.append(Text.assemble("  ", (one_line(kernel_line(claim, outcome)), style)))
    if len(shown) > SHOWN_KERNELS:
        lines.append(Text(f"  and {len(shown) - SHOWN_KERNELS} more"))
    return lines


def table_fits(console: Console, table: Table) -> bool:
    """Whether the table fits the terminal with every column that may not wrap (ids, cases, figures)
    whole and the others (metric expressions, documents, sources) no narrower than their longest word;
    where it fits, the columns' widths are set so (rich would otherwise fold a long name)."""
    ranges = []
    for column in table.columns:
        measures = [console.measure(cell) for cell in [column.header, *column.cells]]
        widest = max(m.maximum for m in measures)
        ranges.append((widest if column.no_wrap else max(m.minimum for m in measures), widest))
    room = console.width - (3 * len(ranges) + 1)  # each column's padding and edge, and the left edge
    spare = room - sum(least for least, _ in ranges)
    if spare < 0:
        return False
    for column, (least, widest) in zip(table.columns, ranges, strict=True):
        given = min(widest, least + spare)
        spare -= given - least
        column.width = given
    return True


# A block's field lines: the label in a column of its own, then the value broken at spaces.
LABEL_INDENT, LABEL_WIDTH = 4, 9


def claim_block(
    result: ClaimResult, explanation: Explanation | None, width: int, verbose: bool
) -> list[Text]:
    """One claim in full, for any width: its heading, then a line per field (case, metric, expected,
    measured, control, where it comes from, its note), the kernels of a claim over kernels, and what
    ncu says about a failed memory claim."""
    claim = result.claim
    lines = [heading(result)]
    for label, value in _fields(result, verbose):
        lines += [Text(line) for line in field_lines(label, value, width)]
    if result.kernels:
        lines += [Text.assemble("  ", line) for line in outcome_lines(result)]
    if explanation is not None:
        lines += explanation_lines(claim.id, explanation, width, indent=2)
    return lines


def explanation_lines(claim_id: str, explanation: Explanation, width: int, indent: int = 0) -> list[Text]:
    """What ncu says about a failed claim, its heading in bold, each line broken at spaces to the width
    under a hanging indent."""
    heading, *body = claim_lines(claim_id, explanation)
    lines = [Text(" " * indent + one_line(heading), style="bold")]
    for line in body:
        text = one_line(line)
        lead = text[: len(text) - len(text.lstrip())]  # the line's own indent, kept
        margin = " " * (indent + len(lead) + 2)
        first, *rest = wrapped(text, max(20, width - len(margin)))
        lines += [Text(" " * indent + lead + first), *(Text(margin + part) for part in rest)]
    return lines


def _fields(result: ClaimResult, verbose: bool) -> list[tuple[str, str]]:
    claim = result.claim
    measured = format_number(result.measured) if result.measured is not None else ""
    if result.kernels:
        measured = short_tally(result.kernels)
    fields = [
        ("case", claim.case or ""),
        ("kernels", claim.kernels or ""),
        ("metric", claim.metric),
        ("expected", describe(claim.expect)),
        ("measured", measured),
    ]
    if result.control_measured is not None:
        fields.append(("control", f"{claim.control}: {format_number(result.control_measured)}"))
    if claim.cite is not None:
        source = f"{claim.cite.document} §{claim.cite.section}: “{claim.cite.figure}”"
        fields.append(("source", source))
        standing = document_column(result).plain
        if standing != "-" and (claim.cite.holds != "yes" or verbose):
            fields.append(("document", standing))
    fields += [("why", claim.why or ""), ("note", claim.note or "")]
    return [(label, value) for label, value in fields if value]


def field_lines(label: str, value: str, width: int) -> list[str]:
    """A labelled field broken at spaces to the width. A value with a word too long for the room beside
    the label goes under it, less indented; a word longer than even that stays whole on a line of its
    own (the terminal may wrap it, ncuverify never cuts it)."""
    text = one_line(value)
    margin = " " * (LABEL_INDENT + LABEL_WIDTH + 1)
    label_part = " " * LABEL_INDENT + f"{label:<{LABEL_WIDTH}} "
    if max(len(word) for word in text.split(" ")) <= width - len(margin):
        first, *rest = wrapped(text, width - len(margin))
        return [label_part + first, *(margin + part for part in rest)]
    under = " " * (LABEL_INDENT + 2)
    return [label_part.rstrip(), *(under + part for part in wrapped(text, width - len(under)))]
