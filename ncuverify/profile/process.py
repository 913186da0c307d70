"""Starting ncu or the runner in a process group of its own, and waiting for it: told of each case as it
starts, stopped whole once the runner's progress stalls or the run is cancelled."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ncuverify.errors import EnvironmentProblem
from ncuverify.processes import kill_group, start_group
from ncuverify.profile.command import NcuOptions
from ncuverify.profile.shown import shown_output
from ncuverify.runner import Progress

# How often a running process is looked at.
_POLL_S = 0.05


def start(command: list[str], output_file: Path, device: int | None = None) -> subprocess.Popen[bytes]:
    """Start ncu or the runner in a process group of its own, its output in output_file, with this
    package importable, the C locale (ncu's number format) and, given a device, only that GPU visible
    (the runner then uses device 0, which is it)."""
    environment = {
        **os.environ,
        "LC_ALL": "C",
        "PYTHONPATH": _package_root() + os.pathsep + os.environ.get("PYTHONPATH", ""),
    }
    if device is not None:
        environment["CUDA_VISIBLE_DEVICES"] = visible_device(device)
    with output_file.open("wb") as output:
        return start_group(command, output, subprocess.STDOUT, environment)


@dataclass(frozen=True)
class Watched:
    """How a process ended: stopped for making no progress, or on its own; what the runner said last."""

    stalled: bool
    last: Progress | None


def wait(
    process: subprocess.Popen[bytes],
    progress_file: Path,
    names: Sequence[str],
    timeout_s: float,
    options: NcuOptions | None = None,
) -> Watched:
    """Wait for the process, telling options.on_case of each case as it starts; stop its whole group
    once the runner's progress file has not changed for timeout_s (before the first case, during one,
    between two, or after the last), or when options.cancelled says so (KeyboardInterrupt)."""
    on_case = options.on_case if options is not None else None
    cancelled = options.cancelled if options is not None else None
    seen, told = _progress_text(progress_file), None
    changed = time.monotonic()
    try:
        while process.poll() is None:
            time.sleep(_POLL_S)
            if cancelled is not None and cancelled():
                raise KeyboardInterrupt
            text = _progress_text(progress_file)
            if text != seen:
                seen, changed = text, time.monotonic()
            progress = _progress(seen, names)
            if on_case is not None and progress is not None and progress.running and progress.case != told:
                told = progress.case
                on_case(str(told))
            if time.monotonic() - changed > timeout_s:
                return Watched(True, progress)
    finally:  # Ctrl-C included: nothing of the group may outlive the run
        kill_group(process)
    return Watched(False, _progress(_progress_text(progress_file), names))


def _progress_text(path: Path) -> str | None:
    try:
        with path.open("rb") as file:
            return file.read(64 * 1024).decode(errors="replace")
    except OSError:
        return None


def _progress(text: str | None, names: Sequence[str]) -> Progress | None:
    """The runner's progress; None where there is none, or none about the plan's cases."""
    progress = Progress.from_json(text) if text is not None else None
    if progress is None or (progress.case is not None and progress.case not in names):
        return None
    return progress


def visible_device(index: int) -> str:
    """The CUDA_VISIBLE_DEVICES value for the index-th GPU of those this process sees: CUDA sees the
    listed devices up to the first entry that names none (an index, or a GPU- or MIG- UUID)."""
    listed = os.environ.get("CUDA_VISIBLE_DEVICES")
    if listed is None:
        return str(index)
    visible = []
    for entry in (part.strip() for part in listed.split(",")):
        if not (entry.isascii() and (entry.isdigit() or entry.startswith(("GPU-", "MIG-")))):
            break
        visible.append(entry)
    if index >= len(visible):
        raise EnvironmentProblem(
            f"no GPU {index} among those CUDA_VISIBLE_DEVICES makes visible ({shown_output(listed)})"
        )
    return visible[index]


def _package_root() -> str:
    return str(Path(__file__).resolve().parent.parent.parent)
