"""Writing a starter file: all at once (a reader or a kill never meets half of it), never over an
existing file unless told to, and never over a file it was made from, even when told to."""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Sequence
from pathlib import Path

from ncuverify.errors import InputError
from ncuverify.folders import folder_to_make_problem, identity, output_problem, reason
from ncuverify.names import outside_project
from ncuverify.text import one_line


def write_new(path: Path, text: str, force: bool, read: Sequence[Path] = ()) -> None:
    """text as the file at path; InputError where the folder does not exist or cannot be written,
    where the file exists and force is False, or where it is one of the files read (see writing_problem)."""
    refusal = writing_problem(path, force, read)
    if refusal is not None:
        raise InputError(refusal)
    partial = path.with_name(f".{path.name}.partial-{os.getpid()}-{os.urandom(4).hex()}")
    try:
        descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(text)
        if force:
            os.replace(partial, path)
        else:
            os.link(partial, path, follow_symlinks=False)  # fails where the file has appeared since
    except FileExistsError:
        raise InputError(_exists(path)) from None
    except OSError as error:
        if error.errno not in (errno.EPERM, errno.ENOTSUP, errno.EXDEV):  # else: no hard links here
            raise InputError(one_line(f"{path}: cannot write it ({reason(error)})")) from None
        _without_link(partial, path)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(partial)


def writing_problem(path: Path, force: bool, read: Sequence[Path] = ()) -> str | None:
    """Why path cannot be written (as `-o` names it), or None. Never one of the files read (the source,
    what it includes), force or not: the same file by device and inode (a hard or symbolic link to it
    too), or by its path resolved."""
    found = identity(path)
    source = next((file for file in read if identity(file) == found), None)
    if source is not None:
        return one_line(f"{path}: is {source}, which init reads; refusing to overwrite it, even with --force")
    if os.path.lexists(path) and not force:
        return _exists(path)
    problem = output_problem(path)
    return one_line(f"{path}: {problem}") if problem is not None else None


def _without_link(partial: Path, path: Path) -> None:
    """Where the filesystem has no hard links: checked, then renamed (a file made in between is lost)."""
    if os.path.lexists(path):
        raise InputError(_exists(path))
    try:
        os.replace(partial, path)
    except OSError as error:
        raise InputError(one_line(f"{path}: cannot write it ({reason(error)})")) from None


def _exists(path: Path) -> str:
    return one_line(f"{path}: exists; pass --force to overwrite it")


def folder_problem(folder: Path, project: Path) -> str | None:
    """Why the folder an output goes in cannot be used or made (its missing folders are made only
    inside the project, links followed), or None."""
    problem = folder_to_make_problem(folder)
    if problem is not None:
        return one_line(f"{folder}: {problem}")
    if os.path.isdir(folder):
        return None
    existing = next(p for p in Path(os.path.abspath(folder)).parents if os.path.lexists(p))
    made = Path(os.path.realpath(existing)) / Path(os.path.abspath(folder)).relative_to(existing)
    if not made.is_relative_to(project):
        return one_line(
            f"{folder}: no such folder, and it would lie {outside_project(project)}: make it yourself,"
            " or write inside the project"
        )
    return None


def make_folder(folder: Path, project: Path) -> None:
    """The folder made, with the missing ones above it, where they lie inside the project; InputError
    saying why not otherwise."""
    problem = folder_problem(folder, project)
    if problem is not None:
        raise InputError(problem)
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as error:
        raise InputError(one_line(f"{folder}: cannot make it ({reason(error)})")) from None
