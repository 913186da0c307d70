"""The run of a command that takes only the common options (baseline save, audit): its files and its
options, made once the outputs and the profile folder have been checked."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from ncuverify import options
from ncuverify.cli.paths import check_outputs, check_profile_folders
from ncuverify.profile import NcuOptions
from ncuverify.spec import expand_paths


def replay_or_profile(
    files: Sequence[Path],
    outputs: Mapping[str, Path | None],
    arch: str | None,
    ncu: str,
    from_profile: Path | None,
    allow_include: Sequence[Path] | None,
    compile_timeout: float,
    sass: bool = False,
    static_only: bool = False,
) -> tuple[list[Path], options.CheckOptions]:
    """The expectation files given, and the run's options (every cubin disassembled where sass, else
    those whose SASS a claim reads; nothing profiled where static_only); InputError before anything runs where an output, --from-profile
    or an include folder cannot be used."""
    paths = expand_paths(files)
    check_outputs(outputs, paths)
    check_profile_folders(None, from_profile)
    return paths, options.for_run(
        arch=arch,
        ncu=NcuOptions(executable=ncu),
        from_profile=from_profile,
        static_only=static_only,
        build=replace(options.build_limits(allow_include, compile_timeout), sass=sass),
    )
