"""Recorded profiles: what the ncu processes of a run produced, kept so that every later stage can run
again without a GPU (`check --from-profile DIR`), and where it came from (provenance).

A recording is a folder holding each ncu process's log (`ncu.log`, `ncu.1.log`, ...: the CSV) and the
runner's status per case (`status.json`, `status.1.json`, ...), with cases named `<file>::<case>`
(a process without ncu, for cases that need none, leaves the same two: the runner's report of their
launch facts, as ncu's raw page gives them, and its status; `commands.json` names the runner alone as
its command), and `provenance.json` (with digests of each kernel's source, each case's inputs and each program
case's files, which a replay compares with today's: ncuverify.stages.staleness). `runs/` keeps
each process's plan, output and, when asked, its `.ncu-rep` report; `cubins/` the kernels;
`explain.*` the second pass over failed claims (`explain-programs/` that of program cases).

A folder of per-file recordings (`DIR/<file stem>/ncu.log` and so on, cases named without their file),
as earlier versions wrote them, reads as one recording too.

A recording is input like any other: a pull request can commit one. Every file of it is read with a
bound on its size, only as a plain file inside the recording (never through a symbolic link), and
checked field by field; anything else is an InputError naming the file and the field. An ncu log is
damaged where it is not the UTF-8 text ncuverify saved, not ncu's CSV, or lacks the launches of a case
that its status says ran (ncuverify.profile.per_file): what a live run takes for ncu's own failure
(claims in error) is, in a recording, a file changed since.
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from ncuverify.errors import InputError
from ncuverify.files import CannotRead, NotRegular, SymbolicLink, TooLarge, read_plain
from ncuverify.names import QualifiedCase
from ncuverify.processes import TimedOut, run_bounded
from ncuverify.profile.run import Run
from ncuverify.provenance import Provenance
from ncuverify.results import FileKey
from ncuverify.runner import CaseStatus, StatusError, read_statuses, statuses_json

LOG = "ncu.log"
STATUS = "status.json"
PROVENANCE = "provenance.json"
COMMANDS = "commands.json"  # each run's ncu command line, in run order

# Far above what any real run records: bounds on what a damaged recording can make ncuverify read.
MAX_LOG_BYTES = 64 * 1024 * 1024
MAX_JSON_BYTES = 16 * 1024 * 1024
MAX_EXPLAIN_BYTES = 64 * 1024 * 1024
MAX_RUNS = 10_000
# nvidia-smi answers in well under a second; one that does not is stuck.
NVIDIA_SMI_TIMEOUT_S = 10.0
_VERSION = re.compile(r"[0-9]+(\.[0-9]+)*")


@dataclass(frozen=True)
class Recording:
    folder: Path
    runs: list[Run]
    provenance: Provenance


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")


def nvidia_driver_version() -> str | None:
    """The NVIDIA driver's version (580.159.04), where nvidia-smi can tell it (within 10 s)."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None
    command = [smi, "--query-gpu=driver_version", "--format=csv,noheader", "-i", "0"]
    try:
        answer = run_bounded(command, NVIDIA_SMI_TIMEOUT_S).stdout.strip()
    except (OSError, TimedOut):
        return None
    return answer if _VERSION.fullmatch(answer) and len(answer) <= 40 else None


def _names(index: int) -> tuple[str, str]:
    """ncu.log and status.json for the first run; ncu.1.log and status.1.json for the next, and so on."""
    if index == 0:
        return LOG, STATUS
    return f"ncu.{index}.log", f"status.{index}.json"


def save(folder: Path, runs: list[Run], provenance: Provenance) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for index, run in enumerate(runs):
        log, status = _names(index)
        write_file(folder / log, run.report.encode())
        write_file(folder / status, statuses_json(list(run.cases), indent=1).encode())
    written = asdict(provenance)
    # a recording made before these digests (or keys) saves as it was
    for name in ("cases", "program_files", "nvcc", "measurement_keys"):
        if not written[name]:
            del written[name]
    write_file(folder / PROVENANCE, json.dumps(written, indent=1).encode())
    write_file(folder / COMMANDS, json.dumps([run.command for run in runs], indent=1).encode())


