"""The expectation files that command-line paths stand for."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

from ncuverify.errors import InputError
from ncuverify.text import printable

# The patterns a folder stands for: the expectation files in it.
EXPECTATION_PATTERNS = ("*.yaml", "*.yml")
EXPECTATION_SUFFIXES = (".yaml", ".yml")


def expand_paths(paths: Iterable[Path]) -> list[Path]:
    """The expectation files that paths stand for: a file for itself, a folder for its *.yaml and *.yml
    files (sorted), each file once. InputError, one line per path, for a path that does not exist, a
    folder that holds no expectation file, and anything that is not a regular file (a FIFO or a device
    would hang or flood the reader)."""
    found: dict[str, Path] = {}  # by real path: a file named twice (itself and its folder) is checked once
    problems: list[str] = []
    for path in paths:
        if _is_folder(path):
            inside = [f for pattern in EXPECTATION_PATTERNS for f in sorted(path.glob(pattern))]
            if not inside:
                shown = str(path) if str(path).endswith("/") else f"{path}/"
                problems.append(f"{shown}: no expectation files (*.yaml, *.yml) in this folder")
        else:
            inside = [path]
        for file in inside:
            problem = _file_problem(file)
            if problem is None:
                found.setdefault(os.path.realpath(file), file)
            else:
                problems.append(f"{file}: {problem}")
    if problems:
        raise InputError("\n".join(printable(problem) for problem in problems))
    return list(found.values())


def _is_folder(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def _file_problem(path: Path) -> str | None:
    """Why path cannot be read as an expectation file (symbolic links followed), or None."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "no such expectation file or folder"
    except OSError as error:
        return f"cannot read it ({error.strerror})"
    except ValueError:  # a NUL byte in the name
        return "not a valid path"
    if stat.S_ISDIR(mode):
        return "is a folder, not an expectation file"
    if not stat.S_ISREG(mode):
        return "not a regular file"
    return None
