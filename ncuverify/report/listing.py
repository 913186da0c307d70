"""`ncuverify build PATH...`: an expectation file's kernels built (as `lint` and a check build them too),
and what is not an expectation file (a .cu file, a built artifact, a folder of them); `--json`, and
`build --diff OLD NEW`."""

from __future__ import annotations

import json
import os
import shutil
import stat
import sys
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console

from ncuverify.build import KernelBuild, build_spec
from ncuverify.build.artifacts_diff import diff, listed_again
from ncuverify.build.artifacts_json import is_listing, read_listing, to_json
from ncuverify.build.artifacts_listing import (
    ListedKernel,
    file_listings,
    folder_inputs,
    listed,
    path_kernels,
    skipped_line,
)
from ncuverify.build.demangle import demangle
from ncuverify.build.params import check_arguments
from ncuverify.build.whole_source import problem_line
from ncuverify.environment import Environment
from ncuverify.errors import ExitCode, InputError
from ncuverify.ncu.metrics import check_metric_names
from ncuverify.options import CheckOptions, target_arch
from ncuverify.report import block_text, line_text
from ncuverify.report.kernels import print_diff, print_kernels
from ncuverify.results import worst
from ncuverify.spec import load
from ncuverify.spec.paths import EXPECTATION_PATTERNS, EXPECTATION_SUFFIXES
from ncuverify.text import one_line


def build_file(
    path: Path, options: CheckOptions, environment: Environment, lint: bool = False
) -> dict[str, KernelBuild] | str:
    """The kernels of one file, built; or why they could not be. With lint, the metric names are
    checked against the target chip's list too."""
    try:
        spec = load(path)
        arch = target_arch(spec, options, environment)
        if arch is None and not spec.content.kernels:
            return {}  # program cases only: nothing to build, and no chip to check metric names on
        if arch is None:
            return "no architecture to build for: pass --arch or set 'arch' in the file"
        if lint:
            check_metric_names(spec, arch, environment.ncu or shutil.which(options.ncu.executable))
        builds = build_spec(spec, arch, options.cache, options.build)
        if lint:
            check_arguments(spec, builds)
        return builds
    except InputError as error:
        return str(error)


def path_kernels_listed(
    path: Path,
    options: CheckOptions,
    environment: Environment,
    source_arch: str | None = None,
    compiler: str = "auto",
) -> list[ListedKernel]:
    """What `build` lists for a path: an expectation file's kernels, a `build --json` file's, or those
    of a .cu file, an artifact or a folder of them; InputError where it cannot."""
    if is_listing(path):
        return read_listing(path)
    if path.suffix in EXPECTATION_SUFFIXES:
        built = build_file(path, options, environment)
        if isinstance(built, str):
            raise InputError(f"{path}: {built}")
        return listed_builds(path, built)
    return path_kernels(
        path,
        _source_arch(source_arch, options, environment),
        options.arch,
        options.build,
        options.cache,
        compiler,
    )


def _source_arch(given: str | None, options: CheckOptions, environment: Environment) -> str | None:
    """An artifact holds its architectures: each is listed unless --arch picks one. A source is built
    for the architecture given (see options.source_arch), else --arch, else the GPU's."""
    if given is not None:
        return given
    return options.arch or (environment.gpu.arch if environment.gpu is not None else None)


def listed_builds(path: Path, builds: dict[str, KernelBuild]) -> list[ListedKernel]:
    """An expectation file's kernels, built, as `build --json` lists them."""
    signatures = demangle(build.symbol for build in builds.values())
    return [
        listed((build.symbol, signatures[build.symbol], build.arch, build.facts), str(path))
        for build in builds.values()
    ]


