"""What the runner is doing, in its progress file; and its files, each written whole."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

# Which case is running or has just ended: rewritten at each case's start and end, so that the caller
# can stop a case that never ends, and a process that makes no progress at all.
PROGRESS_FILE = "progress.json"


@dataclass(frozen=True)
class Progress:
    """What the runner is doing: which case it started last, whether that case still runs, and
    whether every case has ended. step counts the writes, so that each differs from the last."""

    case: str | None
    running: bool
    done: bool
    step: int

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> Progress | None:
        """The progress in text; None where it is not the runner's."""
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):
            return None
        if not isinstance(data, dict):
            return None
        case, running, done, step = (data.get(key) for key in ("case", "running", "done", "step"))
        if not (case is None or isinstance(case, str)) or not isinstance(step, int):
            return None
        if not isinstance(running, bool) or not isinstance(done, bool):
            return None
        return cls(case, running, done, step)


class ProgressWriter:
    """Writes the runner's Progress, each write counted."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.step = 0

    def write(self, case: str | None, running: bool, done: bool = False) -> None:
        self.step += 1
        write_atomically(self.path, Progress(case, running, done, self.step).to_json())


def write_atomically(path: Path, text: str) -> None:
    """Write text to path so that a reader (or a kill) never meets half of it."""
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text)
    os.replace(partial, path)
