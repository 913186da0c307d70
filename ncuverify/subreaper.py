"""Runs one command and, once it ends, ends every process it left behind: the launcher of each command
ncuverify starts (ncuverify.processes).

Run as `python -I -S .../ncuverify/subreaper.py STATUS_FD PARENT_PID -- COMMAND...`. It makes itself a
child subreaper (prctl PR_SET_CHILD_SUBREAPER), so that a process the command starts and leaves, a
double fork's grandchild or a `setsid` daemon that left the process group, becomes its child rather
than init's; then it starts the command, waits for it, kills and reaps every process still under it,
and exits as the command did (its status, or the signal that ended it). SIGTERM (ncuverify stopping
the command at its time limit, or ncuverify itself ending) kills everything at once.

A subreaper rather than a cgroup v2: making a cgroup needs root or a subtree delegated by systemd, which
a CI runner's job or a user's shell rarely has (some machines mount only cgroup v1), while a subreaper
(Linux 3.4 and later) needs no privilege. What it cannot catch is a process that some other, outside
service starts on the command's behalf (systemd-run, at, a container engine).

STATUS_FD is the write end of a pipe whose reader is ncuverify: the launcher writes `ready` once the
command runs, or `exec ERRNO` where it could not be started, and closes it. It imports nothing of
ncuverify, and of the standard library only ctypes, os, sys and _signal, so that it starts quickly
(about 12 ms, against 8 ms for Python doing nothing).
"""

from __future__ import annotations

import ctypes
import os
import sys

TYPE_CHECKING = False  # as typing has it, without importing typing (about 10 ms); mypy takes it as True
if TYPE_CHECKING:
    import signal
else:
    # The C module behind `signal`, the same functions without the enum wrappers: enum (and contextlib)
    # would add a third to the launcher's start-up, about 5 ms.
    import _signal as signal

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
READY = b"ready"
EXEC_FAILED = b"exec "
# What the launcher waits for: a child that ended, or a request to stop.
_AWAITED = {signal.SIGCHLD, signal.SIGTERM}
# How long it waits for a killed process to end before it looks again.
_KILLED_POLL_S = 0.01
_PROC = "/proc"


def main(argv: list[str]) -> int:
    status_fd, parent, command = int(argv[1]), int(argv[2]), argv[4:]
    os.set_inheritable(status_fd, False)  # closed on exec: its end tells ncuverify the command runs
    libc = ctypes.CDLL(None, use_errno=True)
    signal.pthread_sigmask(signal.SIG_BLOCK, _AWAITED)  # taken with sigwaitinfo, never by a handler
    for option, value in ((PR_SET_CHILD_SUBREAPER, 1), (PR_SET_PDEATHSIG, signal.SIGTERM)):
        if libc.prctl(option, value, 0, 0, 0) != 0:
            os.write(status_fd, f"prctl {option} failed: errno {ctypes.get_errno()}".encode())
            return 127
    if os.getppid() != parent:  # ncuverify ended before PR_SET_PDEATHSIG was set
        return 127
    try:
        child = _start(command)
    except OSError as error:
        os.write(status_fd, EXEC_FAILED + str(error.errno).encode())
        return 127
    os.write(status_fd, READY)
    os.close(status_fd)
    status = _wait_for(child)
    _end_descendants()
    return _exit_as(status, libc)


def _given_environment() -> dict[bytes, bytes]:
    """The environment as ncuverify gave it, which the command gets: Python's start-up adds to its own
    (LC_CTYPE, where it coerces the C locale), and /proc keeps the one the process was started with."""
    with open(f"{_PROC}/self/environ", "rb") as file:
        entries = file.read().split(b"\0")
    return dict(entry.split(b"=", 1) for entry in entries if b"=" in entry)


def _start(command: list[str]) -> int:
    """Start command, found on the PATH ncuverify gave, with no signal blocked and the default action
    for those Python ignores (SIGPIPE, SIGXFSZ); OSError where it cannot be (posix_spawn reports exec's
    errno). The status pipe is not inherited: it closes on exec."""
    return os.posix_spawnp(
        command[0],
        command,
        _given_environment(),
        setsigmask=(),
        setsigdef=(signal.SIGPIPE, signal.SIGXFSZ),
    )


def _wait_for(child: int) -> int | None:
    """The command's wait status once it ends; None where SIGTERM asks to stop it first. Orphans that
    end meanwhile are reaped as they come."""
    while True:
        if signal.sigwaitinfo(_AWAITED).si_signo == signal.SIGTERM:
            return None
        ended, _ = _reap()
        if child in ended:
            return ended[child]


def _reap() -> tuple[dict[int, int], bool]:
    """The children that have ended (pid: wait status), reaped; and whether any child is left."""
    ended: dict[int, int] = {}
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return ended, False
        if pid == 0:
            return ended, True
        ended[pid] = status


def _end_descendants() -> None:
    """Kill every process under this one and reap them, until none is left. Every orphan of the tree
    comes here, so with no child left there is no descendant; one forked while the tree is killed is
    the child of a killed process, so it comes here too and is killed in the next round."""
    while _reap()[1]:
        for pid in _descendants(os.getpid()):
            try:  # noqa: SIM105 (contextlib, slower to import)
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass  # ended meanwhile
        signal.sigtimedwait({signal.SIGCHLD}, _KILLED_POLL_S)


def _descendants(root: int) -> list[int]:
    """The processes under root, read from each process's parent in /proc/PID/stat (the shorter
    /proc/PID/task/TID/children needs a kernel built with CONFIG_PROC_CHILDREN, which not all are)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir(_PROC):
        if not entry.isdigit():
            continue
        try:
            with open(f"{_PROC}/{entry}/stat", "rb") as file:
                stat = file.read()
        except OSError:
            continue  # ended meanwhile
        # After the command name, which may hold any bytes, in parentheses: state, ppid ...
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 1:
            children.setdefault(int(fields[1]), []).append(int(entry))
    found, unvisited = [], [root]
    while unvisited:
        below = children.get(unvisited.pop(), [])
        found += below
        unvisited += below
    return found


def _exit_as(status: int | None, libc: ctypes.CDLL) -> int:
    """The command's exit status; where a signal ended it, the launcher ends on the same signal, and
    where it was stopped on request (None), on SIGKILL, as a process killed with its group does."""
    if status is not None and not os.WIFSIGNALED(status):
        return os.waitstatus_to_exitcode(status)
    number = os.WTERMSIG(status) if status is not None else signal.SIGKILL
    libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)  # the command's crash, not a core file of the launcher
    if number not in (signal.SIGKILL, signal.SIGSTOP):
        signal.signal(number, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {number})
    os.kill(os.getpid(), number)
    return 128 + number  # a signal that does not end a process by default


if __name__ == "__main__":
    sys.exit(main(sys.argv))
