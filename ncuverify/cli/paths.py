"""The paths a command is given, checked before anything runs: outputs that could not be written or
would overwrite an input, input files that are not regular files, profile folders that cannot be
used. Each refusal is an InputError, a line per path at fault."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from ncuverify.errors import InputError
from ncuverify.folders import (
    folder_to_make_problem,
    folder_to_read_problem,
    identity,
    output_problem,
    regular_file_problem,
)
from ncuverify.text import printable


def check_outputs(outputs: Mapping[str, Path | None], inputs: Sequence[Path]) -> None:
    """Refuse, before anything runs, outputs (option -> path; "" for an argument) that could not be
    written, or would overwrite an input of the run or another output: InputError, a line each."""
    inputs_found = {identity(path) for path in inputs}
    taken: dict[object, str] = {}
    problems = []
    for option, path in outputs.items():
        if path is None:
            continue
        found = identity(path)
        problem = output_problem(path)
        if problem is None and found in inputs_found:
            problem = "is an input of this run; refusing to overwrite it"
        if problem is None and found in taken:
            problem = f"is also the output of {taken[found] or 'the command'}"
        taken.setdefault(found, option)
        if problem is not None:
            problems.append(_where(option, path, problem))
    _refuse(problems)


def check_input_files(inputs: Sequence[tuple[str, Path]]) -> None:
    """Refuse input files ((option, path); "" for an argument) that exist but are not regular files:
    a FIFO would hang the reader, a device flood it. Where one does not exist its reader says so."""
    problems = []
    for option, path in inputs:
        problem = regular_file_problem(path)
        if problem is not None:
            problems.append(_where(option, path, problem))
    _refuse(problems)


def check_profile_folders(
    save_profile: Path | None, from_profile: Path | None, reuse: Path | None = None
) -> None:
    """--save-profile must be a folder, or one that can be made; --from-profile and --reuse existing
    folders."""
    problems = []
    if save_profile is not None:
        problem = folder_to_make_problem(save_profile)
        if problem is not None:
            problems.append(f"--save-profile: {save_profile}: {problem}")
    if from_profile is not None:
        problem = folder_to_read_problem(from_profile)
        if problem is not None:
            problems.append(f"--from-profile: {from_profile}: {problem}")
    if reuse is not None:
        problem = folder_to_read_problem(reuse)
        if problem is not None:
            problems.append(f"--reuse: {reuse}: {problem}")
    _refuse(problems)


def _where(option: str, path: Path, problem: str) -> str:
    return f"{option}: {path}: {problem}" if option else f"{path}: {problem}"


def _refuse(problems: Sequence[str]) -> None:
    if problems:
        raise InputError("\n".join(printable(problem) for problem in problems))
