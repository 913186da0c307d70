"""Starting the compile worker (ncuverify.build.worker) for a unit: its command, its environment, its
empty folder and its time limit; and reading back what it printed."""

from __future__ import annotations

import base64
import json
import os
import re
import sys
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

import ncuverify
from ncuverify.build.units import Unit
from ncuverify.errors import InputError
from ncuverify.processes import TimedOut, run_bounded

# The variables a worker keeps of ncuverify's environment: what Python, the CUDA wheels and NVRTC need.
# The rest (a CI job's secrets among them) stays out of the process that reads the pull request's files.
_WORKER_ENVIRONMENT = (
    "PATH",
    "HOME",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TMPDIR",
    "PYTHONHOME",
    "PYTHONUSERBASE",
    "PYTHONNOUSERSITE",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
    "CUDA_HOME",
    "CUDA_PATH",
    "LD_LIBRARY_PATH",
)


def worker_environment() -> dict[str, str]:
    environment = {name: os.environ[name] for name in _WORKER_ENVIRONMENT if name in os.environ}
    package_parent = str(Path(ncuverify.__file__).resolve().parent.parent)
    inherited = os.environ.get("PYTHONPATH")
    environment["PYTHONPATH"] = package_parent + (os.pathsep + inherited if inherited else "")
    return environment


# The worker runs as a script, not with -m: -m would import this package first, and with it the
# expectation file's schema and pandas (about a second more per compile). -P keeps the worker's
# folder, whose modules' names are common words, off the import path.
WORKER_SCRIPT = Path(__file__).with_name("worker.py")


def _worker_command(request_file: Path) -> list[str]:
    return [sys.executable, "-P", str(WORKER_SCRIPT), str(request_file)]


@dataclass(frozen=True)
class WorkerAnswer:
    """What the worker printed: compiled (cubin, log, each name expression's lowered name), failed
    (NVRTC's log) or error (the NVRTC call that failed, and its message)."""

    status: Literal["compiled", "failed", "error"]
    log: str = ""
    cubin: bytes = b""
    lowered: dict[str, str] = field(default_factory=dict)
    call: str = ""
    message: str = ""


def in_worker(
    unit: Unit, templates: list[str], options: list[str], readable: list[str], timeout_s: float
) -> WorkerAnswer:
    """Run the compile in the worker script (ncuverify.build.worker), in an empty folder of its own that is
    removed afterwards, reading only under `readable` where the system allows; the worker's process
    group is killed at the time limit."""
    request = {
        "source": base64.b64encode(unit.source_bytes).decode(),
        "name": unit.nvrtc_name,
        "options": options,
        "names": templates,
        "readable": readable,
    }
    with tempfile.TemporaryDirectory(prefix="ncuverify-compile-") as scratch:
        request_file = Path(scratch) / "request.json"
        request_file.write_text(json.dumps(request))
        empty = Path(scratch) / "cwd"
        empty.mkdir()
        try:
            finished = run_bounded(
                _worker_command(request_file), timeout_s, env=worker_environment(), cwd=empty
            )
        except TimedOut:
            raise InputError(
                f"{unit.source_name}: did not compile within {timeout_s:g} s; stopped "
                "(a preprocessor that expands without bound?)"
            ) from None
    if finished.returncode < 0:
        raise InputError(
            f"{unit.source_name}: NVRTC ended on signal {-finished.returncode} while compiling it"
        )
    try:
        if finished.returncode != 0:
            raise ValueError(f"exit status {finished.returncode}")
        answer = _answer(json.loads(finished.stdout))
    except ValueError as error:
        last = (finished.stderr.strip().splitlines() or [""])[-1]
        raise RuntimeError(f"the compile worker for {unit.source_name} failed ({error}): {last}") from None
    return replace(answer, log=_named_as_shown(answer.log, unit))


def _answer(data: object) -> WorkerAnswer:
    """The worker's JSON as a WorkerAnswer; ValueError where it is not one the worker writes."""
    if not isinstance(data, dict) or data.get("status") not in ("compiled", "failed", "error"):
        raise ValueError("no result")
    texts = {name: data.get(name, "") for name in ("log", "cubin", "call", "message")}
    lowered = data.get("lowered", {})
    if not all(isinstance(value, str) for value in texts.values()):
        raise ValueError("a field that is not text")
    if not (isinstance(lowered, dict) and all(isinstance(v, str) for v in lowered.values())):
        raise ValueError("lowered: not names")
    cubin = base64.b64decode(texts.pop("cubin"), validate=True)
    return WorkerAnswer(data["status"], cubin=cubin, lowered=lowered, **texts)


def _named_as_shown(log: str, unit: Unit) -> str:
    """NVRTC's log, naming the program as messages do (kernels/k.cu(4): error ...)."""
    if unit.nvrtc_name == unit.source_name:
        return log
    return re.sub(re.escape(unit.nvrtc_name) + r'(?=[("])', lambda _: unit.source_name, log)
