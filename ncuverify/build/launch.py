"""Starting the compile worker (ncuverify.build.worker) for a unit: its command, its environment, its
empty folder and its time limit; and reading back what it printed."""

from __future__ import annotations

import base64
import json
import os
import re
import sys
import tempfile
from pathlib import Path

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


def in_worker(
    unit: Unit, templates: list[str], options: list[str], readable: list[str], timeout_s: float
) -> dict:
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
        result = json.loads(finished.stdout)
        if not isinstance(result, dict) or result.get("status") not in ("compiled", "failed", "error"):
            raise ValueError("no result")
    except ValueError as error:
        last = (finished.stderr.strip().splitlines() or [""])[-1]
        raise RuntimeError(f"the compile worker for {unit.source_name} failed ({error}): {last}") from None
    if isinstance(result.get("log"), str):
        result["log"] = _named_as_shown(result["log"], unit)
    return result


def _named_as_shown(log: str, unit: Unit) -> str:
    """NVRTC's log, naming the program as messages do (kernels/k.cu(4): error ...)."""
    if unit.nvrtc_name == unit.source_name:
        return log
    return re.sub(re.escape(unit.nvrtc_name) + r'(?=[("])', lambda _: unit.source_name, log)
