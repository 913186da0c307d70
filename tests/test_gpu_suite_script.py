"""scripts/gpu-suite.sh run with a stand-in python, to see how it calls pytest on the expectation files:
with the plugin named where it is not installed, without where it is (pytest refuses it twice)."""

import os
import stat
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

STAND_IN = """#!/bin/sh
# answers the script's question whether the plugin is registered, and notes every other call
case "$*" in
    *entry_points*) exit {registered} ;;
esac
echo "$*" >> "{calls}"
"""


@pytest.mark.parametrize(("registered", "named"), [(0, False), (1, True)], ids=["installed", "checkout"])
def test_the_suite_names_the_plugin_only_where_it_is_not_installed(tmp_path, registered, named):
    calls = tmp_path / "calls.txt"
    python = tmp_path / "python"
    python.write_text(STAND_IN.format(registered=registered, calls=calls))
    python.chmod(python.stat().st_mode | stat.S_IXUSR)
    environment = {**os.environ, "PYTHON": str(python), "PATH": f"{tmp_path}:{os.environ['PATH']}"}
    subprocess.run(
        ["bash", str(ROOT / "scripts" / "gpu-suite.sh"), str(tmp_path / "logs")],
        env=environment,
        capture_output=True,
        timeout=60,
    )
    [plugin_run] = [line for line in calls.read_text().splitlines() if line.endswith("expectations/")]
    assert ("-p ncuverify.pytest_plugin" in plugin_run) is named, plugin_run
