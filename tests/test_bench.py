"""The benchmark scripts under bench/ load against today's package: each imports and answers --help
(their timings are taken on a GPU machine, never in the tests)."""

import subprocess
import sys

import pytest
from conftest import ROOT, import_path

SCRIPTS = sorted((ROOT / "bench").glob("*.py"))


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.name)
def test_a_benchmark_script_imports_and_answers_help(script):
    ran = subprocess.run(
        [sys.executable, str(script), "--help"],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": import_path(), "PATH": "/usr/bin:/bin"},
        timeout=120,
    )
    assert ran.returncode == 0, ran.stderr
    assert "usage:" in ran.stdout


def test_there_are_benchmark_scripts():
    assert {path.name for path in SCRIPTS} >= {"suite.py", "reuse.py", "programs.py", "shards.py"}
