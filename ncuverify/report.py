"""Stage 5: show the verdicts: one rich table per file and a summary line.

Ids, names, figures, notes, paths and messages come from files a pull request can write, and from
ncu: each reaches rich only as a Text (a plain string would be read as markup: `a[i]` would vanish,
`[bold red]` would style the output), with control characters and escape sequences made visible.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ncuverify.baseline import Change
from ncuverify.build import BUILD_COLUMNS, KernelBuild
from ncuverify.errors import ExitCode
from ncuverify.explain import claim_lines
from ncuverify.internal import internal_error_line
from ncuverify.judge import describe, format_number
from ncuverify.judge_sets import kernel_line, short_tally, shown_outcomes, tally
from ncuverify.lint import build_warnings
from ncuverify.ratchet import KernelMove
from ncuverify.results import ClaimResult, FileResult, KernelVerdict, Verdict
from ncuverify.spec import Claim
from ncuverify.text import one_line, printable

VERDICT_STYLE = {
    Verdict.PASSED: "bold green",
    Verdict.FAILED: "bold red",
    Verdict.ERROR: "bold magenta",
    Verdict.SKIPPED: "yellow",
    Verdict.XFAILED: "green",
    Verdict.XPASSED: "bold red",
    Verdict.OTHER_ARCH: "dim",
}


def line_text(text: object, style: str = "") -> Text:
    """Untrusted text as one line of rich Text: never markup, control characters and newlines escaped
    or flattened."""
    return Text(one_line(str(text)), style=style)


def block_text(text: object, style: str = "") -> Text:
    """Untrusted text of several lines (a compiler log, a list of problems) as rich Text: never markup,
    control characters escaped, newlines kept."""
    return Text(printable(str(text)), style=style)


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


def summary(results: Sequence[FileResult], seconds: float) -> str:
    counts = {verdict: sum(r.count(verdict) for r in results) for verdict in Verdict}
    bad_files = sum(1 for r in results if r.input_error)
    text = (
        f"{counts[Verdict.PASSED]} passed, {counts[Verdict.FAILED]} failed, {counts[Verdict.ERROR]} errors, "
        f"{counts[Verdict.SKIPPED]} skipped"
    )
    for verdict in (Verdict.XFAILED, Verdict.XPASSED):
        if counts[verdict]:
            text += f", {counts[verdict]} {verdict.value}"
    if counts[Verdict.OTHER_ARCH]:
        text += f", {counts[Verdict.OTHER_ARCH]} for other architectures"
    set_aside = sum(r.set_aside for r in results)
    if set_aside:
        text += f", {set_aside} on the profiler set aside (--static-only)"
    if bad_files:
        text += f", {bad_files} file{'s' if bad_files > 1 else ''} with input errors"
    failed_files = sum(1 for r in results if r.internal_error)
    if failed_files:
        text += f", {failed_files} file{'s' if failed_files > 1 else ''} with internal errors"
    return f"{text} in {seconds:.1f} s"


def print_file(console: Console, result: FileResult, verbose: bool) -> None:
    if result.internal_error is not None:
        console.print(line_text(f"{result.path}: {result.internal_error}", "bold red"), soft_wrap=True)
        if not result.claims:
            return
    if result.input_error is not None:
        console.print(line_text(f"{result.path}: input error", "bold red"), soft_wrap=True)
        console.print(block_text(result.input_error), soft_wrap=True)
        return
    if result.not_run is not None:
        console.print(line_text(f"{result.path}: not run: {result.not_run}", "yellow"), soft_wrap=True)
        return
    if not result.claims:
        aside = f" ({result.set_aside} on the profiler set aside: --static-only)" if result.set_aside else ""
        console.print(line_text(f"{result.path}: no claims to check{aside}"), soft_wrap=True)
        return
    reasons = {r.reason for r in result.claims}
    if all(r.verdict is Verdict.SKIPPED for r in result.claims) and len(reasons) == 1 and not verbose:
        # One cause for every claim (no GPU, no ncu): one line, not a table of the same words.
        said = f"{result.path}: {len(result.claims)} claims not measured: {reasons.pop()}"
        console.print(line_text(said, "yellow"), soft_wrap=True)
        return
    console.print(claims_table(result, verbose))
    for line in reason_lines(result, verbose):
        console.print(line, soft_wrap=True)
    for claim_id, explanation in result.explanations.items():
        heading, *body = claim_lines(claim_id, explanation)
        console.print(line_text(heading, "bold"), soft_wrap=True)
        for body_line in body:
            console.print(line_text(body_line), soft_wrap=True)
    for warning in result.warnings:
        console.print(line_text(f"warning: {warning}", "bold yellow"), soft_wrap=True)
    if result.provenance is not None and (verbose or result.replayed):
        how = "replayed from a recording made" if result.replayed else "measured"
        console.print(line_text(f"{how} on {result.provenance.describe()}"), soft_wrap=True)
    console.print(line_text(f"{result.path.name}: {summary([result], result.seconds)}"), soft_wrap=True)


def print_files(console: Console, results: Sequence[FileResult], verbose: bool) -> ExitCode:
    """Each file's report. A file whose report cannot be rendered shows its internal error line
    instead, and the other files are still shown: INTERNAL_ERROR then, else OK."""
    status = ExitCode.OK
    for result in results:
        try:
            print_file(console, result, verbose)
        except Exception as error:  # a bug in rendering this file: the other files are still shown
            console.print(
                line_text(f"{result.path}: {internal_error_line(error)}", "bold red"), soft_wrap=True
            )
            status = ExitCode.INTERNAL_ERROR
    return status


def print_run(
    console: Console, results: Sequence[FileResult], seconds: float, verbose: bool, quiet: bool = False
) -> ExitCode:
    """Every file's report (see print_files), then the run's summary. Quiet: only the files that could
    not be checked (input errors, ncuverify's own, not run), then the summary."""
    if quiet:
        unchecked = [
            r
            for r in results
            if r.input_error is not None or r.internal_error is not None or r.not_run is not None
        ]
        status = print_files(console, [replace(r, claims=[]) for r in unchecked], verbose)
    else:
        status = print_files(console, results, verbose)
    if quiet or len(results) > 1:
        line = f"ncuverify: {summary(results, seconds)} ({len(results)} files)"
        console.print(line_text(line, "bold"), soft_wrap=True)
    return status


def print_build(console: Console, path: Path, built: dict[str, KernelBuild] | str) -> None:
    """The static facts of each kernel of a file, or why it did not build."""
    if isinstance(built, str):
        console.print(line_text(f"{path}: input error", "bold red"), soft_wrap=True)
        console.print(block_text(built), soft_wrap=True)
        return
    table = Table(title=line_text(path), title_justify="left")
    for column in ("kernel", "entry", "arch", *(metric.label for metric in BUILD_COLUMNS)):
        table.add_column(column, justify="right" if column not in ("kernel", "entry", "arch") else "left")
    table.add_column("SASS mix", overflow="fold")
    problems = []
    for name, kernel in built.items():
        facts = kernel.facts
        metrics = facts.metrics()
        mix = " ".join(f"{op}×{n}" for op, n in facts.mix().most_common(10)) or "-"
        table.add_row(
            line_text(name),
            line_text(kernel.entry),
            line_text(kernel.arch),
            *(
                Text(format_number(metrics[metric.name]) if metric.name in metrics else "-")
                for metric in BUILD_COLUMNS
            ),
            line_text(mix),
        )
        problems += [f"{name}: {problem}" for problem in facts.discrepancies()]
    console.print(table)
    for problem in problems:
        console.print(line_text(problem, "bold magenta"), soft_wrap=True)
    for warning in build_warnings(built):
        console.print(line_text(f"warning: {warning}", "bold yellow"), soft_wrap=True)


def print_changes(console: Console, changes: Sequence[Change], moves: Sequence[KernelMove] = ()) -> None:
    """What moved against the baseline beyond its tolerance (regressions first, then growths the
    allow-list accepts, then improvements), and the kernels of sets added and removed since."""
    print_moves(console, moves)
    if not changes:
        console.print(Text("baseline: no measure moved beyond its tolerance", style="green"))
        return
    table = Table(title="compared with the baseline", title_justify="left")
    for column in ("file", "case", "measure", "baseline", "now", "change", ""):
        table.add_column(column, justify="right" if column in ("baseline", "now", "change") else "left")
    for change in sorted(changes, key=lambda c: (not c.worse, c.allowed is not None)):
        ratio = change.ratio
        moved = f"×{ratio:.3g}" if ratio is not None else f"+{format_number(change.after - change.before)}"
        verdict = Text("worse", style="bold red") if change.worse else Text("better", style="green")
        if change.allowed is not None:
            verdict = line_text(f"allowed: {change.allowed}", "yellow")
        table.add_row(
            line_text(change.file),
            line_text(change.case),
            line_text(change.metric),
            Text(format_number(change.before)),
            Text(format_number(change.after)),
            Text(moved),
            verdict,
        )
    console.print(table)
    worse = sum(1 for c in changes if c.worse and c.allowed is None)
    allowed = sum(1 for c in changes if c.allowed is not None)
    said = f"baseline: {worse} regressed, {len(changes) - worse - allowed} improved"
    console.print(Text(said + (f", {allowed} grew as the allow-list accepts" if allowed else "")))


def print_moves(console: Console, moves: Sequence[KernelMove]) -> None:
    """Kernels of sets added or removed since the baseline (the first SHOWN_KERNELS of each): reported,
    not failing."""
    for added, word in ((True, "added"), (False, "removed")):
        cases = [f"{move.file}: {move.case}" for move in moves if move.added is added]
        if not cases:
            continue
        console.print(
            line_text(f"baseline: {len(cases)} kernels {word} since (not a failure)"), soft_wrap=True
        )
        for case in cases[:SHOWN_KERNELS]:
            console.print(line_text(f"  {case}"), soft_wrap=True)
        if len(cases) > SHOWN_KERNELS:
            console.print(Text(f"  and {len(cases) - SHOWN_KERNELS} more"))
