"""Which run a set of results is: the suite (its expectation files, with their contents) and which of
its N shares was judged."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ncuverify.files import Unreadable, read_plain
from ncuverify.results import file_key
from ncuverify.spec import MAX_FILE_BYTES

MAX_SHARDS = 10_000


@dataclass(frozen=True)
class ShardOf:
    """Which share of which suite a run judged: the K-th of N (1/1 for a whole run)."""

    k: int
    n: int
    suite: str  # suite_digest of the run's expectation files
    missing: tuple[str, ...] = ()  # a merge --partial: the shares it lacked ("2/3"), so it stays partial

    def __str__(self) -> str:
        return f"{self.k}/{self.n}"


def suite_digest(paths: Sequence[Path]) -> str:
    """The identity of a suite: each expectation file's path relative to its project root and the
    sha256 of its bytes, sorted, so that the same files with the same contents give the same digest on
    every machine. A file that cannot be read contributes its path only."""
    entries = sorted(_suite_entry(path) for path in paths)
    return hashlib.sha256(json.dumps(entries).encode()).hexdigest()


def _suite_entry(path: Path) -> tuple[str, str]:
    return file_key(path), _content_digest(path)


def _content_digest(path: Path) -> str:
    """sha256 of a regular file's bytes; "" for anything else (a FIFO would block, a device never end)
    and for a file larger than any expectation file may be (it is refused when the run reads it)."""
    try:
        return hashlib.sha256(read_plain(path, MAX_FILE_BYTES)).hexdigest()
    except (Unreadable, ValueError):  # ValueError: a NUL in a path read from an earlier version's JSON
        return ""
