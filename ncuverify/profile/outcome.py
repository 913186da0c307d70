"""What an ncu process leaves behind, read back with bounds: ncu's log, the runner's output and status;
and the status of the cases that a stalled or ended process kept from running or from reporting."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

from ncuverify.errors import EnvironmentProblem
from ncuverify.ncu.log import error_lines
from ncuverify.profile.saved_report import REPORT_FILE
from ncuverify.profile.shown import shown_name, shown_output
from ncuverify.runner import PROGRESS_FILE, CaseStatus, Progress, StatusError, read_statuses

# What is read of the files an ncu process leaves: far more than any real run writes.
MAX_LOG_BYTES = 64 * 1024 * 1024
MAX_STATUS_BYTES = 16 * 1024 * 1024
MAX_OUTPUT_BYTES = 4 * 1024 * 1024  # of the runner's output, its end: where the errors are


# How long the process took, start to end, in seconds: where a run's time went (bench/suite.py reads it).
ELAPSED_FILE = "seconds.txt"


def clear_outcomes(work_dir: Path) -> None:
    """Remove what an earlier run in this folder left of the runner's and ncu's outcome (the fault
    re-runs share one; a kept profile's folder may be used again), so that none of it is taken for
    this run's."""
    for name in ("status.json", PROGRESS_FILE, "ncu.log", REPORT_FILE, ELAPSED_FILE):
        (work_dir / name).unlink(missing_ok=True)


def lost(case: str, error: str, names: list[str]) -> CaseStatus:
    """A case that ended its process: the cases after it did not run there."""
    return CaseStatus(case, False, error, context_lost=True, not_run=tuple(names[names.index(case) + 1 :]))


def after_stall(
    status: list[CaseStatus], last: Progress | None, names: list[str], timeout_s: float
) -> tuple[list[CaseStatus], str | None]:
    """The status of a process stopped for making no progress, from what the runner said last; and,
    where that was the end of its cases, why ncu was stopped after them."""
    reported = {s.case for s in status}
    if last is not None and last.done:
        return status, f"ncu did not end within {timeout_s:g} s after the runner's last case; stopped"
    if last is not None and last.running and last.case not in reported:
        error = f"did not finish within {timeout_s:g} s under the profiler; stopped"
        return [*status, lost(str(last.case), error, names)], None
    if last is None:
        reason = f"ncu did not start the runner within {timeout_s:g} s; stopped"
    elif last.case is None:
        reason = f"the runner did not start its first case within {timeout_s:g} s (is CUDA stuck?); stopped"
    else:
        reason = f"ncu made no progress within {timeout_s:g} s after case {last.case} ended; stopped"
    return [*status, *(CaseStatus(name, False, reason) for name in names if name not in reported)], None


def ending(text: str, returncode: int) -> str:
    """Why a process ended mid-case: the CUDA error it names, else ncu's own error lines."""
    cuda_errors = re.findall(r"CUDA_ERROR_[A-Z_]+|cudaError\w+", text)
    errors = error_lines(text)
    said = ", ".join(dict.fromkeys(cuda_errors)) or "; ".join(dict.fromkeys(errors)) or "no message"
    return f"the process ended while this case ran (exit {returncode}): {shown_output(said)}"


def read_log(path: Path) -> str:
    """ncu's log: its messages and CSV ("" if it wrote none)."""
    if not path.is_file():
        return ""
    if path.stat().st_size > MAX_LOG_BYTES:
        raise EnvironmentProblem(
            f"ncu's CSV could not be read (its log holds more than {MAX_LOG_BYTES} bytes)"
        )
    return path.read_bytes().decode(errors="replace")


def read_end(path: Path, limit: int) -> str:
    """The last limit bytes of a file, as text; "" if there is none."""
    try:
        with path.open("rb") as file:
            file.seek(max(0, file.seek(0, os.SEEK_END) - limit))
            return file.read(limit).decode(errors="replace")
    except OSError:
        return ""


def read_status(path: Path, names: Sequence[str]) -> list[CaseStatus]:
    """The runner's status ([] if it wrote none); EnvironmentProblem if it is not the runner's."""
    if not path.is_file():
        return []
    try:
        if path.stat().st_size > MAX_STATUS_BYTES:
            raise StatusError(f"larger than {MAX_STATUS_BYTES} bytes")
        status = read_statuses(path.read_bytes().decode(errors="replace"))
        strangers = [s.case for s in status if s.case not in names]
        if strangers:
            raise StatusError(f"case {shown_name(strangers[0])} is not in its plan")
    except (OSError, StatusError) as error:
        raise EnvironmentProblem(f"the runner's status could not be read ({error})") from None
    return status
