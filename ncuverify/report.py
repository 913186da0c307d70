"""Stage 5: show the verdicts: one rich table per file and a summary line."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ncuverify.baseline import Change
from ncuverify.build import KernelBuild
from ncuverify.explain import claim_lines
from ncuverify.judge import ClaimResult, Verdict, describe, format_number
from ncuverify.pipeline import FileResult

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
    """Whether the document's own figure holds, and by how much the hardware differs from it."""
    cite = result.claim.cite
    if cite.holds == "yes":
        return Text("holds", style="green")
    text = "wrong" if cite.holds == "no" else "approximately"
    if cite.value is not None:
        text += f": says {format_number(cite.value)}"
        if result.measured is not None and cite.value != 0:
            text += f", measured ×{result.measured / cite.value:.3g} of it"
    return Text(text, style="yellow")


def claims_table(result: FileResult, verbose: bool) -> Table:
    table = Table(title=str(result.path), title_justify="left", show_lines=verbose, expand=False)
    table.add_column("claim", overflow="fold")
    table.add_column("case")
    table.add_column("metric", overflow="fold", max_width=48)
    table.add_column("expected", no_wrap=True)
    table.add_column("measured", justify="right", no_wrap=True)
    table.add_column("verdict", no_wrap=True)
    table.add_column("document")
    table.add_column("source", overflow="fold")
    for claim_result in result.claims:
        claim = claim_result.claim
        measured = format_number(claim_result.measured) if claim_result.measured is not None else "-"
        if claim_result.control_measured is not None:
            measured += f"\ncontrol {claim.control}: {format_number(claim_result.control_measured)}"
        source = f"{claim.cite.document} §{claim.cite.section}"
        if verbose:
            source += f"\n“{claim.cite.figure}”"
        table.add_row(
            claim.id,
            claim.case or "-",
            claim.metric,
            describe(claim.expect),
            measured,
            Text(claim_result.verdict.value, style=VERDICT_STYLE[claim_result.verdict]),
            document_column(claim_result),
            source,
        )
    return table


def reason_lines(result: FileResult, verbose: bool) -> list[Text]:
    """Why each claim did not pass (one line for claims skipped for the same reason); with verbose,
    also why a claim departs from its document."""
    lines = []
    skipped: dict[str, list[str]] = {}
    for claim_result in result.claims:
        claim = claim_result.claim
        if claim_result.verdict is Verdict.SKIPPED:
            skipped.setdefault(claim_result.reason or "", []).append(claim.id)
        elif claim_result.verdict is not Verdict.PASSED and claim_result.reason:
            style = VERDICT_STYLE[claim_result.verdict]
            lines.append(
                Text.assemble((f"{claim_result.verdict.value} ", style), f"{claim.id}: {claim_result.reason}")
            )
        if verbose and claim.note:
            lines.append(Text.assemble(("note ", "cyan"), f"{claim.id}: {claim.note}"))
    for reason, ids in skipped.items():
        what = ids[0] if len(ids) == 1 else f"{len(ids)} claims"
        lines.append(Text.assemble(("skipped ", VERDICT_STYLE[Verdict.SKIPPED]), f"{what}: {reason}"))
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
    if bad_files:
        text += f", {bad_files} file{'s' if bad_files > 1 else ''} with input errors"
    return f"{text} in {seconds:.1f} s"