def is_expectation_input(path: Path) -> bool:
    """Whether `build` handles path as it always has: an expectation file, or a folder that holds some."""
    if path.suffix in EXPECTATION_SUFFIXES:
        return True
    try:
        folder = stat.S_ISDIR(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False
    return folder and any(next(path.glob(pattern), None) is not None for pattern in EXPECTATION_PATTERNS)


def check_exists(paths: Sequence[Path]) -> None:
    """InputError, one line per path, for a path that is not there."""
    missing = [f"{path}: no such file or folder" for path in paths if not os.path.lexists(path)]
    if missing:
        raise InputError("\n".join(missing))


def list_paths(
    shown_on: Console,
    paths: Sequence[Path],
    options: CheckOptions,
    environment: Environment,
    source_arch: str | None = None,
    compiler: str = "auto",
) -> tuple[list[ListedKernel], ExitCode]:
    """Each path's kernels printed as a table (or why it cannot be built), and all of them. A folder's
    files are built one by one: each that cannot be is one line, and the folder fails only where none
    could be built."""
    every: list[ListedKernel] = []
    status = ExitCode.OK
    for path in paths:
        try:
            if is_listing(path) or path.suffix in EXPECTATION_SUFFIXES:
                kernels = path_kernels_listed(path, options, environment)
            else:
                arch = _source_arch(source_arch, options, environment)
                kernels = _files_listed(shown_on, path, arch, options, compiler)
        except InputError as error:
            shown_on.print(line_text(f"{path}: input error", "bold red"), soft_wrap=True)
            shown_on.print(block_text(str(error)), soft_wrap=True)
            status = worst(status, ExitCode.BAD_INPUT)
            continue
        print_kernels(shown_on, str(path), kernels)
        every += kernels
    return every, status


def _files_listed(
    shown_on: Console, path: Path, arch: str | None, options: CheckOptions, compiler: str
) -> list[ListedKernel]:
    """The kernels of a .cu file, an artifact or a folder's, each file that needed nvcc or could not be
    built said in one line; InputError where nothing could be."""
    listings = file_listings(path, arch, options.arch, options.build, options.cache, compiler)
    if not path.is_dir() and listings[0].problem is not None:
        raise InputError(listings[0].problem)  # a file named alone: its whole message
    if path.is_dir() and (skipped := skipped_line(path, folder_inputs(path).skipped)) is not None:
        shown_on.print(line_text(skipped), soft_wrap=True)
    for listing in listings:
        if listing.note is not None:
            shown_on.print(line_text(listing.note), soft_wrap=True)
        if listing.problem is not None:
            shown_on.print(line_text(problem_line(listing.path, listing.problem), "red"), soft_wrap=True)
    if all(listing.problem is not None for listing in listings):
        raise InputError(f"{path}/: no file in it could be built (each is said above)")
    return [kernel for listing in listings for kernel in listing.kernels]


def write_listing(path: Path, kernels: list[ListedKernel]) -> None:
    """The --json document, to path or, for `-`, to standard output."""
    text = json.dumps(to_json(kernels), indent=1) + "\n"
    if str(path) == "-":
        sys.stdout.write(text)
    else:
        path.write_text(text, encoding="utf-8", errors="backslashreplace")


def check_listed_once(path: Path, kernels: list[ListedKernel]) -> None:
    """InputError, one line naming the path and both entries, where a kernel is listed twice with
    different facts or opcodes."""
    again = listed_again(kernels)
    if again is None:
        return
    index, earlier = again
    kernel, first = kernels[index], kernels[earlier]
    raise InputError(
        one_line(
            f"{path}: kernels[{index}] ({kernel.name}, {kernel.arch}, from {kernel.source}) is listed again"
            f" with other facts or opcodes than kernels[{earlier}] (from {first.source}):"
            " which one to compare cannot be told; compare the builds one copy at a time"
        )
    )


def diff_paths(
    shown_on: Console,
    old: Path,
    new: Path,
    options: CheckOptions,
    environment: Environment,
    fail_on_change: bool,
    source_arch: str | None = None,
    compiler: str = "auto",
) -> ExitCode:
    """What changed from old to new, each a `build --json` file or anything `build` accepts: 0, or
    with fail_on_change 1 where a kernel's fact grew or a kernel was added; 2 where one side cannot be
    read or lists a kernel twice with different facts."""
    check_exists([old, new])
    before = path_kernels_listed(old, options, environment, source_arch, compiler)
    after = path_kernels_listed(new, options, environment, source_arch, compiler)
    for path, kernels in ((old, before), (new, after)):
        check_listed_once(path, kernels)
    changes = diff(before, after)
    print_diff(shown_on, changes)
    if fail_on_change and (changes.grew or changes.added):
        return ExitCode.CLAIM_FAILED
    return ExitCode.OK
