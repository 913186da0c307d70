"""`ncuverify init`: a starter expectation file for the kernels of a source, printed or written; for a
folder, one per source."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from ncuverify import options
from ncuverify.build.cache import CompileCache, default_folder
from ncuverify.build.whole_source import problem_line
from ncuverify.cli.params import AllowInclude, CompileTimeout, CudaHome, NoCache, SourceCompiler, arch
from ncuverify.cli.paths import check_input_files
from ncuverify.cli.terminal import console, print_warnings
from ncuverify.environment import Environment
from ncuverify.errors import ExitCode, InputError
from ncuverify.init import StarterFile, starter_file, write_new
from ncuverify.init.folder import each_starter, folder_sources
from ncuverify.init.writing import folder_problem, make_folder, writing_problem
from ncuverify.report import line_text, print_prose
from ncuverify.spec import project_root
from ncuverify.text import counted


def init(
    source: Annotated[
        Path,
        typer.Argument(
            help="a CUDA source (.cu), a built artifact (cubin, fatbin, .o, .a, .so, executable), or a"
            " folder of .cu files (one starter file per source)",
            show_default=False,
        ),
    ],
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="write the file here instead of printing it (missing folders are made, inside the"
            " project); for a folder, the folder to write one file per source in",
        ),
    ] = None,
    target: Annotated[
        str | None,
        typer.Option(
            "--arch", help="build for this architecture (default: the GPU's, else sm_90)", callback=arch
        ),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="overwrite the output file if it exists")] = False,
    no_cache: NoCache = False,
    allow_include: AllowInclude = None,
    compile_timeout: CompileTimeout = 120.0,
    cuda_home: CudaHome = None,
    compiler: SourceCompiler = "auto",
) -> None:
    """Write a starter expectation file for every kernel of a source or a built artifact: a case per
    kernel, with an argument placeholder per parameter, and claims on its static facts at today's
    values, which hold as written. A source with host code (main(), <<<...>>> launches, host headers) is
    compiled with nvcc, and its file says `compiler: nvcc`. For a folder, one file per source, under -o
    as the sources are under the folder; without -o, what would be written is listed.

    Exit codes: 0 written; 2 the input is wrong (neither a .cu nor an artifact, does not compile, no
    kernel or no cubin for the architecture, an output that exists without --force or cannot be
    written, an output that is the source or a file it includes, --force or not; a folder: no source in
    it made a file); 4 ncuverify itself failed.
    """
    limits = options.build_limits(allow_include, compile_timeout, cuda_home=cuda_home)
    chosen, note = options.source_arch(target, Environment.probe("ncu"))
    notes_on = Console(stderr=True)  # standard output may be the file itself
    if note is not None:
        notes_on.print(line_text(note), soft_wrap=True)
    cache = None if no_cache else CompileCache(default_folder())

    def make(source: Path, written_at: Path) -> StarterFile:
        return starter_file(source, written_at, chosen, date.today(), cache, limits, compiler)

    if os.path.isdir(source):
        raise typer.Exit(int(_init_folder(source, output, force, make)))
    check_input_files([("", source)])
    project = project_root(source.parent)
    if output is not None and (problem := _output_problem(output, force, source, project)) is not None:
        raise InputError(problem)
    made = make(source, output if output is not None else Path.cwd() / "expectations.yaml")
    if made.note is not None:
        notes_on.print(line_text(made.note), soft_wrap=True)
    if output is None:
        sys.stdout.write(made.text)
        return
    shown_on = console()
    print_warnings(shown_on, made.warnings)
    make_folder(output.parent, project)
    write_new(output, made.text, force, made.read)
    print_prose(shown_on, f"{output}: {counted(made.kernels, 'kernel')} for {chosen}", "green")


def _output_problem(output: Path, force: bool, source: Path, project: Path) -> str | None:
    """Why the output cannot be written, before anything is compiled: its folder, where it is missing
    (made inside the project only), else the file itself."""
    if not os.path.isdir(output.parent):
        return folder_problem(output.parent, project)
    return writing_problem(output, force, (source,))


def _init_folder(
    folder: Path, output: Path | None, force: bool, make: Callable[[Path, Path], StarterFile]
) -> ExitCode:
    """A starter file per source of the folder, each said in one line (or why it has none); without
    an output folder, nothing written. BAD_INPUT where no source made one."""
    shown_on = console()
    found = folder_sources(folder)
    project = project_root(folder)
    if output is not None and (problem := folder_problem(output, project)) is not None:
        raise InputError(problem)
    if found.skipped is not None:
        shown_on.print(line_text(found.skipped), soft_wrap=True)
    written_in = output if output is not None else Path.cwd() / "expectations"
    made_any = False
    for outcome in each_starter(folder, found.sources, written_in, make):
        made = outcome.made
        if made is not None and output is not None:
            made, problem = _written(outcome.written_at, made, force, project)
        else:
            problem = outcome.problem
        if made is None:
            shown_on.print(line_text(problem_line(outcome.source, problem or ""), "red"), soft_wrap=True)
            continue
        made_any = True
        if made.note is not None:
            shown_on.print(line_text(made.note), soft_wrap=True)
        print_warnings(shown_on, made.warnings)
        where = outcome.written_at if output is not None else outcome.source
        shown_on.print(line_text(f"{where}: {counted(made.kernels, 'kernel')}", "green"), soft_wrap=True)
    if output is None and made_any:
        shown_on.print(
            line_text("nothing written: pass -o FOLDER to write one starter file per source there"),
            soft_wrap=True,
        )
    return ExitCode.OK if made_any else ExitCode.BAD_INPUT


def _written(
    written_at: Path, made: StarterFile, force: bool, project: Path
) -> tuple[StarterFile | None, str | None]:
    """The starter file written at written_at (its folder made), or why it could not be."""
    try:
        make_folder(written_at.parent, project)
        write_new(written_at, made.text, force, made.read)
    except InputError as error:
        return None, str(error)
    return made, None
