"""What a command shows while it runs: the console, warnings, a bug's one line, and the progress
line under the output while the files are checked."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn

from ncuverify import pipeline
from ncuverify.internal import internal_error_line
from ncuverify.options import CheckOptions
from ncuverify.report import print_prose
from ncuverify.results import FileResult
from ncuverify.text import one_line

# The widths the report is laid out for: $COLUMNS within these bounds, else the terminal's, else
# (a CI job's log is not a terminal) room for a table rather than rich's 80 columns.
NARROWEST, WIDEST, LOG_WIDTH = 40, 1000, 160


def console(environ: Mapping[str, str] = os.environ) -> Console:
    return Console(width=output_width(environ, sys.stdout.isatty()))


def output_width(environ: Mapping[str, str], is_terminal: bool) -> int | None:
    """$COLUMNS where it is a number (kept within NARROWEST..WIDEST); else None on a terminal (its own
    width); else LOG_WIDTH."""
    columns = environ.get("COLUMNS", "").strip()
    if columns.isascii() and columns.isdigit() and len(columns) <= 9:
        return min(WIDEST, max(NARROWEST, int(columns)))
    return None if is_terminal else LOG_WIDTH


def say_internal_error(error: BaseException, what: str = "ncuverify") -> None:
    print(f"{what}: {internal_error_line(error)}", file=sys.stderr)


def print_warnings(shown_on: Console, warnings: Sequence[str]) -> None:
    for warning in warnings:
        print_prose(shown_on, f"warning: {warning}", "bold yellow")


def print_pass_warnings(shown_on: Console, run: CheckOptions) -> None:
    """What was wrong with the pass counts remembered (the run guesses them instead)."""
    print_warnings(shown_on, run.passes.warnings if run.passes is not None else ())


def check_files(files: list[Path], options: CheckOptions) -> list[FileResult]:
    """Every file's result; after Ctrl-C, those that finished, and the rest marked as not run. On a
    terminal a line under the output says what is being done; elsewhere nothing is added (not even
    the blank line a progress display leaves)."""
    shown_on = console()
    if not shown_on.is_terminal:
        return _checked(files, options)
    with Progress(
        SpinnerColumn(), TextColumn("{task.description}", markup=False), console=shown_on, transient=True
    ) as progress:
        task = progress.add_task("starting")
        said = replace(options, on_progress=lambda line: progress.update(task, description=one_line(line)))
        return _checked(files, said)


def _checked(files: list[Path], options: CheckOptions) -> list[FileResult]:
    try:
        return pipeline.check_files(files, options)
    except pipeline.Interrupted as interrupted:
        return interrupted.results
