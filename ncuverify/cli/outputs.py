"""The files a command writes (JSON, JUnit, Markdown, a baseline, the schema), each on its own: one
that fails says so in one line and loses none of the others."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from pathlib import Path

from rich.console import Console

from ncuverify import export
from ncuverify.cli.terminal import say_internal_error
from ncuverify.errors import ExitCode
from ncuverify.folders import reason
from ncuverify.report import print_prose
from ncuverify.results import worst


def write_results(
    console: Console,
    outcome: export.RunOutcome,
    outputs: Mapping[str, Path | None],
    identity: export.ShardOf | None = None,
    markdown_max_bytes: int | None = None,
) -> ExitCode:
    """Each output of a run written on its own, all from its one outcome (the verdicts, what moved
    against a baseline, the exit code): one that fails loses none of the others. The Markdown is cut to
    fit in markdown_max_bytes where given."""
    renderers: dict[str, Callable[[], str]] = {
        "--json": lambda: export.to_json(outcome, shard=identity),
        "--junit-xml": lambda: export.to_junit(outcome),
        "--markdown": lambda: export.to_markdown(outcome, markdown_max_bytes),
        "--html": lambda: export.to_html(outcome),
        "--sarif": lambda: export.to_sarif(outcome.results, outcome.changes),
    }
    written = [
        write_output(console, option, path, functools.partial(_write_rendered, render=renderers[option]))
        for option, path in outputs.items()
        if path is not None
    ]
    return worst(*written)


def write_output(console: Console, option: str, path: Path, write: Callable[[Path], None]) -> ExitCode:
    """write(path), one line if it fails: BAD_INPUT where the file cannot be written (a full disk, a
    folder gone), INTERNAL_ERROR where ncuverify fails to make its content."""
    try:
        write(path)
    except OSError as error:
        where = f"{option}: {path}" if option else str(path)
        print_prose(console, f"{where}: cannot write it ({reason(error)})", "bold red")
        return ExitCode.BAD_INPUT
    except Exception as error:  # a bug while making this output: the others are still written
        say_internal_error(error, option or str(path))
        return ExitCode.INTERNAL_ERROR
    return ExitCode.OK


def _write_rendered(path: Path, render: Callable[[], str]) -> None:
    write_text(path, render())


def write_text(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8", errors="backslashreplace")
