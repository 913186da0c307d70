"""`ncuverify check`: build, profile and judge the claims of a run, compare it with a baseline, and
write and show its results."""

from __future__ import annotations

import functools
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer

from ncuverify import export, options, pipeline, report, run_plan
from ncuverify.baseline import ratchet
from ncuverify.build import reads_sass
from ncuverify.cli.github import annotating, commands_stopped, print_annotations, write_step_summary
from ncuverify.cli.option_groups import (
    BaselineChoice,
    Comparison,
    Outputs,
    Profiler,
    Profiles,
    gpus_of,
    shard_of,
)
from ncuverify.cli.outputs import write_output, write_results, write_text
from ncuverify.cli.params import (
    AllowInclude,
    Arch,
    Binary,
    CompileTimeout,
    CudaHome,
    Files,
    FromProfile,
    Html,
    JunitXml,
    Ncu,
    NoCache,
    Quiet,
    Verbose,
    seconds,
)
from ncuverify.cli.terminal import check_files, console, print_pass_warnings
from ncuverify.errors import ExitCode
from ncuverify.internal import internal_error_line
from ncuverify.profile import PROCESSES_PER_GPU
from ncuverify.results import FileResult, exit_code, worst
from ncuverify.spec import expand_paths
from ncuverify.spec.binaries import parse_binaries


