"""Reading a file that may be hostile: only a regular file, optionally never through a symbolic link,
of a bounded size.

Every file ncuverify reads from a project, a recording, the cache or the command line goes through
read_plain (or open_plain, to stream one; sha256_of, to digest one). Refusals raise one type, Unreadable, whose subclasses say
which refusal it was so that each reader keeps its own message; str() of each is a short phrase.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
from collections import Counter
from pathlib import Path
from typing import Any, BinaryIO


class Unreadable(Exception):
    """A file that was not read; reason is a short phrase saying why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class CannotRead(Unreadable):
    """The OS refused to open or read the file; error is its error, reason its text."""

    def __init__(self, error: OSError, reason: str | None = None) -> None:
        super().__init__(reason or error.strerror or str(error))
        self.error = error


class SymbolicLink(CannotRead):
    """The path is a symbolic link and links were not to be followed (the OS refused to open it)."""

    def __init__(self, error: OSError) -> None:
        super().__init__(error, "a symbolic link")


class NotRegular(Unreadable):
    """A folder, FIFO, device or socket: opening or reading one could block or never end."""

    def __init__(self) -> None:
        super().__init__("not a regular file")


class TooLarge(Unreadable):
    """A regular file of more than max_bytes."""

    def __init__(self, max_bytes: int) -> None:
        super().__init__(f"larger than {max_bytes} bytes")
        self.max_bytes = max_bytes


def open_plain(path: Path, follow_links: bool = True) -> BinaryIO:
    """The regular file at path, open for reading in binary. Opened without blocking and checked
    after opening, so a FIFO put in its place cannot make the reader wait for a writer."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    if not follow_links:
        flags |= os.O_NOFOLLOW
    try:
        descriptor = os.open(path, flags)
    except OSError as error:
        # Linux says ELOOP for a final link under O_NOFOLLOW; other systems say something else.
        if not follow_links and (error.errno == errno.ELOOP or os.path.islink(path)):
            raise SymbolicLink(error) from None
        raise CannotRead(error) from None
    try:
        regular = stat.S_ISREG(os.fstat(descriptor).st_mode)
    except OSError as error:
        os.close(descriptor)
        raise CannotRead(error) from None
    if not regular:
        os.close(descriptor)
        raise NotRegular()
    return os.fdopen(descriptor, "rb")


def read_plain(path: Path, max_bytes: int, follow_links: bool = True) -> bytes:
    """The bytes of the regular file at path, of at most max_bytes; Unreadable otherwise. Never reads
    more than max_bytes + 1 bytes, whatever the file claims or becomes while it is read."""
    with open_plain(path, follow_links) as file:
        try:
            if os.fstat(file.fileno()).st_size > max_bytes:
                raise TooLarge(max_bytes)
            data = file.read(max_bytes + 1)
        except OSError as error:
            raise CannotRead(error) from None
    if len(data) > max_bytes:
        raise TooLarge(max_bytes)
    return data


_CHUNK_BYTES = 1 << 20  # what sha256_of reads at a time


def sha256_of(path: Path) -> str:
    """The sha256 of the regular file at path, read in chunks so that a file of any size costs no more
    memory than one; Unreadable otherwise."""
    digest = hashlib.sha256()
    with open_plain(path) as file:
        try:
            while chunk := file.read(_CHUNK_BYTES):
                digest.update(chunk)
        except OSError as error:
            raise CannotRead(error) from None
    return digest.hexdigest()


class JsonObject(dict[str, Any]):
    """A JSON object read with keep_repeats: a dict (holding the last value of a key given twice, as
    Python's reader does), and the keys given more than once, for a reader that must not guess which
    value counts."""

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        super().__init__(pairs)
        counts = Counter(key for key, _ in pairs)
        self.repeated = tuple(key for key, count in counts.items() if count > 1)


def repeated_keys(value: object) -> tuple[str, ...]:
    """The keys given more than once in a JSON object read with keep_repeats; () for anything else."""
    return value.repeated if isinstance(value, JsonObject) else ()


def read_json(path: Path, limit: int, keep_repeats: bool = False) -> Any:
    """The JSON value in a regular file of at most limit bytes of UTF-8: OSError where the file cannot
    be opened or read, ValueError saying what is wrong with it otherwise. With keep_repeats, each
    object is a JsonObject, which says which of its keys were given twice."""
    try:
        data = read_plain(path, limit)
    except CannotRead as problem:
        raise problem.error from None
    except NotRegular:
        raise ValueError("not a regular file") from None
    except TooLarge:
        raise ValueError(f"larger than {limit // 2**20} MiB") from None
    try:
        text = data.decode()
    except UnicodeDecodeError as error:
        raise ValueError(f"not UTF-8 text (byte {error.start})") from None
    return parse_json(text, keep_repeats)


def parse_json(text: str, keep_repeats: bool = False) -> Any:
    """JSON text as Python values (with keep_repeats, each object a JsonObject); ValueError saying why
    where it is not JSON."""
    try:
        return json.loads(text, object_pairs_hook=JsonObject if keep_repeats else None)
    except RecursionError:
        raise ValueError("nested too deeply") from None
    except ValueError as error:
        raise ValueError(f"not JSON: {error}") from None
