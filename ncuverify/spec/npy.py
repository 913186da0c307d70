""".npy files as buffer contents (`fill: {npy: data/x.npy}`): found inside the project, read without
pickles and within bounds, checked against their buffer, and named to the runner by absolute path and
digest so that the runner loads the very bytes that were checked."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from ncuverify.errors import InputError
from ncuverify.names import outside_project
from ncuverify.npy_files import read_npy
from ncuverify.spec.arguments import Argument, BufferArg, NpyFill
from ncuverify.spec.yaml_reader import Location


def npy_file(folder: Path, fill: NpyFill) -> Path:
    return (folder / fill.npy).resolve()


def npy_problems(
    case: str, args: Sequence[Argument], folder: Path, root: Path
) -> Iterable[tuple[Location, str]]:
    """Each .npy fill of the case that lies outside the project, is missing, or does not fit its buffer."""
    for index, arg in enumerate(args):
        if not (isinstance(arg, BufferArg) and isinstance(arg.fill, NpyFill)):
            continue
        where = ("cases", case, "args", index, "fill", "npy")
        resolved = npy_file(folder, arg.fill)
        if not resolved.is_relative_to(root):
            yield (where, f"{arg.fill.npy} lies {outside_project(root)}; data files must be inside it")
        elif not resolved.exists():
            yield (where, f"no such file: {arg.fill.npy} (looked in {folder})")
        else:
            try:
                read_npy(resolved, arg.buffer, arg.count)
            except InputError as error:
                yield (where, f"{arg.fill.npy}: {error}")


def npy_digest(folder: Path, arg: BufferArg, fill: NpyFill) -> str:
    """The digest of the values the .npy fill gives its buffer: the runner loads the file only while it
    still has them."""
    _, digest = read_npy(npy_file(folder, fill), arg.buffer, arg.count)
    return digest
