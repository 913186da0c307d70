"""Child processes that cannot outlive their time limit, nor leave anything running behind them.

Each command runs under a launcher (ncuverify/subreaper.py), which leads a session and process group of
its own and is the command's child subreaper: every process the command starts and leaves, a `setsid`
daemon that left the group included, becomes the launcher's child, and the launcher kills and reaps
them all once the command ends, or at once when asked (SIGTERM), or when ncuverify itself ends. At the
limit, on any exception (Ctrl-C included) and after the command returns, the launcher is asked and
then the whole group killed: a grandchild that holds on (a tool's helper process, a hung profiler, a
program's daemon) never keeps ncuverify waiting, nor outlives the run. Output goes to temporary files
rather than pipes, because a pipe that a grandchild keeps open blocks a reader past the child's death.

The launcher adds about 15 ms to each command (Python's start-up, and ctypes); it imports nothing of
ncuverify.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

# What is read back of a command's output: enough for any report ncuverify parses, and a bound on
# what a hostile tool can make it hold in memory.
MAX_OUTPUT_BYTES = 256 * 1024 * 1024
# How long a killed group may take to end. Where the launcher was killed itself, its orphans are reaped
# by init, at init's pace (seconds, in some containers), so a group counts as ended once each of its
# processes is gone or a zombie: a zombie holds no file and writes nothing.
GROUP_END_S = 30.0
_PROC = Path("/proc")
# The launcher: -I -S, no site and no environment variable of Python's, so that it starts quickly and
# the command's environment changes nothing of it.
SUBREAPER = Path(__file__).resolve().with_name("subreaper.py")
_READY = b"ready"
_EXEC_FAILED = b"exec "
_MAX_STATUS = 4096


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
    """Start command under the launcher, which leads a new session and process group (see kill_group);
    return once the command runs. OSError where it cannot start (FileNotFoundError: no such program)."""
    launcher = [sys.executable, "-I", "-S", str(SUBREAPER)]
    read_end, write_end = os.pipe()
    try:
        process = subprocess.Popen(
            [*launcher, str(write_end), str(os.getpid()), "--", *command],
            stdout=stdout,
            stderr=stderr,
            stdin=subprocess.DEVNULL,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            start_new_session=True,
            pass_fds=(write_end,),
        )
    except BaseException:
        os.close(read_end)
        raise
    finally:
        os.close(write_end)
    try:
        said = _status(read_end)
    except BaseException:
        kill_group(process)
        raise
    if said != _READY:
        kill_group(process)
        raise _not_started(command, said)
    return process


def _status(read_end: int) -> bytes:
    """What the launcher said on the status pipe, until it closed it (or ended)."""
    said = b""
    try:
        while chunk := os.read(read_end, _MAX_STATUS):
            said = (said + chunk)[:_MAX_STATUS]
    finally:
        os.close(read_end)
    return said


def _not_started(command: Sequence[str], said: bytes) -> OSError:
    """Why the command did not start: exec's errno, as Popen would raise it, or the launcher's failure."""
    number = said.removeprefix(_EXEC_FAILED)
    if said.startswith(_EXEC_FAILED) and number.isdigit():
        return OSError(int(number), os.strerror(int(number)), command[0])
    shown = said.decode(errors="replace") or "it ended without a word"
    return OSError(f"could not start {Path(command[0]).name}: the process launcher failed ({shown})")


def kill_group(process: subprocess.Popen[bytes]) -> None:
    """Kill the process and everything it started, reap it, and wait (at most GROUP_END_S) until no
    process of its group can run, so that none writes anything afterwards. Safe to call more than once.

    The launcher is asked first (SIGTERM), since it alone can find what left the group: it kills every
    process under it, reaps them and exits. Then the group is killed, should the launcher not answer."""
    deadline = time.monotonic() + GROUP_END_S
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(GROUP_END_S)
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