def print_file(console: Console, result: FileResult, verbose: bool) -> None:
    if result.input_error is not None:
        console.print(Text(f"{result.path}: input error", style="bold red"))
        console.print(Text(result.input_error), soft_wrap=True)
        return
    if result.not_run is not None:
        console.print(Text(f"{result.path}: not run: {result.not_run}", style="yellow"), soft_wrap=True)
        return
    if not result.claims:
        console.print(Text(f"{result.path}: no claims to check"))
        return
    reasons = {r.reason for r in result.claims}
    if all(r.verdict is Verdict.SKIPPED for r in result.claims) and len(reasons) == 1 and not verbose:
        # One cause for every claim (no GPU, no ncu): one line, not a table of the same words.
        line = f"{result.path}: {len(result.claims)} claims not measured: {reasons.pop()}"
        console.print(Text(line, style="yellow"), soft_wrap=True)
        return
    console.print(claims_table(result, verbose))
    for line in reason_lines(result, verbose):
        console.print(line, soft_wrap=True)
    for claim_id, explanation in result.explanations.items():
        heading, *body = claim_lines(claim_id, explanation)
        console.print(Text(heading, style="bold"), soft_wrap=True)
        for line in body:
            console.print(Text(line), soft_wrap=True)
    for warning in result.warnings:
        console.print(Text(f"warning: {warning}", style="bold yellow"), soft_wrap=True)
    if result.provenance is not None and (verbose or result.replayed):
        how = "replayed from a recording made" if result.replayed else "measured"
        console.print(Text(f"{how} on {result.provenance.describe()}"), soft_wrap=True)
    console.print(Text(f"{result.path.name}: {summary([result], result.seconds)}"))


def print_run(console: Console, results: Sequence[FileResult], seconds: float, verbose: bool) -> None:
    for result in results:
        print_file(console, result, verbose)
    if len(results) > 1:
        console.print(Text(f"ncuverify: {summary(results, seconds)} ({len(results)} files)", style="bold"))


def print_build(console: Console, path: Path, built: dict[str, KernelBuild] | str) -> None:
    """The static facts of each kernel of a file, or why it did not build."""
    if isinstance(built, str):
        console.print(Text(f"{path}: input error", style="bold red"))
        console.print(Text(built), soft_wrap=True)
        return
    table = Table(title=str(path), title_justify="left")
    for column in (
        "kernel",
        "entry",
        "arch",
        "regs",
        "stack",
        "spill st",
        "spill ld",
        "smem",
        "bar",
        "local",
        "sass",
    ):
        table.add_column(column, justify="right" if column not in ("kernel", "entry", "arch") else "left")
    table.add_column("SASS mix", overflow="fold")
    problems = []
    for name, kernel in built.items():
        facts = kernel.facts
        metrics = facts.metrics()
        mix = " ".join(f"{op}×{n}" for op, n in facts.mix().most_common(10)) or "-"
        table.add_row(
            name,
            kernel.entry,
            kernel.arch,
            *(
                format_number(metrics[key]) if key in metrics else "-"
                for key in (
                    "static__registers_per_thread",
                    "static__stack_frame_bytes",
                    "static__spill_store_bytes",
                    "static__spill_load_bytes",
                    "static__shared_static_bytes",
                    "static__barriers",
                    "static__local_bytes",
                    "static__sass_instructions",
                )
            ),
            mix,
        )
        problems += [f"{name}: {problem}" for problem in facts.discrepancies()]
    console.print(table)
    for problem in problems:
        console.print(Text(problem, style="bold magenta"), soft_wrap=True)


def print_changes(console: Console, changes: Sequence[Change]) -> None:
    """What moved against the baseline beyond its tolerance: regressions first."""
    if not changes:
        console.print(Text("baseline: no measure moved beyond its tolerance", style="green"))
        return
    table = Table(title="compared with the baseline", title_justify="left")
    for column in ("file", "case", "measure", "baseline", "now", "change", ""):
        table.add_column(column, justify="right" if column in ("baseline", "now", "change") else "left")
    for change in sorted(changes, key=lambda c: not c.worse):
        ratio = change.ratio
        moved = f"×{ratio:.3g}" if ratio is not None else f"+{format_number(change.after - change.before)}"
        verdict = Text("worse", style="bold red") if change.worse else Text("better", style="green")
        table.add_row(
            change.file,
            change.case,
            change.metric,
            format_number(change.before),
            format_number(change.after),
            moved,
            verdict,
        )
    console.print(table)
    worse = sum(1 for c in changes if c.worse)
    console.print(Text(f"baseline: {worse} regressed, {len(changes) - worse} improved"))
