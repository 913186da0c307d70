"""`ncuverify build PATH...` for what is not an expectation file (a .cu file, a built artifact, a folder
of them), `--json`, and `build --diff OLD NEW`."""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console

from ncuverify.build.artifacts_diff import diff, listed_again
from ncuverify.build.artifacts_json import to_json
from ncuverify.build.artifacts_listing import ListedKernel
from ncuverify.environment import Environment
from ncuverify.errors import ExitCode, InputError
from ncuverify.lint import EXPECTATION_SUFFIXES, path_kernels_listed
from ncuverify.options import CheckOptions
from ncuverify.report import block_text, line_text
from ncuverify.report.kernels import print_diff, print_kernels
from ncuverify.results import worst
from ncuverify.spec.paths import EXPECTATION_PATTERNS
from ncuverify.text import one_line


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
    shown_on: Console, paths: Sequence[Path], options: CheckOptions, environment: Environment
) -> tuple[list[ListedKernel], ExitCode]:
    """Each path's kernels printed as a table (or why it cannot be built), and all of them."""
    every: list[ListedKernel] = []
    status = ExitCode.OK
    for path in paths:
        try:
            kernels = path_kernels_listed(path, options, environment)
        except InputError as error:
            shown_on.print(line_text(f"{path}: input error", "bold red"), soft_wrap=True)
            shown_on.print(block_text(str(error)), soft_wrap=True)
            status = worst(status, ExitCode.BAD_INPUT)
            continue
        print_kernels(shown_on, str(path), kernels)
        every += kernels
    return every, status


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
) -> ExitCode:
    """What changed from old to new, each a `build --json` file or anything `build` accepts: 0, or
    with fail_on_change 1 where a kernel's fact grew or a kernel was added; 2 where one side cannot be
    read or lists a kernel twice with different facts."""
    check_exists([old, new])
    before = path_kernels_listed(old, options, environment)
    after = path_kernels_listed(new, options, environment)
    for path, kernels in ((old, before), (new, after)):
        check_listed_once(path, kernels)
    changes = diff(before, after)
    print_diff(shown_on, changes)
    if fail_on_change and (changes.grew or changes.added):
        return ExitCode.CLAIM_FAILED
    return ExitCode.OK