def check(
    files: Files,
    verbose: Verbose = False,
    quiet: Quiet = False,
    arch: Arch = None,
    ncu: Ncu = "ncu",
    clock_control: Annotated[str, typer.Option(help="ncu --clock-control: none or base")] = "none",
    cache_control: Annotated[str, typer.Option(help="ncu --cache-control: all or none")] = "all",
    case_timeout: Annotated[
        float,
        typer.Option(
            help="stop an ncu process that makes no progress (a case, or ncu itself) for this many seconds",
            callback=seconds,
        ),
    ] = 300.0,
    processes_per_gpu: Annotated[
        int,
        typer.Option(
            min=1,
            max=8,
            help="ncu processes at once on one GPU: with 2, the next starts (ncu, Python, CUDA) while"
            " one profiles, and launches once it has ended; 1: one after another",
        ),
    ] = PROCESSES_PER_GPU,
    save_profile: Annotated[
        Path | None,
        typer.Option(help="record the run's profile (ncu logs, runner status, provenance, cubins) in DIR"),
    ] = None,
    ncu_report: Annotated[
        bool, typer.Option("--ncu-report", help="with --save-profile: keep ncu's .ncu-rep reports too")
    ] = False,
    gpus: Annotated[
        str | None,
        typer.Option(help="profile on these GPUs: all, or indices such as 0,1 (default: the first)"),
    ] = None,
    explain: Annotated[
        bool,
        typer.Option(help="profile the cases of failed memory claims again for ncu's rules and source lines"),
    ] = True,
    facts_without_ncu: Annotated[
        bool,
        typer.Option(
            "--facts-without-ncu",
            help="run the cases whose claims read only launch facts (occupancy, block and grid size,"
            " registers, shared memory, device attributes) or only buffers without ncu, with the"
            " driver's figures: faster, for a run that has the GPU to itself (ncu keeps other profiled"
            " processes' kernels off the GPU while it profiles; the runner alone does not)",
        ),
    ] = False,
    from_profile: FromProfile = None,
    reuse: Annotated[
        Path | None,
        typer.Option(
            help="take the figures of every case whose measurement key is unchanged from the recording in"
            " DIR (a --save-profile folder) and profile only the others",
        ),
    ] = None,
    allow_stale: Annotated[
        bool,
        typer.Option(
            "--allow-stale",
            help="with --from-profile: judge the recorded figures of kernels, cases and program files that"
            " changed since, or that the recording holds no digest of",
        ),
    ] = False,
    static_only: Annotated[
        bool, typer.Option("--static-only", help="judge only the claims on static facts (no GPU needed)")
    ] = False,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run",
            help="say what the run would build, reuse and profile (--json: as a document), and run nothing:"
            " no GPU, no compiler (with --reuse, the kernels built through the compile cache)",
        ),
    ] = False,
    no_cache: NoCache = False,
    shard: Annotated[
        str | None,
        typer.Option(
            help="K/N: build, profile and judge only the K-th of N deterministic shares of the suite's"
            " independent groups of cases; auto (auto/N where only the index is given): the parallel"
            " job's own (CI, Slurm array, Kubernetes Indexed Job)"
        ),
    ] = None,
    json_file: Annotated[
        Path | None, typer.Option("--json", help="write every claim, measurement and provenance as JSON")
    ] = None,
    junit_xml: JunitXml = None,
    html: Html = None,
    markdown: Annotated[
        Path | None, typer.Option(help="write a Markdown summary (pull request, CI step)")
    ] = None,
    sarif: Annotated[
        Path | None,
        typer.Option(
            help="write SARIF 2.1.0 for code scanning: a result per failing claim, error and regression at"
            " its line"
        ),
    ] = None,
    markdown_max_bytes: Annotated[
        int | None,
        typer.Option(
            min=1024,
            help="cut the --markdown summary to at most N bytes, whole rows at a time (e.g. 65536 for a"
            " pull-request comment)",
        ),
    ] = None,
    annotate: Annotated[
        str | None,
        typer.Option(
            help="github: a workflow command per failing claim, error and regression, which GitHub shows"
            " on the pull request's lines; none: no annotations (default: github in GitHub Actions)"
        ),
    ] = None,
    baseline: Annotated[
        Path | None,
        typer.Option(help="also report what got worse or better than this baseline; worse exits 1"),
    ] = None,
    tolerance: Annotated[
        list[str] | None,
        typer.Option(
            help="NAME=rel:FRACTION or NAME=abs:AMOUNT: how much worse than the baseline a measure may get"
        ),
    ] = None,
    allow_include: AllowInclude = None,
    compile_timeout: CompileTimeout = 120.0,
    cuda_home: CudaHome = None,
    binary: Binary = None,
    allow_programs: Annotated[
        bool,
        typer.Option(
            "--allow-programs",
            help="run the commands of program cases: code the expectation file names (a pull request's too)",
        ),
    ] = False,
) -> None:
    """Build, profile and judge every claim of the given files (expectation files, or folders of them).

    Exit codes: 0 every claim holds; 1 a claim failed or could not be evaluated, or a measure regressed
    against --baseline; 2 the input is wrong (an output that cannot be written too); 3 the claims could
    not be measured here (no GPU, no ncu, no counter access), or --static-only set aside every claim it
    could have judged; 4 ncuverify itself failed (one line names the file that holds the traceback).
    The first in the order 4, 2, 1, 3 wins.
    """
    profiles = Profiles(save_profile, ncu_report, from_profile, reuse)
    profiler = Profiler(ncu, clock_control, cache_control, case_timeout, processes_per_gpu)
    shares, chosen_gpus = shard_of(shard), gpus_of(gpus)
    paths = expand_paths(files)
    outputs = Outputs(json_file, junit_xml, markdown, html, sarif)
    against = BaselineChoice(baseline, tuple(tolerance or ()))
    annotations = annotating(annotate)
    outputs.check([*paths, *against.inputs()])
    against.check_file()
    profiles.check_folders()
    limits = options.build_limits(allow_include, compile_timeout, cuda_home=cuda_home)
    binaries = parse_binaries(binary or ())
    comparison = against.load()
    if comparison is not None and any(reads_sass(metric) for metric in comparison.tolerances):
        limits = replace(limits, sass=True)  # a tolerance on SASS compares it on every file
    run = options.for_run(
        arch=arch,
        ncu=profiler.ncu(),
        save_profile=profiles.save,
        keep_report=profiles.keep_report,
        from_profile=profiles.replay,
        reuse=profiles.reuse,
        static_only=static_only,
        cache=not no_cache,
        build=limits,
        gpus=chosen_gpus,
        explain=explain,
        shard=shares,
        allow_programs=allow_programs,
        allow_stale=allow_stale,
        binaries=binaries,
        driver_facts=facts_without_ncu,
    )
    if dry_run:
        raise typer.Exit(int(_planned(paths, run, outputs, comparison is not None, verbose, quiet)))
    with commands_stopped() as resume_commands:  # what a pull request wrote starts none
        shown_on = console()
        print_pass_warnings(shown_on, run)
        started = time.monotonic()
        results = check_files(paths, run)
        outcome = _compared(comparison, results)
        code = outcome.code
        identity = _run_identity(shares, paths)
        written = write_results(shown_on, outcome, outputs.by_option(), identity, markdown_max_bytes)
        written = worst(written, write_step_summary(shown_on, outcome))
        shown = report.print_run(shown_on, outcome.results, time.monotonic() - started, verbose, quiet)
        # --static-only measures nothing by choice: what this machine lacks is not why nothing was judged
        if code == ExitCode.NOT_MEASURABLE and not quiet and not static_only:
            print(
                "ncuverify doctor says what this machine lacks to measure, and how to mend it",
                file=sys.stderr,
            )
        if outcome.against_baseline:
            report.print_against_baseline(shown_on, outcome)
        if annotations:  # after the table: the runner reads them from the log, a reader sees the table first
            resume_commands()
            print_annotations(outcome.results, outcome.changes)
    raise typer.Exit(int(worst(code, written, shown)))


