"""The compile cache: what NVRTC, cuobjdump and nvdisasm produced for a program, kept on disk so that a
second run compiles and disassembles nothing.

An entry is keyed by everything that decides its content: the source, the names instantiated, the
NVRTC options (include folders among them), the NVRTC version, and the contents of the files in the
program's own include folders (a changed header is a new key). The CUDA headers come with NVRTC's
version and folder, both in the key.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ncuverify.errors import InputError

HEADER_SUFFIXES = (".h", ".hh", ".hpp", ".cuh", ".cu", ".inl", ".inc")
_ENTRY = re.compile(r"[0-9a-f]{64}\.json")
_PARTIAL = re.compile(r"[0-9a-f]{64}\.json\.partial-[0-9A-Za-z_-]+")
# Folders too large to hash for headers (a CUDA toolkit's include folder) are keyed by path alone.
_MAX_HEADER_FILES = 2000


def default_folder() -> Path:
    """$NCUVERIFY_CACHE_DIR, else $XDG_CACHE_HOME/ncuverify, else ~/.cache/ncuverify; an empty variable
    counts as unset (and a relative XDG_CACHE_HOME too, as the XDG specification says). Without a home
    folder, one of this user's own in the temporary folder."""
    if chosen := os.environ.get("NCUVERIFY_CACHE_DIR"):
        return Path(chosen)
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "ncuverify"
    try:
        return Path.home() / ".cache" / "ncuverify"
    except RuntimeError:  # neither HOME nor an entry in the password database
        return Path(tempfile.gettempdir()) / f"ncuverify-cache-{os.getuid()}"


# Written into every cache folder ncuverify makes (the cache-directory tag that backup tools know), so
# that `cache clean` can refuse a folder that ncuverify did not create.
MARKER = "CACHEDIR.TAG"
MARKER_TEXT = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This folder is a cache made by ncuverify (ncuverify cache clean empties it).\n"
)


def prepare_folder(folder: Path) -> Path:
    """The cache folder, created with its marker where it is not there yet. Nothing is written through
    a symbolic link, even a dangling one, that stands where the marker goes."""
    folder.mkdir(parents=True, exist_ok=True)
    marker = folder / MARKER
    if not os.path.lexists(marker):
        try:
            descriptor = os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        except FileExistsError:  # another run made it just now
            return folder
        with os.fdopen(descriptor, "w") as file:
            file.write(MARKER_TEXT)
    return folder


def is_marked(folder: Path) -> bool:
    """Whether the folder carries the marker ncuverify writes (a regular file, not a link)."""
    try:
        status = os.lstat(folder / MARKER)
        if not stat.S_ISREG(status.st_mode) or status.st_size > 4096:
            return False
        return (folder / MARKER).read_text(errors="replace") == MARKER_TEXT
    except OSError:
        return False


def passes_file() -> Path:
    """Where ncu's replay passes per metric set are remembered (see `schedule.PassCounts`)."""
    return default_folder() / "profile" / "passes.json"


@dataclass(frozen=True)
class Compiled:
    """What one program's compilation and disassembly produced."""

    cubin: bytes
    log: str
    lowered: dict[str, str]  # name expression -> mangled name
    resource_usage: str  # cuobjdump --dump-resource-usage's text ("" without cuobjdump)
    disassembly: str | None  # nvdisasm's text (None without nvdisasm)


def key(
    source: str, names: list[str], options: list[str], nvrtc_version: tuple[int, int], include_dirs: list[str]
) -> str:
    digest = hashlib.sha256()
    for part in (source, "\0".join(names), "\0".join(options), f"{nvrtc_version}"):
        digest.update(part.encode())
        digest.update(b"\1")
    for folder in include_dirs:
        digest.update(_folder_digest(Path(folder)).encode())
    return digest.hexdigest()


def _folder_digest(folder: Path) -> str:
    files = (
        sorted(p for p in folder.rglob("*") if p.suffix in HEADER_SUFFIXES and p.is_file())
        if folder.is_dir()
        else []
    )
    if len(files) > _MAX_HEADER_FILES:
        return str(folder)
    digest = hashlib.sha256(str(folder).encode())
    for path in files:
        digest.update(str(path.relative_to(folder)).encode())
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


@dataclass(frozen=True)
class CompileCache:
    folder: Path

    def get(self, entry_key: str) -> Compiled | None:
        path = self.folder / f"{entry_key}.json"
        try:
            data = json.loads(path.read_text())
            return Compiled(
                cubin=base64.b64decode(data["cubin"]),
                log=data["log"],
                lowered=data["lowered"],
                resource_usage=data["resource_usage"],
                disassembly=data["disassembly"],
            )
        except (OSError, ValueError, KeyError, TypeError):  # absent or damaged: compile again
            return None

    def put(self, entry_key: str, compiled: Compiled) -> None:
        prepare_folder(self.folder)
        record = {
            "cubin": base64.b64encode(compiled.cubin).decode(),
            "log": compiled.log,
            "lowered": compiled.lowered,
            "resource_usage": compiled.resource_usage,
            "disassembly": compiled.disassembly,
        }
        # Write then rename, so that a run reading the cache never sees half an entry.
        partial = self.folder / f"{entry_key}.json.partial-{os.getpid()}"
        partial.write_text(json.dumps(record))
        partial.replace(self.folder / f"{entry_key}.json")

    def clean(self) -> int:
        """Remove every entry ncuverify wrote (and the replay passes remembered); how many compiled
        programs there were. Files it did not write stay, and a folder without its marker is refused."""
        if not self.folder.is_dir():
            return 0
        if not is_marked(self.folder):
            raise InputError(
                f"{self.folder}: not an ncuverify cache folder (no {MARKER} written by ncuverify); "
                "refusing to delete anything in it"
            )
        removed = 0
        with os.scandir(self.folder) as entries:
            for entry in entries:
                if (_ENTRY.fullmatch(entry.name) or _PARTIAL.fullmatch(entry.name)) and entry.is_file(
                    follow_symlinks=False
                ):
                    _remove(Path(entry.path))
                    removed += 1 if entry.name.endswith(".json") else 0
        _remove_passes(self.folder / "profile")
        return removed


def _remove(path: Path) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:  # another clean got there first
        pass
    except OSError as error:
        raise InputError(f"{path}: cannot be removed ({error.strerror})") from None


def _remove_passes(profile: Path) -> None:
    """The remembered replay passes: the file, and its folder if nothing else is left in it."""
    try:
        if not stat.S_ISDIR(os.lstat(profile).st_mode):
            return
        passes = profile / "passes.json"
        if stat.S_ISREG(os.lstat(passes).st_mode):
            _remove(passes)
        os.rmdir(profile)
    except OSError:  # not there, or something else is in the folder: leave it
        pass
