"""The project an expectation file belongs to, and the kernel files it may name."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from ncuverify.names import PROJECT_MARKERS, outside_project
from ncuverify.spec.expectation_file import ExpectationFile
from ncuverify.spec.npy import npy_problems
from ncuverify.spec.programs import program_path_problems
from ncuverify.spec.yaml_reader import Location


def project_root(folder: Path) -> Path:
    """The nearest folder at or above the expectation file's that marks a project; else its own. Found
    along the path as written, then resolved: a folder that links out of the project leaves it."""
    folder = Path(os.path.abspath(folder))
    for candidate in (folder, *folder.parents):
        if any((candidate / marker).exists() for marker in PROJECT_MARKERS):
            return candidate.resolve()
    return folder.resolve()


def _how_to_mark(root: Path) -> str:
    """Where nothing marks a project, the file's own folder is one: how to make a larger one."""
    if any((root / marker).exists() for marker in PROJECT_MARKERS):
        return ""
    return f"; nothing marks a project above it: put one of {', '.join(PROJECT_MARKERS)} at its top"


def path_problems(content: ExpectationFile, folder: Path) -> Iterable[tuple[Location, str]]:
    root = project_root(folder)
    yield from program_path_problems(content.programs, folder, root)
    for name, kernel in content.kernels.items():
        # Include folders are checked by the build, which knows the folders --allow-include adds.
        if kernel.file is None:
            continue
        where = ("kernels", name, "file")
        resolved = (folder / kernel.file).resolve()
        if not resolved.is_relative_to(root):
            yield (
                where,
                f"{kernel.file} lies {outside_project(root)}; kernels and includes must be inside it"
                + _how_to_mark(root),
            )
        elif not resolved.is_file():
            yield (where, f"no such file: {kernel.file} (looked in {folder})")
    for name, case in content.cases.items():
        yield from npy_problems(name, case.args, folder, root)
