"""How claims are shown: a table row each, the reasons they did not pass, and a claim over kernels'
tally with the kernels that failed."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from ncuverify.judge import describe, format_number
from ncuverify.judge_sets import kernel_line, short_tally, shown_outcomes, tally
from ncuverify.report.text import line_text
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


def claims_table(result: FileResult, verbose: bool) -> Table:
    """The file's claims, a row each; the document columns only where a claim cites one, the source
    column where a claim cites one or says why."""
    cites = any(r.claim.cite is not None for r in result.claims)
    sources = cites or any(r.claim.why for r in result.claims)
    table = Table(title=line_text(result.path), title_justify="left", show_lines=verbose, expand=False)
    table.add_column("claim", overflow="fold")
    table.add_column("case")
    table.add_column("metric", overflow="fold", max_width=48)
    table.add_column("expected", no_wrap=True)
    table.add_column("measured", justify="right", no_wrap=True)
    table.add_column("verdict", no_wrap=True)
    if cites:
        table.add_column("document")
    if sources:
        table.add_column("source" if cites else "why", overflow="fold")
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
            cells.append(Text(_source(claim, verbose)))
        table.add_row(*cells)
    return table


def _source(claim: Claim, verbose: bool) -> str:
    """The document and section a claim cites (with verbose, its figure too), else its why."""
    if claim.cite is None:
        return one_line(claim.why or "-")
    source = one_line(f"{claim.cite.document} §{claim.cite.section}")
    return source + f"\n“{one_line(claim.cite.figure)}”" if verbose else source


def reason_lines(result: FileResult, verbose: bool) -> list[Text]:
    """Why each claim did not pass (one line for claims skipped for the same reason); with verbose,
    also why a claim departs from its document."""
    lines = []
    skipped: dict[str, list[str]] = {}
    for claim_result in result.claims:
        claim = claim_result.claim
        if claim_result.verdict is Verdict.SKIPPED:
            skipped.setdefault(claim_result.reason or "", []).append(claim.id)
        elif claim_result.kernels:
            lines += kernel_lines(claim_result)
        elif claim_result.verdict is not Verdict.PASSED and claim_result.reason:
            style = VERDICT_STYLE[claim_result.verdict]
            lines.append(
                Text.assemble(
                    (f"{claim_result.verdict.value} ", style), one_line(f"{claim.id}: {claim_result.reason}")
                )
            )
        if verbose and claim.note:
            lines.append(Text.assemble(("note ", "cyan"), one_line(f"{claim.id}: {claim.note}")))
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
    claim = result.claim
    shown = shown_outcomes(result)
    lines = []
    if result.verdict is not Verdict.PASSED or shown:
        said = f"{claim.id}: {tally(result.kernels)}, expected {describe(claim.expect)}"
        if result.verdict in (Verdict.XFAILED, Verdict.XPASSED) and result.reason:
            said = f"{claim.id}: {result.reason}"
        lines.append(
            Text.assemble((f"{result.verdict.value} ", VERDICT_STYLE[result.verdict]), one_line(said))
        )
    for outcome in shown[:SHOWN_KERNELS]:
        style = "green" if outcome.verdict is KernelVerdict.ALLOWED else "red"
        lines.append(Text.assemble("  ", (one_line(kernel_line(claim, outcome)), style)))
    if len(shown) > SHOWN_KERNELS:
        lines.append(Text(f"  and {len(shown) - SHOWN_KERNELS} more"))
    return lines
