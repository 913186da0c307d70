"""Reading back a report ncu saved (`--export`): one page of it as CSV, through `ncu --import`."""

from __future__ import annotations

import os
from pathlib import Path

from ncuverify.errors import EnvironmentProblem
from ncuverify.processes import TimedOut, run_bounded
from ncuverify.profile.command import NcuOptions
from ncuverify.profile.shown import shown_output

# ncu appends .ncu-rep to the name given to --export.
REPORT_FILE = "profile.ncu-rep"

# How `import_report` asks ncu for each page of a saved report.
_IMPORT_PAGES = {
    "details": ["--page", "details", "--print-details", "all", "--print-units", "base"],
    "source": ["--page", "source", "--print-source", "cuda,sass"],
}
# Reading a saved report back takes seconds; an ncu that takes this long is stuck.
IMPORT_TIMEOUT_S = 300.0


def import_report(options: NcuOptions, report: Path, page: str) -> str:
    """One page of a saved report as CSV (`ncu --import`): needs ncu, not a GPU."""
    command = [options.executable, "--import", str(report), "--csv", *_IMPORT_PAGES[page]]
    try:
        completed = run_bounded(command, IMPORT_TIMEOUT_S, env={**os.environ, "LC_ALL": "C"})
    except (OSError, TimedOut) as error:
        raise EnvironmentProblem(f"ncu could not read its report {report}: {error}") from None
    if completed.returncode != 0:
        said = (completed.stderr or completed.stdout).strip().splitlines()
        raise EnvironmentProblem(
            f"ncu could not read its report {report} (exit {completed.returncode}): {shown_output(said[-1] if said else '')}"
        )
    return completed.stdout
