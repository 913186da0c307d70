"""Running the command line in tests; with conftest's no_gpu fixture they run the same on any machine."""

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ncuverify import pipeline
from ncuverify.cli import app
from ncuverify.stages import prepare


def invoke(*args: str):
    return CliRunner().invoke(app, ["check", *args])


def invoke_command(*args: str):
    return CliRunner().invoke(app, list(args))


@pytest.fixture
def nothing_runs(monkeypatch):
    """Fails the test if anything is compiled or checked."""
    ran: list[str] = []
    monkeypatch.setattr(prepare, "build_spec", lambda *args: ran.append("build_spec"))
    monkeypatch.setattr(pipeline, "check_files", lambda *args: ran.append("check_files"))
    yield ran
    assert ran == []


TRACEBACK_FILE = re.compile(r"please report it with (/\S+ncuverify-internal-\S+\.txt)$")


def traceback_file(line: str) -> Path:
    """The file an internal-error line names; it exists and holds the traceback."""
    found = TRACEBACK_FILE.search(line)
    assert found, line
    path = Path(found[1])
    assert path.is_file()
    return path


def said_lines(output: str) -> list[str]:
    """The output's sentences, each sentence's further lines (wrapped to the terminal's width, indented
    two spaces) joined back onto its first."""
    lines: list[str] = []
    for line in output.splitlines():
        if lines and line.startswith("  ") and not line.startswith("   "):
            lines[-1] += " " + line.strip()
        else:
            lines.append(line)
    return lines
