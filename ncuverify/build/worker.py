"""Compiles one NVRTC program in a process of its own, so that a compile that runs past its limit (a
preprocessor that expands without bound, a header that includes itself) can be stopped by killing it.

Run as `python -P .../ncuverify/build/worker.py REQUEST.json` in an empty folder; prints one JSON object on
standard output: {"status": "compiled", "log", "cubin" (base64), "lowered"}, {"status": "failed",
"log"} where the program does not compile, or {"status": "error", "call", "message"} where an NVRTC
call fails; each with "confined", whether the process could read only the folders it was given, and
"network_closed", whether it can neither bind nor connect over TCP. It imports nothing else of
ncuverify, so that it starts quickly.

The include walk (ncuverify.build.resolve) decides what a program may read; where Linux offers Landlock
(5.13 and later), the worker also has the kernel refuse it every other file, before NVRTC runs: a
second wall, should anything the walk did not foresee make NVRTC open a file outside (a CUDA header
that includes a project header the walk did not reach, say). Where Landlock has network rules (its
ABI 4, Linux 6.7 and later), the worker and what it runs can neither bind nor connect over TCP either:
nothing a compile does needs the network, so a command that nvcc's shell were made to run could not
reach out.
"""

from __future__ import annotations

import base64
import ctypes
import json
import os
import sys
from pathlib import Path
from typing import Any, NamedTuple

# A log longer than this (a preprocessor's errors repeated without end) is cut: enough to show
# what went wrong, and a bound on what the worker hands back.
MAX_LOG_CHARS = 1024 * 1024


class _CallFailed(Exception):
    def __init__(self, call: str, message: str) -> None:
        super().__init__(call, message)
        self.call, self.message = call, message


def compile_program(source: bytes, name: str, options: list[str], names: list[str]) -> dict[str, Any]:
    """Compile with NVRTC: the cubin, the log and the mangled names of the name expressions."""
    from cuda.bindings import nvrtc

    try:
        result, program = nvrtc.nvrtcCreateProgram(source, name.encode(), 0, [], [])
        _check(result, "nvrtcCreateProgram")
        try:
            for entry in names:
                _check(nvrtc.nvrtcAddNameExpression(program, entry.encode())[0], "nvrtcAddNameExpression")
            encoded = [option.encode() for option in options]
            (status,) = nvrtc.nvrtcCompileProgram(program, len(encoded), encoded)
            log = _program_log(program)
            if status != nvrtc.nvrtcResult.NVRTC_SUCCESS:
                return {"status": "failed", "log": log}
            cubin = _program_cubin(program)
            lowered = {entry: _lowered_name(program, entry) for entry in names}
        finally:
            nvrtc.nvrtcDestroyProgram(program)
    except _CallFailed as failed:
        return {"status": "error", "call": failed.call, "message": failed.message}
    return {"status": "compiled", "log": log, "cubin": base64.b64encode(cubin).decode(), "lowered": lowered}


def _check(result: object, call: str) -> None:
    from cuda.bindings import nvrtc

    if result != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        _, text = nvrtc.nvrtcGetErrorString(result)
        raise _CallFailed(call, text.decode(errors="replace"))


def _program_log(program: object) -> str:
    from cuda.bindings import nvrtc

    result, size = nvrtc.nvrtcGetProgramLogSize(program)
    _check(result, "nvrtcGetProgramLogSize")
    buffer = b" " * size
    _check(nvrtc.nvrtcGetProgramLog(program, buffer)[0], "nvrtcGetProgramLog")
    log = buffer.rstrip(b"\0").decode(errors="replace")
    if len(log) > MAX_LOG_CHARS:
        log = log[:MAX_LOG_CHARS] + f"\n... (the log is cut at {MAX_LOG_CHARS} characters)"
    return log


def _program_cubin(program: object) -> bytes:
    from cuda.bindings import nvrtc

    result, size = nvrtc.nvrtcGetCUBINSize(program)
    _check(result, "nvrtcGetCUBINSize")
    buffer = b" " * size
    _check(nvrtc.nvrtcGetCUBIN(program, buffer)[0], "nvrtcGetCUBIN")
    return buffer


def _lowered_name(program: object, entry: str) -> str:
    from cuda.bindings import nvrtc

    result, name = nvrtc.nvrtcGetLoweredName(program, entry.encode())
    _check(result, "nvrtcGetLoweredName")
    if name is None:  # NVRTC says it succeeded, and gives no name: the program ended before its names
        raise _CallFailed("nvrtcGetLoweredName", f"NVRTC gave no name for {entry!r}")
    return name.decode()


# --- Landlock -------------------------------------------------------------------------------------------------

# The system calls' numbers are the same on every architecture (they came after Linux 5.1 unified them).
_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38
_READ_FILE, _READ_DIR = 1 << 2, 1 << 3
_FILE_RIGHTS = 1 << 1 | _READ_FILE | 1 << 14  # writing, reading and truncating
# LANDLOCK_ACCESS_NET_BIND_TCP and LANDLOCK_ACCESS_NET_CONNECT_TCP, handled from ABI 4 on; with no rule
# that allows a port, both are refused for every port.
_NET_ABI = 4
_NET_RIGHTS = 1 << 0 | 1 << 1


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64)]