def write_file(path: Path, data: bytes) -> None:
    """Write a file of a recording (or of the run it is made in), never through a symbolic link that
    was there before: InputError naming it instead."""
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise InputError(f"{path}: a symbolic link; refusing to write the recording through it") from None
        raise InputError(f"{path}: cannot be written ({error.strerror})") from None
    with os.fdopen(descriptor, "wb") as file:
        file.write(data)


def load(root: Path, keys: Sequence[FileKey]) -> Recording:
    """The recording in root, its cases and kernels named by the keys' names; or, in a folder of
    per-file recordings (as earlier versions made), those of the files the keys name. InputError if
    there is none, or if any of its files is damaged."""
    if (root / LOG).is_file():
        return _renamed(_load_folder(root, root), keys)
    found = [key for key in keys if (root / key.legacy / LOG).is_file()]
    if not found:
        folders = ", ".join(key.legacy for key in keys)
        raise InputError(f"no recording in {root}: it holds no {LOG}, nor folders {folders} that do")
    parts = [_renamed(_load_folder(root / key.legacy, root), [key], plain=key) for key in found]
    kernels = {name: digest for part in parts for name, digest in part.provenance.kernels.items()}
    nvcc = {name: which for part in parts for name, which in part.provenance.nvcc.items()}
    provenance = replace(parts[0].provenance, kernels=kernels, nvcc=nvcc)
    return Recording(root, [run for part in parts for run in part.runs], provenance)


def load_provenance(root: Path, key: FileKey) -> Provenance:
    """Where the figures of a recording (or of the file key names in a folder of them) come from."""
    if (root / LOG).is_file():
        return _renamed(Recording(root, [], _provenance(root, root)), [key]).provenance
    folder = root / key.legacy
    if (folder / LOG).is_file():
        return _renamed(Recording(folder, [], _provenance(folder, root)), [key], plain=key).provenance
    raise InputError(f"no recording of {key.legacy} in {root}: {folder} lacks {LOG}")


def provenance_file(root: Path, key: FileKey) -> Path:
    """The provenance.json that load_provenance reads for key: to name it in a message."""
    return (root if (root / LOG).is_file() else root / key.legacy) / PROVENANCE


def renamed(name: str, keys: Sequence[FileKey]) -> str:
    """A case or kernel as a recording names it (`<file>::<name>`), with the file as keys name it: a
    recording of an earlier version names each file by its stem."""
    identity = _parsed(name)
    if identity is None or identity.file is None or any(key.name == identity.file for key in keys):
        return name
    return next((str(identity.in_file(key.name)) for key in keys if key.legacy == identity.file), name)


def _parsed(name: str) -> QualifiedCase | None:
    """The case or kernel a recording names so; None for a name of neither (left as it is): a kernel of
    a set is no profiled case."""
    try:
        identity = QualifiedCase.parse(name)
    except ValueError:
        return None
    return identity if identity.set_kernel is None else None


def _renamed(recording: Recording, keys: Sequence[FileKey], plain: FileKey | None = None) -> Recording:
    """The recording with its cases and kernels named by the keys' names (renamed). A one-file
    recording of an earlier version names them without the file: with plain, they are that file's."""

    def name(recorded: str) -> str:
        identity = _parsed(recorded)
        if plain is not None and identity is not None and identity.file is None:
            return str(identity.in_file(plain.name))
        return renamed(recorded, keys)

    runs = [
        replace(run, cases=tuple(replace(s, case=name(s.case)) for s in run.cases)) for run in recording.runs
    ]
    kernels = {name(kernel): digest for kernel, digest in recording.provenance.kernels.items()}
    nvcc = {name(kernel): which for kernel, which in recording.provenance.nvcc.items()}
    return Recording(recording.folder, runs, replace(recording.provenance, kernels=kernels, nvcc=nvcc))


