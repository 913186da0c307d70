"""`ncuverify build` and `ncuverify lint`: the commands that compile a run's kernels without a GPU,
file by file; a bug on one file is its line, and the other files are still handled."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from ncuverify import options, report
from ncuverify.build.artifacts_listing import SOURCE_SUFFIXES
from ncuverify.build.built import build_warnings
from ncuverify.cli.outputs import write_output
from ncuverify.cli.params import AllowInclude, Arch, CompileTimeout, CudaHome, Files, NoCache, SourceCompiler
from ncuverify.cli.terminal import console, print_warnings
from ncuverify.environment import Environment
from ncuverify.errors import ExitCode, InputError
from ncuverify.internal import internal_error_line
from ncuverify.ncu.metrics import unchecked
from ncuverify.report import block_text, line_text, print_prose
from ncuverify.report.listing import (
    build_file,
    check_exists,
    diff_paths,
    is_expectation_input,
    list_paths,
    listed_builds,
    write_listing,
)
from ncuverify.results import worst
from ncuverify.spec import expand_paths
from ncuverify.text import counted

BuildPaths = Annotated[
    list[Path],
    typer.Argument(
        help="expectation files (YAML) or folders of them; .cu files (every kernel they define);"
        " built artifacts (.cubin, .fatbin, .o, .a, .so, executables); folders without expectation files"
        " (their .cu files and artifacts by those suffixes, recursively); with --diff, OLD and NEW, each"
        " also a `build --json` file",
        show_default=False,
    ),
]
JsonListing = Annotated[
    Path | None,
    typer.Option("--json", help="write every kernel's static facts as JSON to this file, or - for stdout"),
]
Diff = Annotated[
    bool, typer.Option("--diff", help="compare two builds, OLD NEW: each kernel's facts and SASS opcodes")
]
FailOnChange = Annotated[
    bool, typer.Option(help="with --diff: exit 1 when a kernel's fact grew or a kernel was added")
]


def build(
    files: BuildPaths,
    arch: Arch = None,
    no_cache: NoCache = False,
    allow_include: AllowInclude = None,
    compile_timeout: CompileTimeout = 120.0,
    cuda_home: CudaHome = None,
    json_file: JsonListing = None,
    diff: Diff = False,
    fail_on_change: FailOnChange = False,
    compiler: SourceCompiler = "auto",
) -> None:
    """Compile the kernels and show their static facts: registers, spills, stack, shared memory, SASS mix.

    A .cu file is built for --arch, else the GPU's architecture, else sm_90; a folder's files are built
    one by one, and each that cannot be is said in one line.

    Exit codes: 0 built (with --diff: compared; 1 with --fail-on-change where something grew); 2 the
    input is wrong (a folder: none of its files could be built) or nothing says which architecture to
    build an expectation file for; 4 ncuverify itself failed on a file.
    """
    # The listing shows each kernel's SASS instructions and opcode mix.
    limits = replace(options.build_limits(allow_include, compile_timeout, cuda_home=cuda_home), sass=True)
    run = options.for_run(arch=arch, cache=not no_cache, build=limits)
    environment = Environment.probe("ncu")
    # With the JSON on standard output, the tables go to standard error.
    shown_on = Console(stderr=True) if json_file is not None and str(json_file) == "-" else console()
    sources_arch, note = options.source_arch(arch, environment)
    if diff:
        if len(files) != 2:
            raise InputError(f"--diff compares two builds, OLD NEW; {len(files)} given")
        compared = diff_paths(
            shown_on, files[0], files[1], run, environment, fail_on_change, sources_arch, compiler
        )
        raise typer.Exit(int(compared))
    if not all(is_expectation_input(path) for path in files):
        check_exists(files)
        if note is not None and any(_holds_sources(path) for path in files):
            shown_on.print(line_text(note), soft_wrap=True)
        kernels, status = list_paths(shown_on, files, run, environment, sources_arch, compiler)
        if json_file is not None:
            status = worst(
                status, write_output(shown_on, "--json", json_file, partial(write_listing, kernels=kernels))
            )
        raise typer.Exit(int(status))
    paths = expand_paths(files)
    kernels = []

    def build_one(path: Path) -> ExitCode:
        built = build_file(path, run, environment)
        report.print_build(shown_on, path, built)
        if isinstance(built, str):
            return ExitCode.BAD_INPUT
        kernels.extend(listed_builds(path, built))
        return ExitCode.OK

    status = _each_file(shown_on, paths, build_one)
    if json_file is not None:
        status = worst(
            status, write_output(shown_on, "--json", json_file, partial(write_listing, kernels=kernels))
        )
    raise typer.Exit(int(status))


def lint(
    files: Files,
    arch: Arch = None,
    no_cache: NoCache = False,
    allow_include: AllowInclude = None,
    compile_timeout: CompileTimeout = 120.0,
    cuda_home: CudaHome = None,
) -> None:
    """Check what can be checked without a GPU: the schema, references between claims, cases and
    kernels, expressions, metric names against the target chip's list, and that every kernel compiles.

    Exit codes: 0 every file is sound; 2 one is not; 4 ncuverify itself failed on a file.
    """
    paths, run, environment = _building(files, arch, no_cache, allow_include, compile_timeout, cuda_home)
    shown_on = console()

    def lint_one(path: Path) -> ExitCode:
        built = build_file(path, run, environment, lint=True)
        if isinstance(built, str):
            shown_on.print(line_text(f"{path}: input error", "bold red"), soft_wrap=True)
            shown_on.print(block_text(built), soft_wrap=True)
            return ExitCode.BAD_INPUT
        print_prose(shown_on, f"{path}: sound ({counted(len(built), 'kernel')} built)", "green")
        not_checked = sorted(
            {reason for b in built.values() if (reason := unchecked(b.arch, environment.ncu))}
        )
        print_warnings(
            shown_on, [*build_warnings(built), *(f"metric names not checked: {r}" for r in not_checked)]
        )
        return ExitCode.OK

    raise typer.Exit(int(_each_file(shown_on, paths, lint_one)))


def _holds_sources(path: Path) -> bool:
    """Whether path is, or may hold, a .cu file that would be built for the default architecture."""
    return path.suffix in SOURCE_SUFFIXES or path.is_dir()


def _building(
    files: Sequence[Path],
    arch: str | None,
    no_cache: bool,
    allow_include: Sequence[Path] | None,
    compile_timeout: float,
    cuda_home: Path | None = None,
) -> tuple[list[Path], options.CheckOptions, Environment]:
    """The expectation files given, the options of their build, and what this machine can do."""
    paths = expand_paths(files)
    limits = options.build_limits(allow_include, compile_timeout, cuda_home=cuda_home)
    run = options.for_run(arch=arch, cache=not no_cache, build=limits)
    return paths, run, Environment.probe("ncu")


def _each_file(shown_on: Console, paths: Sequence[Path], handle: Callable[[Path], ExitCode]) -> ExitCode:
    """The worst of handle(path) over the files; a bug on one file is its line and INTERNAL_ERROR."""
    status = ExitCode.OK
    for path in paths:
        try:
            status = worst(status, handle(path))
        except Exception as error:  # a bug on this file: the other files are still handled
            line = f"{path}: {internal_error_line(error)}"
            print_prose(shown_on, line, "bold red")
            status = worst(status, ExitCode.INTERNAL_ERROR)
    return status