class _NetRulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


class Confinement(NamedTuple):
    problem: str | None  # why this process could not be confined; None where it is
    network_closed: bool  # whether it can neither bind nor connect over TCP


def landlock_abi() -> int:
    """The Landlock ABI this kernel offers (0 where it offers none, or not Linux)."""
    return max(_abi(_libc()), 0) if sys.platform.startswith("linux") else 0


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def _abi(libc: ctypes.CDLL) -> int:
    """landlock_create_ruleset's answer when asked its version: the ABI, or -1 (errno saying why)."""
    return int(
        libc.syscall(_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
    )


def confine(readable: list[str], writable: tuple[str, ...] = ()) -> Confinement:
    """Let this process read only under the given folders, and write nowhere it opens anew but under
    the writable ones (what is open stays usable: standard output); where the ABI allows, neither bind
    nor connect over TCP."""
    if not sys.platform.startswith("linux"):
        return Confinement("not Linux", False)
    libc = _libc()
    abi = _abi(libc)
    if abi < 1:
        return Confinement(f"no Landlock here ({os.strerror(ctypes.get_errno())})", False)
    # Every right of ABI 1 but executing (dlopen maps NVRTC's builtins), and those of later ABIs that
    # concern files: reparenting (2) and truncating (3).
    handled = (
        sum(1 << bit for bit in range(1, 13)) | (1 << 13 if abi >= 2 else 0) | (1 << 14 if abi >= 3 else 0)
    )
    closes_network = abi >= _NET_ABI
    attr: ctypes.Structure = (
        _NetRulesetAttr(handled, _NET_RIGHTS) if closes_network else _RulesetAttr(handled)
    )
    ruleset = libc.syscall(
        _CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)), ctypes.c_uint32(0)
    )
    if ruleset < 0:
        return Confinement(f"no Landlock ruleset ({os.strerror(ctypes.get_errno())})", False)
    try:
        problem = _restrict(libc, ruleset, readable, writable, handled)
    finally:
        os.close(ruleset)
    return Confinement(problem, problem is None and closes_network)


def _restrict(
    libc: ctypes.CDLL, ruleset: int, readable: list[str], writable: tuple[str, ...], handled: int
) -> str | None:
    """Add the folders' rules to the ruleset and enforce it on this process; None where that is done,
    else why not."""
    rights = [
        *((folder, _READ_FILE | _READ_DIR) for folder in readable),
        *((f, handled) for f in writable),
    ]
    for folder, allowed in rights:
        try:
            descriptor = os.open(folder, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            continue  # not there: nothing to read in it either
        if not os.path.isdir(folder):  # a file (/etc/ld.so.cache): only the rights a file has
            allowed &= _FILE_RIGHTS
        rule = _PathBeneathAttr(allowed, descriptor)
        added = libc.syscall(
            _ADD_RULE,
            ctypes.c_int(ruleset),
            ctypes.c_int(_RULE_PATH_BENEATH),
            ctypes.byref(rule),
            ctypes.c_uint32(0),
        )
        os.close(descriptor)
        if added != 0:
            return f"a Landlock rule was refused ({os.strerror(ctypes.get_errno())})"
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return f"no_new_privs refused ({os.strerror(ctypes.get_errno())})"
    if libc.syscall(_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
        return f"Landlock refused ({os.strerror(ctypes.get_errno())})"
    return None


def _nvrtc_folders() -> list[str]:
    """The folders of the NVRTC libraries this process loaded: it loads its builtins from there as it
    compiles."""
    from cuda.bindings import nvrtc

    nvrtc.nvrtcVersion()  # loads the library
    with open("/proc/self/maps") as maps:
        paths = {line.split(None, 5)[-1].strip() for line in maps if "libnvrtc" in line}
    return sorted({os.path.dirname(path) for path in paths if path.startswith("/")})


_UNCONFINED = Confinement("no folders given", False)


def _confinement_fields(state: Confinement) -> dict[str, Any]:
    return {
        "confined": state.problem is None,
        "problem": state.problem,
        "network_closed": state.network_closed,
    }


def run_confined(request: dict[str, Any]) -> int:
    """Confine this process (reading under "readable", writing under "writable") and become the
    program of "exec", with the environment "environment" alone; first prints one line saying whether
    the confinement holds."""
    readable, writable = list(request["readable"]), tuple(request["writable"])
    state = confine(readable, writable) if readable else _UNCONFINED
    sys.stdout.write(json.dumps(_confinement_fields(state)) + "\n")
    sys.stdout.flush()
    command = [str(part) for part in request["exec"]]
    os.execve(command[0], command, dict(request["environment"]))


def main(argv: list[str]) -> int:
    request = json.loads(Path(argv[1]).read_text())
    if "exec" in request:
        return run_confined(request)
    readable = list(request.get("readable", []))
    state = confine([*readable, *_nvrtc_folders()]) if readable else _UNCONFINED
    result = compile_program(
        base64.b64decode(request["source"]), request["name"], request["options"], request["names"]
    )
    sys.stdout.write(json.dumps({**result, **_confinement_fields(state)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
