"""What a case launches with, as a digest: a recording made of a case that has changed since (another
grid, other arguments, other bytes in a .npy fill, another command) holds figures that may be stale.
Likewise the files of the project that a program case's command names (its script, its binary)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection
from pathlib import Path

from ncuverify.files import Unreadable, sha256_of
from ncuverify.spec.arguments import BufferArg, NpyFill
from ncuverify.spec.expectation_file import Spec
from ncuverify.spec.npy import npy_digest
from ncuverify.spec.programs import ProgramSpec, named_files
from ncuverify.spec.project import project_root


def case_digests(spec: Spec) -> dict[str, str]:
    """Each case of the file (built and program cases) -> a digest of what it launches with. The .npy
    fills count by their bytes, not their paths, so the digest is the same on every machine."""
    digests: dict[str, str] = {}
    for name, case in spec.content.cases.items():
        content = case.model_dump(mode="json")
        content["npy"] = [
            npy_digest(spec.folder, arg, arg.fill)
            for arg in case.args
            if isinstance(arg, BufferArg) and isinstance(arg.fill, NpyFill)
        ]
        # A step's figures depend on the steps before it: a change there changes it too.
        content["after"] = [digests[step] for step in spec.content.sequence_steps(name)[:-1]]
        if not content["after"]:
            del content["after"]  # the digests of cases of their own stay as they were
        digests[name] = _digest(content)
    for name, program in spec.content.programs.items():
        digests[name] = _digest(program.model_dump(mode="json"))
    return digests


def program_file_digests(spec: Spec, only: Collection[str] | None = None) -> dict[str, dict[str, str]]:
    """Each program case of the file (or those of only) -> the sha256 of every file of the project its
    command names (spec.programs.named_files), by its path in the project, so that the same files give
    the same digests on every machine. A file that cannot be read is left out: where it is read later,
    it differs."""
    root = project_root(spec.folder)
    return {
        name: _file_digests(case.program, spec.folder, root)
        for name, case in spec.content.programs.items()
        if only is None or name in only
    }


def _file_digests(program: ProgramSpec, folder: Path, root: Path) -> dict[str, str]:
    digests: dict[str, str] = {}
    for path in named_files(program, folder, root):
        try:
            digests[path.relative_to(root).as_posix()] = sha256_of(path)
        except Unreadable:
            continue
    return digests


def _digest(content: object) -> str:
    text = json.dumps(content, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", errors="surrogateescape")).hexdigest()[:16]
