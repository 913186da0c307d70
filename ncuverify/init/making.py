"""`ncuverify init`'s work: a source's kernels compiled, the starter file made from them, and the file
checked as a run would check it (loaded, built, its arguments against the cubin's parameters) before
anyone sees it."""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from pydantic import ValidationError

from ncuverify.build import BuildLimits, build_spec
from ncuverify.build.cache import CompileCache
from ncuverify.build.params import check_arguments
from ncuverify.errors import InputError
from ncuverify.init.artifacts import is_artifact, kernels_in_artifact
from ncuverify.init.render import starter_yaml
from ncuverify.init.sources import kernels_in_source
from ncuverify.init.starter import starter
from ncuverify.spec import ExpectationFile, Spec, project_root, read_yaml
from ncuverify.text import one_line

SCHEMA_FILE = Path("schema") / "expectations.schema.json"


@dataclass(frozen=True)
class StarterFile:
    text: str
    kernels: int  # how many kernels it names
    warnings: tuple[str, ...]
    read: tuple[Path, ...] = ()  # the files it was made from, which it may not be written over
    note: str | None = None  # how the source was compiled, where that is news (with nvcc)


def starter_file(
    source: Path,
    written_at: Path,
    arch: str,
    recorded: date,
    cache: CompileCache | None = None,
    limits: BuildLimits | None = None,
    compiler: str = "auto",
) -> StarterFile:
    """The starter expectation file for the kernels of source (a .cu file or a built artifact), as it
    reads when written at written_at; InputError where the source is not a kernel source that compiles
    or an artifact with kernels for arch, or no kernel of it can be named and launched."""
    limits = limits or BuildLimits()
    if is_artifact(source):
        found = kernels_in_artifact(source, written_at, arch, limits, cache)
    else:
        found = kernels_in_source(source, written_at, arch, cache, limits, compiler)
    folder = Path(os.path.abspath(written_at.parent))
    schema = os.path.relpath(project_root(folder) / SCHEMA_FILE, folder)
    made = starter(found, arch, recorded, Path(schema).as_posix())
    if not any(kernel.launchable for kernel in made.kernels):
        why = "; ".join(f"{left.name}: {left.reason}" for left in made.left_out[:5])
        raise InputError(
            one_line(
                f"{source}: none of its {len(found.kernels)} kernels can be named by an entry and launched"
                f" with the arguments ncuverify passes{f' ({why})' if why else ''}"
            )[:2000]
        )
    text = starter_yaml(made)
    warnings = _check(text, written_at, arch, cache, limits)
    return StarterFile(text, len(made.kernels), (*found.warnings, *warnings), found.read, found.note)


def _check(
    text: str, written_at: Path, arch: str, cache: CompileCache | None, limits: BuildLimits
) -> tuple[str, ...]:
    """The file loaded and built as `ncuverify check` would; InputError saying why where it would not
    be (a kernel whose entry does not find it), with the build's warnings otherwise."""
    try:
        data, _ = read_yaml(text)
        spec = Spec(written_at, ExpectationFile.model_validate(data))
        builds = build_spec(spec, arch, cache, limits)
        check_arguments(spec, builds)
    except (InputError, ValidationError) as error:
        raise InputError(f"{written_at}: the starter file would not be sound: {error}") from None
    return tuple(dict.fromkeys(w for build in builds.values() for w in build.warnings))
