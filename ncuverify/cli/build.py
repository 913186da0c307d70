"""`ncuverify build` and `ncuverify lint`: the commands that compile a run's kernels without a GPU,
file by file; a bug on one file is its line, and the other files are still handled."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import typer
from rich.console import Console

from ncuverify import options, report
from ncuverify.cli.params import AllowInclude, Arch, CompileTimeout, Files, NoCache
from ncuverify.cli.terminal import console, print_warnings
from ncuverify.environment import Environment
from ncuverify.errors import ExitCode
from ncuverify.internal import internal_error_line
from ncuverify.lint import build_file, build_warnings
from ncuverify.report import block_text, line_text
from ncuverify.results import worst
from ncuverify.spec import expand_paths


def build(
    files: Files,
    arch: Arch = None,
    no_cache: NoCache = False,
    allow_include: AllowInclude = None,
    compile_timeout: CompileTimeout = 120.0,
) -> None:
    """Compile the kernels and show their static facts: registers, spills, stack, shared memory, SASS mix.

    Exit codes: 0 built; 2 the input is wrong or nothing says which architecture to build for; 4
    ncuverify itself failed on a file.
    """
    paths, run, environment = _building(files, arch, no_cache, allow_include, compile_timeout)
    shown_on = console()

    def build_one(path: Path) -> ExitCode:
        built = build_file(path, run, environment)
        report.print_build(shown_on, path, built)
        return ExitCode.BAD_INPUT if isinstance(built, str) else ExitCode.OK

    raise typer.Exit(int(_each_file(shown_on, paths, build_one)))


def lint(
    files: Files,
    arch: Arch = None,
    no_cache: NoCache = False,
    allow_include: AllowInclude = None,
    compile_timeout: CompileTimeout = 120.0,
) -> None:
    """Check what can be checked without a GPU: the schema, references between claims, cases and
    kernels, expressions, metric names against the target chip's list, and that every kernel compiles.

    Exit codes: 0 every file is sound; 2 one is not; 4 ncuverify itself failed on a file.
    """
    paths, run, environment = _building(files, arch, no_cache, allow_include, compile_timeout)
    shown_on = console()

    def lint_one(path: Path) -> ExitCode:
        built = build_file(path, run, environment, lint=True)
        if isinstance(built, str):
            shown_on.print(line_text(f"{path}: input error", "bold red"), soft_wrap=True)
            shown_on.print(block_text(built), soft_wrap=True)
            return ExitCode.BAD_INPUT
        shown_on.print(line_text(f"{path}: sound ({len(built)} kernels built)", "green"), soft_wrap=True)
        print_warnings(shown_on, build_warnings(built))
        return ExitCode.OK

    raise typer.Exit(int(_each_file(shown_on, paths, lint_one)))


def _building(
    files: Sequence[Path],
    arch: str | None,
    no_cache: bool,
    allow_include: Sequence[Path] | None,
    compile_timeout: float,
) -> tuple[list[Path], options.CheckOptions, Environment]:
    """The expectation files given, the options of their build, and what this machine can do."""
    paths = expand_paths(files)
    run = options.for_run(
        arch=arch, cache=not no_cache, build=options.build_limits(allow_include, compile_timeout)
    )
    return paths, run, Environment.probe("ncu")


def _each_file(shown_on: Console, paths: Sequence[Path], handle: Callable[[Path], ExitCode]) -> ExitCode:
    """The worst of handle(path) over the files; a bug on one file is its line and INTERNAL_ERROR."""
    status = ExitCode.OK
    for path in paths:
        try:
            status = worst(status, handle(path))
        except Exception as error:  # a bug on this file: the other files are still handled
            line = f"{path}: {internal_error_line(error)}"
            shown_on.print(line_text(line, "bold red"), soft_wrap=True)
            status = worst(status, ExitCode.INTERNAL_ERROR)
    return status
