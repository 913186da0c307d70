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
import shutil
from dataclasses import dataclass
from pathlib import Path

HEADER_SUFFIXES = (".h", ".hh", ".hpp", ".cuh", ".cu", ".inl", ".inc")
# Folders too large to hash for headers (a CUDA toolkit's include folder) are keyed by path alone.
_MAX_HEADER_FILES = 2000


def default_folder() -> Path:
    """$NCUVERIFY_CACHE_DIR, else $XDG_CACHE_HOME/ncuverify, else ~/.cache/ncuverify."""
    if "NCUVERIFY_CACHE_DIR" in os.environ:
        return Path(os.environ["NCUVERIFY_CACHE_DIR"])
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "ncuverify"


# Written into every cache folder ncuverify makes (the cache-directory tag that backup tools know), so
# that `cache clean` can refuse a folder that ncuverify did not create.
MARKER = "CACHEDIR.TAG"
MARKER_TEXT = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This folder is a cache made by ncuverify (ncuverify cache clean empties it).\n"
)


def prepare_folder(folder: Path) -> Path:
    """The cache folder, created with its marker where it is not there yet."""
    folder.mkdir(parents=True, exist_ok=True)
    marker = folder / MARKER
    if not marker.exists():
        marker.write_text(MARKER_TEXT)
    return folder


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
        self.folder.mkdir(parents=True, exist_ok=True)
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
        """Remove every entry; how many there were."""
        if not self.folder.is_dir():
            return 0
        count = sum(1 for _ in self.folder.glob("*.json"))
        shutil.rmtree(self.folder)
        return count
