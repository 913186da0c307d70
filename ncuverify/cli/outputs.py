"""The files a command writes (JSON, JUnit, Markdown, a baseline, the schema), each on its own: one
that fails says so in one line and loses none of the others."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from rich.console import Console

from ncuverify import export
from ncuverify.baseline.snapshot import Change
from ncuverify.cli.terminal import say_internal_error
from ncuverify.errors import ExitCode
from ncuverify.folders import reason
from ncuverify.report import line_text
from ncuverify.results import FileResult, worst


def write_results(
    console: Console,
    results: Sequence[FileResult],
    code: ExitCode,
    outputs: Mapping[str, Path | None],
    identity: export.ShardOf | None = None,
    changes: Sequence[Change] = (),
    markdown_max_bytes: int | None = None,
) -> ExitCode:
    """Each output of a run written on its own: one that fails loses none of the others. The HTML
    report and SARIF show what moved against a baseline too (changes); the Markdown is cut to fit in
    markdown_max_bytes where given."""
    renderers: dict[str, Callable[[], str]] = {
        "--json": lambda: export.to_json(results, code, shard=identity),
        "--junit-xml": lambda: export.to_junit(results),
        "--markdown": lambda: export.to_markdown(results, markdown_max_bytes),
        "--html": lambda: export.to_html(results, changes),
        "--sarif": lambda: export.to_sarif(results, changes),
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
        console.print(line_text(f"{where}: cannot write it ({reason(error)})", "bold red"), soft_wrap=True)
        return ExitCode.BAD_INPUT
    except Exception as error:  # a bug while making this output: the others are still written
        say_internal_error(error, option or str(path))
        return ExitCode.INTERNAL_ERROR
    return ExitCode.OK


def _write_rendered(path: Path, render: Callable[[], str]) -> None:
    write_text(path, render())


def write_text(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8", errors="backslashreplace")
