"""Whether a path can serve a run before the run starts: as an output file, as a folder to make files
in, as a folder to read. Each answer is a short phrase saying why not, or None."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path


def output_problem(path: Path) -> str | None:
    """Why path cannot be written as an output file, or None."""
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return _folder_problem(path.parent, "no such folder")
    except (OSError, ValueError) as error:
        return f"cannot use it ({reason(error)})"
    if stat.S_ISDIR(mode):
        return "is a folder"
    if not os.access(path, os.W_OK):
        return "is not writable"
    return None


def _folder_problem(folder: Path, absent: str) -> str | None:
    """Why files cannot be made in folder (absent: what to say where it does not exist), or None."""
    try:
        mode = os.stat(folder).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return f"{absent} {folder}"
    except (OSError, ValueError) as error:
        return f"cannot use {folder} ({reason(error)})"
    if not stat.S_ISDIR(mode):
        return f"{folder} is not a folder"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"cannot write in {folder}"
    return None


def folder_to_make_problem(folder: Path) -> str | None:
    """Why folder cannot be used, or made, to write files in, or None."""

    def absent() -> str | None:
        existing = next((p for p in folder.absolute().parents if os.path.lexists(p)), Path("/"))
        problem = _folder_problem(existing, "no such folder")
        return f"cannot make it: {problem}" if problem is not None else None

    return _existing_folder_problem(folder, os.W_OK | os.X_OK, "cannot write in it", absent)


def folder_to_read_problem(folder: Path) -> str | None:
    """Why folder is not an existing folder that can be read, or None."""
    return _existing_folder_problem(folder, os.R_OK | os.X_OK, "cannot read it", lambda: "no such folder")


def _existing_folder_problem(
    folder: Path, access: int, denied: str, absent: Callable[[], str | None]
) -> str | None:
    """Why folder is not a folder this process may use with access (denied says so), or None; absent()
    says what its absence means."""
    try:
        mode = os.stat(folder).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return absent()
    except (OSError, ValueError) as error:
        return f"cannot use it ({reason(error)})"
    if not stat.S_ISDIR(mode):
        return "is not a folder"
    if not os.access(folder, access):
        return denied
    return None


def regular_file_problem(path: Path) -> str | None:
    """Why an input file that exists is not a regular file (a FIFO would hang the reader, a device
    flood it), or None; where it does not exist its reader says so."""
    try:
        regular = stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return None
    return None if regular else "not a regular file"


def identity(path: Path) -> object:
    """What makes two paths the same file: device and inode where it exists (hard links, symbolic
    links), else the path resolved."""
    try:
        found = os.stat(path)
    except (OSError, ValueError):
        return os.path.realpath(path)
    return (found.st_dev, found.st_ino)


def reason(error: Exception) -> str:
    """An OS error's own text, else the exception's."""
    return (error.strerror if isinstance(error, OSError) else None) or str(error)
