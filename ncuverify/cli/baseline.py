"""`ncuverify baseline save`: check the files and record every measured value, for `check --baseline`."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer

from ncuverify import report
from ncuverify.baseline import ratchet
from ncuverify.baseline import snapshot as baselines
from ncuverify.cli.outputs import write_output
from ncuverify.cli.params import AllowInclude, Arch, Binary, CompileTimeout, Files, FromProfile, Ncu
from ncuverify.cli.runs import replay_or_profile
from ncuverify.cli.terminal import check_files, console, print_pass_warnings
from ncuverify.errors import ExitCode
from ncuverify.report import print_prose
from ncuverify.results import FileResult, exit_code, worst
from ncuverify.spec.binaries import parse_binaries

baseline_app = typer.Typer(
    rich_markup_mode=None,
    no_args_is_help=True,
    help="Record every measured value of a run, to compare later runs with.",
)


@baseline_app.command("save", short_help="check the files and save every measured value")
def baseline_save(
    output: Annotated[Path, typer.Argument(help="the baseline file to write (JSON)", show_default=False)],
    files: Files,
    arch: Arch = None,
    ncu: Ncu = "ncu",
    from_profile: FromProfile = None,
    allow_include: AllowInclude = None,
    compile_timeout: CompileTimeout = 120.0,
    binary: Binary = None,
    static_only: Annotated[
        bool,
        typer.Option(
            "--static-only",
            help="save the static facts only (registers, spills, shared memory...): no GPU needed",
        ),
    ] = False,
) -> None:
    """Check the files and save every measured value as a baseline for `check --baseline`.

    Exit codes as for check; the baseline is written whatever the verdicts. With --static-only the
    claims that need a GPU are set aside, and that alone does not make it exit 3: it exits 0 where
    every claim on a static fact holds.
    """
    # A baseline records every static fact, the SASS instruction count included.
    paths, run = replay_or_profile(
        files,
        {"": output},
        arch,
        ncu,
        from_profile,
        allow_include,
        compile_timeout,
        sass=True,
        static_only=static_only,
    )
    run = replace(run, binaries=parse_binaries(binary or ()))
    shown_on = console()
    print_pass_warnings(shown_on, run)
    started = time.monotonic()
    results = ratchet.with_stale_warnings(check_files(paths, run), None)
    written = write_output(shown_on, "", output, lambda path: baselines.save(results, path))
    shown = report.print_run(shown_on, results, time.monotonic() - started, verbose=False)
    if written is ExitCode.OK:
        what = "baseline of static facts" if static_only else "baseline"
        print_prose(shown_on, f"{what} written to {output}")
    raise typer.Exit(int(worst(saved_code(results, static_only), written, shown)))


def saved_code(results: Sequence[FileResult], static_only: bool) -> ExitCode:
    """The exit code of a save: check's, but with --static-only the claims set aside are what was
    asked for, so that a CPU runner saves a baseline of static facts and exits 0."""
    if static_only:
        results = [replace(result, set_aside=0) for result in results]
    return exit_code(results)
