"""The version is written once, in ncuverify/__init__.py: the package metadata reads it from there, and
the changelog's latest released entry is that version."""

import re
import tomllib

from cli_invoke import invoke_command
from conftest import ROOT

import ncuverify

# A released entry's heading, as Keep a Changelog writes it: "## [0.1.0] - 2026-11-30".
RELEASED = re.compile(r"^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$", re.MULTILINE)


def latest_release() -> str:
    text = (ROOT / "CHANGELOG.md").read_text()
    assert text.index("## [Unreleased]") < RELEASED.search(text).start()
    return RELEASED.search(text).group(1)


def test_the_version_is_the_changelogs_latest_release():
    result = invoke_command("--version")
    assert result.exit_code == 0
    assert result.output.strip() == f"ncuverify {latest_release()}" == f"ncuverify {ncuverify.__version__}"


def test_the_package_metadata_takes_the_version_from_the_package():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in pyproject["project"] and "version" in pyproject["project"]["dynamic"]
    assert pyproject["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "ncuverify.__version__"}