def _planned(
    paths: Sequence[Path],
    run: options.CheckOptions,
    outputs: Outputs,
    compared: bool,
    verbose: bool,
    quiet: bool,
) -> ExitCode:
    """check --dry-run: the plan shown (and written to --json); a file that cannot be planned reported as
    check reports it, with its exit code."""
    given = [
        option for option, path in outputs.by_option().items() if path is not None and option != "--json"
    ]
    if given or compared:
        raise typer.BadParameter(
            f"--dry-run writes the plan to --json only, not {(given or ['--baseline'])[0]}",
            param_hint="--dry-run",
        )
    shown_on = console()
    plan = pipeline.plan_files(paths, run)
    written = ExitCode.OK
    if outputs.json is not None:
        render = functools.partial(write_text, text=run_plan.to_json(plan))
        written = write_output(shown_on, "--json", outputs.json, render)
    if not quiet:
        for line in run_plan.plan_lines(plan):
            report.print_prose(shown_on, line)
    if plan.failed:
        report.print_run(shown_on, list(plan.failed), 0.0, verbose, quiet=True)
    return worst(written, exit_code(plan.failed))


def _compared(comparison: Comparison | None, results: Sequence[FileResult]) -> export.RunOutcome:
    """The run's outcome: its results (warned of allow entries that accept nothing), and what moved
    against the baseline, or the line that says the comparison failed (the results are still written
    and shown)."""
    if comparison is None:
        return export.RunOutcome(ratchet.with_stale_warnings(results, None))
    try:
        compared = ratchet.compare(comparison.before, results, comparison.tolerances)
    except Exception as error:  # a bug in the comparison: the results are still written and shown
        line = internal_error_line(error)  # one traceback file, named by the terminal and every output
        print(f"--baseline: {line}", file=sys.stderr)
        return export.RunOutcome(ratchet.with_stale_warnings(results, None), baseline_error=line)
    return export.RunOutcome(ratchet.with_stale_warnings(results, compared.changes), compared)


def _run_identity(shares: tuple[int, int] | None, paths: Sequence[Path]) -> export.ShardOf:
    """Which share of which suite this run is, for --json (merge checks that shards make one run)."""
    k, n = shares or (1, 1)
    return export.ShardOf(k, n, export.suite_digest(paths))
