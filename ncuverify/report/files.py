"""Each file's report and the run's summary line, at three levels of detail: quiet, the run's
summary alone (and the files that could not be checked); by default, a line per file with every claim
that failed, could not be evaluated or passed against its xfail in full; verbose, every claim, as a
table where one fits the terminal, else as a block each."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from rich.console import Console
from rich.text import Text

from ncuverify.errors import ExitCode
from ncuverify.internal import internal_error_line
from ncuverify.report.claims import (
    VERDICT_STYLE,
    claim_block,
    claims_table,
    explanation_lines,
    kernel_lines,
    reason_lines,
    skipped_lines,
    table_fits,
)
from ncuverify.report.text import block_text, line_text, print_prose
from ncuverify.results import (
    FileResult,
    Verdict,
    judged_nothing,
    nothing_judged_line,
    set_aside,
    set_aside_line,
)
from ncuverify.text import one_line


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
    aside = set_aside(results)
    if aside:
        text += f", {set_aside_line(aside)}"
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
        if result.set_aside:
            said = f"{result.path}: {nothing_judged_line(result.set_aside)}"
            console.print(line_text(said, "yellow"), soft_wrap=True)
        else:
            console.print(line_text(f"{result.path}: no claims to check"), soft_wrap=True)
        return
    if not verbose and _skipped_alike(result):
        # One cause for every claim (no GPU, no ncu): one line, not a table of the same words.
        said = f"{result.path}: {len(result.claims)} claims not measured: {result.claims[0].reason}"
        console.print(line_text(said, "yellow"), soft_wrap=True)
        return
    if verbose:
        _print_every_claim(console, result)
    else:
        _print_failures(console, result)
    for warning in result.warnings:
        print_prose(console, f"warning: {warning}", "bold yellow")
    if result.provenance is not None and verbose:
        how = "replayed from a recording made" if result.replayed else "measured"
        print_prose(console, f"{how} on {result.provenance.describe()}")
    print_prose(console, f"{result.path}: {summary([result], result.seconds)}")


def reused_lines(results: Sequence[FileResult]) -> list[str]:
    """One line per recording that a run took figures from again (check --reuse): how many of the
    run's cases, from which folder, recorded when and on which GPU."""
    by_recording: dict[tuple[str, str, str], list[int]] = {}
    for result in results:
        if (mark := result.reused_from) is not None:
            counts = by_recording.setdefault((mark.folder, mark.recorded_at, mark.gpu), [0, 0])
            counts[0] += len(mark.cases)
            counts[1] += mark.of
    return [
        one_line(f"reused {n} of {m} cases from {folder} (recorded {at} on {gpu})")
        for (folder, at, gpu), (n, m) in sorted(by_recording.items())
    ]


def _skipped_alike(result: FileResult) -> bool:
    """Whether every claim of the file was skipped, for one reason."""
    skipped = all(r.verdict is Verdict.SKIPPED for r in result.claims)
    return bool(result.claims) and skipped and len({r.reason for r in result.claims}) == 1


# What a run shows of a claim by default: what a reader must act on.
SHOWN_BY_DEFAULT = (Verdict.FAILED, Verdict.ERROR, Verdict.XPASSED)


def _print_failures(console: Console, result: FileResult) -> None:
    """Each claim that needs a reader's eye in full, and the kernels an allow-list excuses (with why);
    the causes of skipped claims are said once for the run (see print_run)."""
    for claim_result in result.claims:
        if claim_result.verdict in SHOWN_BY_DEFAULT:
            explanation = result.explanations.get(claim_result.claim.id)
            _print_lines(console, claim_block(claim_result, explanation, console.width, verbose=False))
        elif claim_result.kernels and claim_result.verdict is Verdict.PASSED:
            _print_lines(console, kernel_lines(claim_result))


def _print_every_claim(console: Console, result: FileResult) -> None:
    """Every claim: a table where it fits the terminal whole (then the reasons and what ncu says), else
    a block each."""
    table = claims_table(result)
    if not table_fits(console, table):
        console.print(line_text(result.path, "bold"), soft_wrap=True)
        for claim_result in result.claims:
            explanation = result.explanations.get(claim_result.claim.id)
            _print_lines(console, claim_block(claim_result, explanation, console.width, verbose=True))
        return
    console.print(table)
    _print_lines(console, reason_lines(result))
    for claim_id, explanation in result.explanations.items():
        _print_lines(console, explanation_lines(claim_id, explanation, console.width))


def _print_lines(console: Console, lines: Sequence[Text]) -> None:
    for line in lines:
        console.print(line, soft_wrap=True)


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
    """Every file's report (see print_files), where replayed figures come from (verbose says it of each
    file), then the run's summary. Quiet: only the files that could not be checked (input errors,
    ncuverify's own, not run), then the summary."""
    if quiet:
        unchecked = [
            r
            for r in results
            if r.input_error is not None or r.internal_error is not None or r.not_run is not None
        ]
        status = print_files(console, [replace(r, claims=[]) for r in unchecked], verbose)
    else:
        status = print_files(console, results, verbose)
    if not quiet and not verbose:
        said_alone = [r for r in results if not _skipped_alike(r)]  # their one line said why already
        for skipped in skipped_lines([c for r in said_alone for c in r.claims]):
            print_prose(console, skipped.plain, VERDICT_STYLE[Verdict.SKIPPED])
        recordings = {r.provenance.describe() for r in results if r.replayed and r.provenance is not None}
        for described in sorted(recordings):
            print_prose(console, f"replayed from a recording made on {described}")
    if not quiet:
        for line in reused_lines(results):
            print_prose(console, line)
    if quiet or len(results) > 1:
        unjudged = judged_nothing(results)
        if unjudged:
            print_prose(console, f"ncuverify: {nothing_judged_line(unjudged)}", "bold yellow")
        print_prose(console, f"ncuverify: {summary(results, seconds)} ({len(results)} files)", "bold")
    return status
