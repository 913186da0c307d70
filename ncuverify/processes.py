"""Child processes that cannot outlive their time limit.

Each command runs in a process group of its own, and the whole group is killed at the limit, on any
exception (Ctrl-C included) and after the command returns: a grandchild that holds on (a tool's
helper process, a hung profiler) never keeps ncuverify waiting. Output goes to temporary files rather
than pipes, because a pipe that a grandchild keeps open blocks a reader past the child's death.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

# What is read back of a command's output: enough for any report ncuverify parses, and a bound on
# what a hostile tool can make it hold in memory.
MAX_OUTPUT_BYTES = 256 * 1024 * 1024
# How long a killed group may take to be gone: its processes are reaped by init, which can lag.
GROUP_END_S = 30.0


@dataclass(frozen=True)
class Finished:
    """A command that ended within its limit."""

    returncode: int
    stdout: str
    stderr: str


class TimedOut(Exception):
    """The command ran past its limit; its whole process group was killed."""

    def __init__(self, command: Sequence[str], timeout_s: float) -> None:
        super().__init__(f"{Path(command[0]).name} did not finish within {timeout_s:g} s; stopped")
        self.command = list(command)
        self.timeout_s = timeout_s


def run_bounded(
    command: Sequence[str],
    timeout_s: float,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> Finished:
    """Run command to its end or its limit (TimedOut), with no standard input. OSError where it cannot
    start (FileNotFoundError: no such program)."""
    with tempfile.TemporaryFile() as stdout, tempfile.TemporaryFile() as stderr:
        process = start_group(command, stdout, stderr, env, cwd)
        try:
            returncode = process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            raise TimedOut(command, timeout_s) from None
        finally:
            kill_group(process)
        return Finished(returncode, _read(stdout), _read(stderr))


def start_group(
    command: Sequence[str],
    stdout: IO[bytes] | int,
    stderr: IO[bytes] | int,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> subprocess.Popen[bytes]:
    """Start command as the leader of a new session and process group (see kill_group)."""
    return subprocess.Popen(
        list(command),
        stdout=stdout,
        stderr=stderr,
        stdin=subprocess.DEVNULL,
        env=dict(env) if env is not None else None,
        cwd=cwd,
        start_new_session=True,
    )


def kill_group(process: subprocess.Popen[bytes]) -> None:
    """Kill the process and everything it started, reap it, and wait (at most GROUP_END_S) until no
    process of its group is left, so that none writes anything afterwards. Safe to call more than once."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    deadline = time.monotonic() + GROUP_END_S
    while time.monotonic() < deadline:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            return
        time.sleep(0.05)


def _read(file: IO[bytes]) -> str:
    file.seek(0)
    return file.read(MAX_OUTPUT_BYTES).decode(errors="replace")
