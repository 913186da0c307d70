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
# How long a killed group may take to end. Its orphans are reaped by init, at init's pace (seconds, in
# some containers), so a group counts as ended once each of its processes is gone or a zombie: a zombie
# holds no file and writes nothing.
GROUP_END_S = 30.0
_PROC = Path("/proc")


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
    process of its group can run, so that none writes anything afterwards. Safe to call more than once."""
    deadline = time.monotonic() + GROUP_END_S
    _kill(process.pid)
    process.wait()
    while not group_ended(process.pid) and time.monotonic() < deadline:
        _kill(process.pid)  # a process may have been forked after the last signal
        time.sleep(0.01)


def group_ended(group: int) -> bool:
    """Whether no process of the group can run any more: each is gone or a zombie."""
    try:
        os.killpg(group, 0)
    except (ProcessLookupError, PermissionError):
        return True
    states = _group_states(group)
    return states is not None and all(state in "ZX" for state in states)


def _kill(group: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, signal.SIGKILL)


def _group_states(group: int) -> list[str] | None:
    """The state letters (R, S, Z ...) of the processes of the group; None where /proc cannot tell."""
    try:
        entries = [entry for entry in os.listdir(_PROC) if entry.isdigit()]
    except OSError:
        return None
    states = []
    for entry in entries:
        try:
            stat = (_PROC / entry / "stat").read_bytes()
        except OSError:
            continue  # ended meanwhile
        # After the command name, which may hold any bytes, in parentheses: state, ppid, pgrp ...
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 2 and fields[2] == str(group).encode():
            states.append(fields[0].decode(errors="replace"))
    return states


def _read(file: IO[bytes]) -> str:
    file.seek(0)
    return file.read(MAX_OUTPUT_BYTES).decode(errors="replace")
