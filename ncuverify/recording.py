"""Recorded profiles: what one ncu run of a file produced, kept so that every later stage can run again
without a GPU (`check --from-profile DIR`), and where it came from (provenance).

A recording of a file is a folder `DIR/<file stem>/` holding ncu's log (`ncu.log`, the CSV), the
runner's status per case (`status.json`) and `provenance.json`; where a case faulted or hung, the
runs after it follow as `ncu.1.log` and `status.1.json`, and so on. `--save-profile` also keeps the
plans and the cubins beside them.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from ncuverify.build import KernelBuild
from ncuverify.errors import InputError

LOG = "ncu.log"
STATUS = "status.json"
PROVENANCE = "provenance.json"


@dataclass(frozen=True)
class Provenance:
    """Where measurements come from: the machine, the tools, the settings and the kernels' sources."""

    recorded_at: str
    gpu: str
    arch: str
    nvidia_driver: str | None
    cuda_driver: str
    ncu_version: str | None
    nvrtc_version: str
    ncuverify_version: str
    clock_control: str
    cache_control: str
    ncu_command: list[str]
    kernels: dict[str, str] = field(default_factory=dict)  # kernel name -> digest of its source and options

    def describe(self) -> str:
        driver = f"driver {self.nvidia_driver}" if self.nvidia_driver else f"CUDA driver {self.cuda_driver}"
        return f"{self.gpu} ({self.arch}, {driver}, ncu {self.ncu_version or '?'}) on {self.recorded_at}"


@dataclass(frozen=True)
class Run:
    """One ncu process: its report and the runner's status per case. A file takes more than one run
    when a case faults or hangs: the cases after it run again in a fresh process."""

    report: str
    status: list[dict[str, object]]
    command: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Recording:
    folder: Path
    runs: list[Run]
    provenance: Provenance


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")


def nvidia_driver_version() -> str | None:
    """The NVIDIA driver's version (580.159.04), where nvidia-smi can tell it."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None
    try:
        completed = subprocess.run(
            [smi, "--query-gpu=driver_version", "--format=csv,noheader", "-i", "0"],
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return completed.stdout.strip() or None


def _names(index: int) -> tuple[str, str]:
    """ncu.log and status.json for the first run; ncu.1.log and status.1.json for the next, and so on."""
    if index == 0:
        return LOG, STATUS
    return f"ncu.{index}.log", f"status.{index}.json"


def save(folder: Path, runs: list[Run], provenance: Provenance) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for index, run in enumerate(runs):
        log, status = _names(index)
        (folder / log).write_text(run.report)
        (folder / status).write_text(json.dumps(run.status, indent=1))
    (folder / PROVENANCE).write_text(json.dumps(asdict(provenance), indent=1))


def load(root: Path, stem: str) -> Recording:
    """The recording of the file named stem under root; InputError if there is none."""
    folder = root / stem
    missing = [name for name in (LOG, STATUS, PROVENANCE) if not (folder / name).is_file()]
    if missing:
        raise InputError(f"no recording of {stem} in {root}: {folder} lacks {', '.join(missing)}")
    try:
        provenance = Provenance(**json.loads((folder / PROVENANCE).read_text()))
        runs = []
        while (folder / _names(len(runs))[0]).is_file():
            log, status = _names(len(runs))
            runs.append(
                Run((folder / log).read_text(errors="replace"), json.loads((folder / status).read_text()))
            )
    except (OSError, ValueError, TypeError) as error:
        raise InputError(f"{folder}: the recording is damaged ({error})") from None
    return Recording(folder, runs, provenance)


def changed_kernels(recording: Recording, builds: dict[str, KernelBuild]) -> list[str]:
    """Kernels whose build today differs from the one recorded: their figures may be stale."""
    return sorted(
        name
        for name, build in builds.items()
        if name in recording.provenance.kernels and recording.provenance.kernels[name] != build.source_digest
    )
