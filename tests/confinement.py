"""Landlock in tests: whether this machine confines a worker, and a process in which the kernel refuses
Landlock, as on a machine without it, so that the walls before Landlock are tested alone.

The refusal is a seccomp filter that the test installs in the child it starts (preexec_fn): Landlock's
three system calls fail with ENOSYS there and in everything it runs, as where Linux has no Landlock.
Nothing in ncuverify can switch confinement off."""

import ctypes
import os
import struct
import subprocess
import sys
from pathlib import Path

from conftest import ROOT

# Landlock's system calls (the same numbers on every architecture): create_ruleset, add_rule, restrict_self.
_FIRST_LANDLOCK_CALL, _LAST_LANDLOCK_CALL = 444, 446
_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2
_ENOSYS = 38
# Classic BPF: load the system call's number (seccomp_data.nr, offset 0); answer ENOSYS for Landlock's
# calls, allow every other.
_LOAD_WORD, _JUMP_IF_AT_LEAST, _JUMP_IF_ABOVE, _RETURN = 0x20, 0x35, 0x25, 0x06
_RETURN_ERRNO, _RETURN_ALLOW = 0x00050000, 0x7FFF0000
_FILTER = [
    (_LOAD_WORD, 0, 0, 0),
    (_JUMP_IF_AT_LEAST, 0, 2, _FIRST_LANDLOCK_CALL),  # below: allow
    (_JUMP_IF_ABOVE, 1, 0, _LAST_LANDLOCK_CALL),  # above: allow
    (_RETURN, 0, 0, _RETURN_ERRNO | _ENOSYS),
    (_RETURN, 0, 0, _RETURN_ALLOW),
]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def refuse_landlock() -> None:
    """In this process and all it starts, Landlock is refused as where the kernel has none. For
    subprocess's preexec_fn."""
    libc = ctypes.CDLL(None, use_errno=True)
    program = ctypes.create_string_buffer(b"".join(struct.pack("HBBI", *step) for step in _FILTER))
    fprog = _SockFprog(len(_FILTER), ctypes.cast(program, ctypes.c_void_p))
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "no_new_privs refused")
    if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "seccomp refused")


def confinement(readable: Path, landlock_refused: bool = False) -> tuple[str | None, bool]:
    """How a worker is confined on this machine (or with Landlock refused): (why it could not be, or
    None; whether its network is closed)."""
    script = (
        "from ncuverify.build.worker import confine\n"
        f"state = confine([{str(readable)!r}])\n"
        "print(state.problem or ''); print(state.network_closed)\n"
    )
    problem, closed = run_python(script, landlock_refused).split("\n")[:2]
    return problem or None, closed == "True"


def run_python(script: str, landlock_refused: bool = False) -> str:
    """What a Python script printed, run with this checkout's ncuverify (or Landlock refused)."""
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=True,
        env=checkout_environment(),
        preexec_fn=refuse_landlock if landlock_refused else None,
    )
    return done.stdout


def checkout_environment() -> dict[str, str]:
    """This process's environment, with this checkout first on the import path."""
    inherited = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [inherited])])}


def seccomp_problem() -> str | None:
    """Why refuse_landlock cannot be used on this machine, or None."""
    try:
        subprocess.run([sys.executable, "-c", "pass"], check=True, preexec_fn=refuse_landlock)
    except (OSError, subprocess.SubprocessError) as error:
        return f"cannot refuse Landlock with seccomp here: {error}"
    return None
