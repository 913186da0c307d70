"""What `check` shows inside a GitHub Actions job: annotations on the pull request's files, and the
Markdown summary appended to the job's step summary."""

from __future__ import annotations

import os
import secrets
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import typer
from rich.console import Console

from ncuverify import export
from ncuverify.baseline.snapshot import Change
from ncuverify.cli.outputs import write_output
from ncuverify.errors import ExitCode
from ncuverify.export.annotations import github_actions, to_annotations
from ncuverify.results import FileResult

# GitHub drops a step summary over 1 MiB; a little is left for what other steps' tools add to the line.
STEP_SUMMARY_MAX_BYTES = 1024 * 1024 - 1024
ANNOTATE_CHOICES = ("github", "none")


def annotating(choice: str | None, environment: Mapping[str, str] = os.environ) -> bool:
    """--annotate: github or none; without it, github inside a GitHub Actions job."""
    if choice is None:
        return github_actions(environment)
    if choice.strip() not in ANNOTATE_CHOICES:
        raise typer.BadParameter("github or none", param_hint="--annotate")
    return choice.strip() == "github"


@contextmanager
def commands_stopped(environment: Mapping[str, str] = os.environ) -> Iterator[Callable[[], None]]:
    """Inside a GitHub Actions job, the runner reads no workflow command from what is shown within:
    a name, a reason or a line of a compiler's or ncu's output that a pull request wrote could
    otherwise start one (`::error::` forging a verdict, `::add-mask::` hiding the log). Yields the
    function that resumes them early, for ncuverify's own annotations; they resume at the end anyway.
    The token that resumes them is random: nothing shown can guess it."""
    if not github_actions(environment):
        yield lambda: None
        return
    token = secrets.token_hex(16)
    stopped = [True]

    def resume() -> None:
        if stopped[0]:
            stopped[0] = False
            sys.stdout.write(f"::{token}::\n")
            sys.stdout.flush()

    sys.stdout.write(f"::stop-commands::{token}\n")
    sys.stdout.flush()
    try:
        yield resume
    finally:
        resume()


def print_annotations(results: Sequence[FileResult], changes: Sequence[Change]) -> None:
    """The run's annotations on standard output, where the runner reads workflow commands."""
    lines = to_annotations(results, changes)
    if lines:
        sys.stdout.write("\n".join(lines) + "\n")
        sys.stdout.flush()


def write_step_summary(
    console: Console,
    results: Sequence[FileResult] | export.RunOutcome,
    environment: Mapping[str, str] = os.environ,
) -> ExitCode:
    """The Markdown summary appended to $GITHUB_STEP_SUMMARY inside a GitHub Actions job (which reads
    the file once the step ends), cut to fit with what the step already wrote there."""
    summary = environment.get("GITHUB_STEP_SUMMARY", "")
    if not github_actions(environment) or not summary:
        return ExitCode.OK
    path = Path(summary)

    def append(path: Path) -> None:
        written = path.stat().st_size if path.is_file() else 0
        text = export.to_markdown(results, max_bytes=max(STEP_SUMMARY_MAX_BYTES - written, 0))
        with path.open("a", encoding="utf-8", errors="backslashreplace") as file:
            file.write(text)

    return write_output(console, "$GITHUB_STEP_SUMMARY", path, append)