def _load_folder(folder: Path, root: Path) -> Recording:
    missing = [name for name in (LOG, STATUS, PROVENANCE) if not (folder / name).is_file()]
    if missing:
        raise InputError(f"{folder} is not a whole recording: it lacks {', '.join(missing)}")
    present = (folder / COMMANDS).exists() or (folder / COMMANDS).is_symlink()
    commands = _commands(folder / COMMANDS, root) if present else []
    runs: list[Run] = []
    while len(runs) < MAX_RUNS and (folder / _names(len(runs))[0]).is_file():
        log, status = (folder / name for name in _names(len(runs)))
        if not status.is_file():
            raise InputError(f"{folder} is not a whole recording: it lacks {status.name} beside {log.name}")
        command = commands[len(runs)] if len(runs) < len(commands) else []
        runs.append(Run(_read_log(log, root), _statuses(status, root), command, source=str(log)))
    return Recording(folder, runs, _provenance(folder, root))


def _statuses(path: Path, root: Path) -> tuple[CaseStatus, ...]:
    try:
        return tuple(read_statuses(read_text(path, root, MAX_JSON_BYTES)))
    except StatusError as error:
        raise InputError(f"{path}: not a runner status: {error}") from None


def _commands(path: Path, root: Path) -> list[list[str]]:
    data = parse_json(read_text(path, root, MAX_JSON_BYTES), path, "not the runs' commands")
    if not isinstance(data, list):
        raise InputError(f"{path}: not the runs' commands: not a list")
    for index, command in enumerate(data):
        if not (isinstance(command, list) and all(isinstance(word, str) for word in command)):
            raise InputError(f"{path}: not the runs' commands: [{index}]: not a list of strings")
    return data


def _provenance(folder: Path, root: Path) -> Provenance:
    path = folder / PROVENANCE
    data = parse_json(read_text(path, root, MAX_JSON_BYTES), path, "not a provenance")
    try:
        return Provenance.from_json(data)
    except ValueError as error:
        raise InputError(f"{path}: not a provenance: {error}") from None


def parse_json(text: str, path: Path, what: str) -> object:
    """The JSON in a recording's file; InputError "PATH: WHAT: not JSON (...)" where it is none."""
    try:
        return json.loads(text)
    except RecursionError:
        raise InputError(f"{path}: {what}: not JSON (nested too deeply)") from None
    except ValueError as error:
        raise InputError(f"{path}: {what}: not JSON ({error})") from None


def _read_log(path: Path, root: Path) -> str:
    """An ncu log of the recording, as ncuverify saved it: UTF-8 text (what ncu wrote, decoded), with no
    NUL (ncu writes text). Anything else is damage, an InputError naming the file and the byte."""
    data = _read_bytes(path, root, MAX_LOG_BYTES)
    try:
        text = data.decode()
    except UnicodeDecodeError as error:
        raise InputError(
            f"{path}: damaged: not UTF-8 text at byte {error.start} (ncuverify saves ncu's log as UTF-8)"
        ) from None
    if (at := data.find(b"\0")) >= 0:
        raise InputError(f"{path}: damaged: a NUL at byte {at} (ncu's log is text)")
    return text


def read_text(path: Path, root: Path, limit: int) -> str:
    """A file of the recording in root, as text: only a plain file, inside root, never through a
    symbolic link, of at most limit bytes; InputError naming the file otherwise."""
    return _read_bytes(path, root, limit).decode(errors="replace")


def _read_bytes(path: Path, root: Path, limit: int) -> bytes:
    """read_text's bytes."""
    _check_inside(path, root)
    try:
        data = read_plain(path, limit, follow_links=False)
    except SymbolicLink:
        raise InputError(f"{path}: a symbolic link; a recording holds plain files") from None
    except CannotRead as problem:
        if isinstance(problem.error, FileNotFoundError):
            raise InputError(f"{path}: no such file") from None
        raise InputError(f"{path}: cannot be read ({problem.error.strerror})") from None
    except NotRegular:
        raise InputError(f"{path}: not a plain file; a recording holds plain files") from None
    except TooLarge:
        raise InputError(f"{path}: larger than {limit} bytes; no recording holds such a file") from None
    return data


def _check_inside(path: Path, root: Path) -> None:
    """Refuse a file whose folder lies outside root (a per-file folder that is a link elsewhere, `..`)."""
    folder, top = path.parent.resolve(), root.resolve()
    if folder != top and top not in folder.parents:
        raise InputError(f"{path}: lies outside the recording {root}; a recording holds its own files")
