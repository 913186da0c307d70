"""`ncuverify audit`: one row per documented claim, the document's figure against this GPU's."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from ncuverify import export, report
from ncuverify.cli.outputs import write_output, write_text
from ncuverify.cli.params import AllowInclude, Arch, CompileTimeout, Files, FromProfile, Html, Ncu
from ncuverify.cli.runs import replay_or_profile
from ncuverify.cli.terminal import check_files, console, print_pass_warnings
from ncuverify.errors import ExitCode
from ncuverify.internal import internal_error_line
from ncuverify.report import audit as claims_audit
from ncuverify.report import print_prose
from ncuverify.results import FileResult, exit_code, worst


def audit(
    files: Files,
    from_profile: FromProfile = None,
    markdown: Annotated[
        Path | None, typer.Option(help="also write the audit as Markdown to this file")
    ] = None,
    html: Html = None,
    arch: Arch = None,
    ncu: Ncu = "ncu",
    allow_include: AllowInclude = None,
    compile_timeout: CompileTimeout = 120.0,
) -> None:
    """One row per documented claim: the document's figure, what this GPU measured, and whether it holds.

    Exit codes as for check.
    """
    paths, run = replay_or_profile(
        files,
        {"--markdown": markdown, "--html": html},
        arch,
        ncu,
        from_profile,
        allow_include,
        compile_timeout,
    )
    shown_on = console()
    print_pass_warnings(shown_on, run)
    results = check_files(paths, run)
    rows, status = _audit_rows(shown_on, results)
    if markdown is not None:
        status = worst(status, _write_markdown(shown_on, markdown, rows, results))
    if html is not None:
        page = functools.partial(_write_page, results=results)
        status = worst(status, write_output(shown_on, "--html", html, page))
    problems = [r for r in results if r.input_error is not None or r.internal_error is not None]
    status = worst(status, report.print_files(shown_on, problems, verbose=False))
    claims_audit.print_audit(shown_on, rows)
    print_prose(shown_on, f"audit: {claims_audit.counts_line(rows)}")
    raise typer.Exit(int(worst(exit_code(results), status)))


def _audit_rows(
    shown_on: Console, results: Sequence[FileResult]
) -> tuple[list[claims_audit.AuditRow], ExitCode]:
    """Every file's rows; a file whose rows cannot be made shows its internal error line instead."""
    rows: list[claims_audit.AuditRow] = []
    status = ExitCode.OK
    for result in results:
        try:
            rows += claims_audit.audit_rows([result])
        except Exception as error:  # a bug on this file's rows: the other files' rows are still audited
            line = f"{result.path}: {internal_error_line(error)}"
            print_prose(shown_on, line, "bold red")
            status = ExitCode.INTERNAL_ERROR
    return claims_audit.in_order(rows), status


def _write_page(path: Path, results: Sequence[FileResult]) -> None:
    write_text(path, export.to_html(results, title="ncuverify audit"))


def _write_markdown(
    shown_on: Console, path: Path, rows: Sequence[claims_audit.AuditRow], results: Sequence[FileResult]
) -> ExitCode:
    provenance = claims_audit.provenance_of(results)
    replayed = any(r.replayed for r in results)

    def write_audit(path: Path) -> None:
        write_text(path, claims_audit.markdown(rows, provenance, replayed))

    return write_output(shown_on, "--markdown", path, write_audit)
