"""Compiles one NVRTC program in a process of its own, so that a compile that runs past its limit (a
preprocessor that expands without bound, a header that includes itself) can be stopped by killing it.

Run as `python -m ncuverify.compile_worker REQUEST.json` in an empty folder (NVRTC looks for the quoted
includes of an inline source in the current folder); prints one JSON object on standard output:
{"status": "compiled", "log", "cubin" (base64), "lowered"}, {"status": "failed", "log"} where the
program does not compile, or {"status": "error", "call", "message"} where an NVRTC call fails. It
imports nothing else of ncuverify, so that it starts quickly.
"""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path
from typing import Any

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
    return name.decode()


def main(argv: list[str]) -> int:
    request = json.loads(Path(argv[1]).read_text())
    result = compile_program(
        base64.b64decode(request["source"]), request["name"], request["options"], request["names"]
    )
    sys.stdout.write(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
