"""`ncuverify init FOLDER`: one starter file per source, each made on its own, so that a source that
cannot be compiled hides no other. One file per source, not one for them all: each file's claims sit
beside the kernel they are about, so that a review, an owner (CODEOWNERS) and a failing check all stay
with that source."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ncuverify.build.artifacts_listing import SOURCE_SUFFIXES, folder_inputs, skipped_line
from ncuverify.errors import InputError
from ncuverify.init.making import StarterFile
from ncuverify.text import one_line


@dataclass(frozen=True)
class FolderSources:
    sources: list[Path]  # the .cu files, sorted
    skipped: str | None  # the line that names the folders not entered


@dataclass(frozen=True)
class SourceStarter:
    """What became of one source: its starter file at written_at, or why there is none."""

    source: Path
    written_at: Path
    made: StarterFile | None
    problem: str | None = None


def folder_sources(folder: Path) -> FolderSources:
    """The folder's .cu files; InputError where it holds none."""
    found = folder_inputs(folder, SOURCE_SUFFIXES)
    if not found.files:
        raise InputError(f"{folder}/: no .cu file in it (nor in its folders)")
    return FolderSources(found.files, skipped_line(folder, found.skipped))


def starter_path(folder: Path, source: Path, written_in: Path) -> Path:
    """Where the starter file of a source of folder goes: its path under written_in, as .yaml."""
    return written_in / source.relative_to(folder).with_suffix(".yaml")


def each_starter(
    folder: Path, sources: list[Path], written_in: Path, make: Callable[[Path, Path], StarterFile]
) -> Iterator[SourceStarter]:
    """Each source's starter file, made by make(source, written_at), or the one line saying why not."""
    for source in sources:
        written_at = starter_path(folder, source, written_in)
        try:
            yield SourceStarter(source, written_at, make(source, written_at))
        except InputError as error:
            yield SourceStarter(source, written_at, None, one_line(str(error)))
