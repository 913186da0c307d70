"""`ncuverify init`: a starter expectation file for the kernels of a source, printed or written."""

from __future__ import annotations

import sys
from datetime import date
from pathlib import Path
from typing import Annotated

import typer

from ncuverify import options
from ncuverify.build.cache import CompileCache, default_folder
from ncuverify.cli.params import AllowInclude, CompileTimeout, CudaHome, NoCache, arch
from ncuverify.cli.paths import check_input_files
from ncuverify.cli.terminal import console, print_warnings
from ncuverify.environment import Environment
from ncuverify.errors import InputError
from ncuverify.init import starter_file, write_new
from ncuverify.init.writing import writing_problem
from ncuverify.report import print_prose

# Without --arch or a GPU to ask: Hopper, the architecture this project's files are written for.
DEFAULT_ARCH = "sm_90"


def init(
    source: Annotated[
        Path,
        typer.Argument(
            help="a CUDA source (.cu), or a built artifact (cubin, fatbin, .o, .a, .so, executable)",
            show_default=False,
        ),
    ],
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="write the file here instead of printing it")
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
) -> None:
    """Write a starter expectation file for every kernel of a source or a built artifact: a case per
    kernel, with an argument placeholder per parameter, and claims on its static facts at today's
    values, which hold as written.

    Exit codes: 0 written; 2 the input is wrong (neither a .cu nor an artifact, does not compile, no
    kernel or no cubin for the architecture, an output that exists without --force or cannot be
    written, an output that is the source or a file it includes, --force or not); 4 ncuverify itself
    failed.
    """
    check_input_files([("", source)])
    if output is not None and (problem := writing_problem(output, force, (source,))) is not None:
        raise InputError(problem)
    limits = options.build_limits(allow_include, compile_timeout, cuda_home=cuda_home)
    chosen = target or _gpu_arch() or DEFAULT_ARCH
    cache = None if no_cache else CompileCache(default_folder())
    written_at = output if output is not None else Path.cwd() / "expectations.yaml"
    made = starter_file(source, written_at, chosen, date.today(), cache, limits)
    shown_on = console()
    if output is None:
        sys.stdout.write(made.text)
        return
    print_warnings(shown_on, made.warnings)
    write_new(output, made.text, force, made.read)
    print_prose(shown_on, f"{output}: {made.kernels} kernels for {chosen}", "green")


def _gpu_arch() -> str | None:
    gpu = Environment.probe("ncu").gpu
    return gpu.arch if gpu is not None else None
