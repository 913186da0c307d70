"""Recorded profiles: what the ncu processes of a run produced, kept so that every later stage can run
again without a GPU (`check --from-profile DIR`), and where it came from (provenance).

A recording is a folder holding each ncu process's log (`ncu.log`, `ncu.1.log`, ...: the CSV) and the
runner's status per case (`status.json`, `status.1.json`, ...), with cases named `<file>::<case>`,
and `provenance.json`. `runs/` keeps each process's plan, output and, when asked, its `.ncu-rep`
report; `cubins/` the kernels; `explain.*` the second pass over failed claims.

A folder of per-file recordings (`DIR/<file stem>/ncu.log` and so on, cases named without their file),
as earlier versions wrote them, reads as one recording too.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

from ncuverify.build import KernelBuild
from ncuverify.errors import InputError

LOG = "ncu.log"
STATUS = "status.json"
PROVENANCE = "provenance.json"
COMMANDS = "commands.json"  # each run's ncu command line, in run order
SEP = "::"  # between a file's key and a case or kernel name


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
    kernels: dict[str, str] = field(default_factory=dict)  # <file>::<kernel> -> digest of source and options

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
    (folder / COMMANDS).write_text(json.dumps([run.command for run in runs], indent=1))


def load(root: Path, keys: Sequence[str]) -> Recording:
    """The recording in root; or, in a folder of per-file recordings, those of the files named by keys.
    InputError if there is none."""
    if (root / LOG).is_file():
        return _load_folder(root)
    folders = [root / key for key in keys if (root / key / LOG).is_file()]
    if not folders:
        raise InputError(f"no recording in {root}: it holds no {LOG}, nor folders {', '.join(keys)} that do")
    parts = [_qualified(_load_folder(folder), folder.name) for folder in folders]
    kernels = {name: digest for part in parts for name, digest in part.provenance.kernels.items()}
    provenance = replace(parts[0].provenance, kernels=kernels)
    return Recording(root, [run for part in parts for run in part.runs], provenance)


def load_provenance(root: Path, key: str) -> Provenance:
    """Where the figures of a recording (or of the file named key in a folder of them) come from."""
    if (root / LOG).is_file():
        return _provenance(root)
    if (root / key / LOG).is_file():
        return _qualified(Recording(root / key, [], _provenance(root / key)), key).provenance
    raise InputError(f"no recording of {key} in {root}: neither {root} nor {root / key} holds one")


def _load_folder(folder: Path) -> Recording:
    missing = [name for name in (LOG, STATUS, PROVENANCE) if not (folder / name).is_file()]
    if missing:
        raise InputError(f"{folder} is not a whole recording: it lacks {', '.join(missing)}")
    try:
        commands = json.loads((folder / COMMANDS).read_text()) if (folder / COMMANDS).is_file() else []
        runs = []
        while (folder / _names(len(runs))[0]).is_file():
            log, status = _names(len(runs))
            command = commands[len(runs)] if len(runs) < len(commands) else []
            runs.append(
                Run(
                    (folder / log).read_text(errors="replace"),
                    json.loads((folder / status).read_text()),
                    command,
                )
            )
    except (OSError, ValueError, TypeError) as error:
        raise InputError(f"{folder}: the recording is damaged ({error})") from None
    return Recording(folder, runs, _provenance(folder))


def _provenance(folder: Path) -> Provenance:
    try:
        return Provenance(**json.loads((folder / PROVENANCE).read_text()))
    except (OSError, ValueError, TypeError) as error:
        raise InputError(f"{folder}: the recording is damaged ({error})") from None


def _qualified(recording: Recording, key: str) -> Recording:
    """A one-file recording with its cases and kernels named as a run's recording names them (those of
    earlier versions name them without the file)."""

    def name(plain: str) -> str:
        return plain if SEP in plain else f"{key}{SEP}{plain}"

    runs = [
        replace(run, status=[{**s, "case": name(str(s["case"]))} for s in run.status])
        for run in recording.runs
    ]
    kernels = {name(kernel): digest for kernel, digest in recording.provenance.kernels.items()}
    return Recording(recording.folder, runs, replace(recording.provenance, kernels=kernels))


def changed_kernels(provenance: Provenance, builds: dict[str, KernelBuild], key: str) -> list[str]:
    """The file's kernels whose build today differs from the one recorded: their figures may be stale."""
    recorded = provenance.kernels
    return sorted(
        name
        for name, build in builds.items()
        if f"{key}{SEP}{name}" in recorded and recorded[f"{key}{SEP}{name}"] != build.source_digest
    )
