"""The compile cache: what NVRTC, cuobjdump and nvdisasm produced for a program, kept on disk so that a
second run compiles and disassembles nothing.

An entry is keyed by everything that decides its content: the source, the names instantiated, the
NVRTC options (the include folders among them, the CUDA headers' by path), the NVRTC version, and
every file of the project (or of an allowed folder) that the include graph reaches, by its path there
and its content's digest: editing any header the kernel may include makes a new key.

An entry carries a digest of its content and of its key; one that does not match, or does not read
(damaged, truncated, written by hand), is compiled again and said so, never trusted. `clean` removes
only what ncuverify writes, and only in a folder that carries ncuverify's marker.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import json
import os
import re
import stat
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from ncuverify.errors import InputError
from ncuverify.files import CannotRead, NotRegular, SymbolicLink, TooLarge, read_plain

FORMAT = 2  # entries of another format are compiled again (without a warning: they are not damaged)
# An entry larger than this is not read: a cubin and its disassembly are a few MiB.
MAX_ENTRY_BYTES = 512 * 1024 * 1024
_ENTRY = re.compile(r"[0-9a-f]{64}\.json")
_PARTIAL = re.compile(r"[0-9a-f]{64}\.json\.partial-[0-9A-Za-z_-]+")


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


@dataclass(frozen=True)
class Lookup:
    """What the cache holds for a key."""

    compiled: Compiled | None  # None: no usable entry
    damage: str | None = None  # why an entry that is there cannot be used


def key(
    source: bytes,
    names: list[str],
    options: list[str],
    nvrtc_version: tuple[int, int],
    files: Iterable[tuple[str, str, str]],
    compiler: tuple[str, ...] = (),
) -> str:
    """The entry's key; files are the included files as (root, path in it, content's sha256); compiler
    names a compiler other than NVRTC and its versions (nvcc's, the host compiler's)."""
    digest = hashlib.sha256()
    for part in (source, "\0".join(names).encode(), "\0".join(options).encode(), f"{nvrtc_version}".encode()):
        digest.update(part)
        digest.update(b"\1")
    if compiler:  # left out for NVRTC, whose entries keep the keys they had
        digest.update("\0".join(("compiler", *compiler)).encode("utf-8", errors="surrogateescape") + b"\1")
    for root, relative, sha256 in sorted(files):
        digest.update(f"{root}\0{relative}\0{sha256}\1".encode("utf-8", errors="surrogateescape"))
    return digest.hexdigest()


def through(
    cache: CompileCache | None, entry_key: str, source_name: str, compile_it: Callable[[], Compiled]
) -> tuple[Compiled, list[str]]:
    """The program's compilation, from the cache where it holds a sound entry, else compile_it() (kept
    in the cache); and the warnings on the way (a damaged entry, a cache that cannot be written)."""
    warnings: list[str] = []
    if cache is not None:
        lookup = cache.get(entry_key)
        if lookup.compiled is not None:
            return lookup.compiled, warnings
        if lookup.damage is not None:
            warnings.append(f"{source_name}: {lookup.damage}; compiled again")
    compiled = compile_it()
    if cache is not None and (problem := cache.put(entry_key, compiled)) is not None:
        warnings.append(f"{source_name}: {problem}")
    return compiled, warnings


def _content_digest(entry_key: str, record: dict[str, object]) -> str:
    content = {name: value for name, value in record.items() if name != "digest"}
    text = json.dumps(content, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(f"{entry_key}\0{text}".encode()).hexdigest()


@dataclass(frozen=True)
class CompileCache:
    folder: Path

    def get(self, entry_key: str) -> Lookup:
        path = self.folder / f"{entry_key}.json"
        try:
            text = _read_entry(path)
        except (FileNotFoundError, NotADirectoryError):  # no entry, or no cache folder yet
            return Lookup(None)
        except OSError as error:
            return Lookup(None, f"the compile cache's entry {path} cannot be read ({error.strerror})")
        except ValueError as error:
            return Lookup(None, f"the compile cache's entry {path} {error}")
        try:
            return Lookup(_compiled(entry_key, text))
        except _Stale:
            return Lookup(None)
        except ValueError as error:
            return Lookup(None, f"the compile cache's entry {path} is damaged ({error})")

    def put(self, entry_key: str, compiled: Compiled) -> str | None:
        """Keep an entry; what went wrong where it could not be written (the build goes on without it)."""
        record: dict[str, object] = {
            "format": FORMAT,
            "cubin": base64.b64encode(compiled.cubin).decode(),
            "log": compiled.log,
            "lowered": compiled.lowered,
            "resource_usage": compiled.resource_usage,
            "disassembly": compiled.disassembly,
        }
        record["digest"] = _content_digest(entry_key, record)
        partial = self.folder / f"{entry_key}.json.partial-{os.getpid()}-{os.urandom(4).hex()}"
        try:
            prepare_folder(self.folder)
            # Write then rename, so that a run reading the cache never sees half an entry.
            descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
            with os.fdopen(descriptor, "w") as file:
                json.dump(record, file)
            os.replace(partial, self.folder / f"{entry_key}.json")
        except OSError as error:
            with contextlib.suppress(OSError):
                os.unlink(partial)
            return f"the compile cache in {self.folder} cannot be written ({error.strerror}); compiled without it"
        return None

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


class _Stale(Exception):
    """An entry of another format: not damaged, only older."""


def _read_entry(path: Path) -> str:
    """An entry's text; ValueError for one that is not a plain file or is too large to be one."""
    try:
        data = read_plain(path, MAX_ENTRY_BYTES, follow_links=False)
    except SymbolicLink:
        raise ValueError("is a symbolic link") from None
    except CannotRead as problem:
        raise problem.error from None
    except NotRegular:
        raise ValueError("is not a regular file") from None
    except TooLarge:
        raise ValueError(f"is larger than {MAX_ENTRY_BYTES // (1024 * 1024)} MiB") from None
    try:
        return data.decode()
    except UnicodeDecodeError:
        raise ValueError("is damaged (not UTF-8 text)") from None


def _compiled(entry_key: str, text: str) -> Compiled:
    """An entry's content, checked; ValueError saying what is wrong with it."""
    try:
        record = json.loads(text)
    except ValueError:
        raise ValueError("not JSON") from None
    if not isinstance(record, dict):
        raise ValueError("not a JSON object")
    if record.get("format") != FORMAT:
        if isinstance(record.get("format"), int) or ("format" not in record and "cubin" in record):
            raise _Stale()
        raise ValueError("no format")
    if record.get("digest") != _content_digest(entry_key, record):
        raise ValueError("its digest does not match its content")
    cubin, log, lowered = record.get("cubin"), record.get("log"), record.get("lowered")
    resources, disassembly = record.get("resource_usage"), record.get("disassembly")
    if not (isinstance(cubin, str) and isinstance(log, str) and isinstance(resources, str)):
        raise ValueError("a field of the wrong type")
    if not (disassembly is None or isinstance(disassembly, str)):
        raise ValueError("a field of the wrong type")
    if not (
        isinstance(lowered, dict)
        and all(isinstance(k, str) and isinstance(v, str) for k, v in lowered.items())
    ):
        raise ValueError("a field of the wrong type")
    try:
        binary = base64.b64decode(cubin, validate=True)
    except binascii.Error:
        raise ValueError("the cubin is not base64") from None
    return Compiled(binary, log, lowered, resources, disassembly)
