"""What a command shows while it runs: the console, warnings, a bug's one line, and the progress
line under the output while the files are checked."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn

from ncuverify import pipeline
from ncuverify.internal import internal_error_line
from ncuverify.options import CheckOptions
from ncuverify.report import line_text
from ncuverify.results import FileResult
from ncuverify.text import one_line


def console() -> Console:
    # Logs of CI jobs are not terminals: give tables room rather than rich's 80 columns.
    return Console() if sys.stdout.isatty() else Console(width=160)


def say_internal_error(error: BaseException, what: str = "ncuverify") -> None:
    print(f"{what}: {internal_error_line(error)}", file=sys.stderr)


def print_warnings(shown_on: Console, warnings: Sequence[str]) -> None:
    for warning in warnings:
        shown_on.print(line_text(f"warning: {warning}", "bold yellow"), soft_wrap=True)


def print_pass_warnings(shown_on: Console, run: CheckOptions) -> None:
    """What was wrong with the pass counts remembered (the run guesses them instead)."""
    print_warnings(shown_on, run.passes.warnings if run.passes is not None else ())


def check_files(files: list[Path], options: CheckOptions) -> list[FileResult]:
    """Every file's result; after Ctrl-C, those that finished, and the rest marked as not run. On a
    terminal a line under the output says what is being done; elsewhere nothing is added."""
    shown_on = console()
    with Progress(
        SpinnerColumn(), TextColumn("{task.description}", markup=False), console=shown_on, transient=True
    ) as progress:
        if shown_on.is_terminal:
            task = progress.add_task("starting")
            options = replace(
                options, on_progress=lambda line: progress.update(task, description=one_line(line))
            )
        try:
            return pipeline.check_files(files, options)
        except pipeline.Interrupted as interrupted:
            return interrupted.results
