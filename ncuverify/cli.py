"""The command line: parses options and calls the pipeline."""

from __future__ import annotations

import json
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn
from rich.text import Text

from ncuverify import audit as claims_audit
from ncuverify import baseline as baselines
from ncuverify import cache as compile_cache
from ncuverify import export, pipeline, report
from ncuverify.cache import CompileCache
from ncuverify.environment import gpu_count
from ncuverify.errors import ExitCode, InputError
from ncuverify.profile import NcuOptions
from ncuverify.schedule import PassCounts
from ncuverify.spec import json_schema

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Check quantitative claims about CUDA kernels against Nsight Compute measurements.",
)


# Arguments and options shared by the commands.
Files = Annotated[
    list[Path], typer.Argument(help="expectation files (YAML), or folders of them", show_default=False)
]
Arch = Annotated[
    str | None,
    typer.Option(help="build for this architecture, e.g. sm_90 (default: the GPU's, else the file's)"),
]
Ncu = Annotated[str, typer.Option(help="the ncu executable")]
NoCache = Annotated[
    bool,
    typer.Option(
        "--no-cache", help="compile every kernel, not through the compile cache (ncuverify cache --help)"
    ),
]
FromProfile = Annotated[
    Path | None, typer.Option(help="judge the profiles recorded in DIR instead of profiling: no GPU needed")
]


@app.callback()
def _root() -> None:
    """ncuverify: claims about CUDA kernels, checked on the hardware."""


@app.command()
def check(
    files: Files,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="show the documents' figures and notes")
    ] = False,
    arch: Arch = None,
    ncu: Ncu = "ncu",
    clock_control: Annotated[str, typer.Option(help="ncu --clock-control: none or base")] = "none",
    cache_control: Annotated[str, typer.Option(help="ncu --cache-control: all or none")] = "all",
    case_timeout: Annotated[
        float,
        typer.Option(help="stop a case that runs longer than this many seconds under the profiler", min=1),
    ] = 300.0,
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
    from_profile: FromProfile = None,
    static_only: Annotated[
        bool, typer.Option("--static-only", help="judge only the claims on static facts (no GPU needed)")
    ] = False,
    no_cache: NoCache = False,
    shard: Annotated[
        str | None, typer.Option(help="K/N: judge only the K-th of N deterministic shares of the claims")
    ] = None,
    json_file: Annotated[
        Path | None, typer.Option("--json", help="write every claim, measurement and provenance as JSON")
    ] = None,
    junit_xml: Annotated[Path | None, typer.Option(help="write one JUnit test case per claim")] = None,
    markdown: Annotated[
        Path | None, typer.Option(help="write a Markdown summary (pull request, CI step)")
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
) -> None:
    """Build, profile and judge every claim of the given files (expectation files, or folders of them).

    Exit codes: 0 every claim holds; 1 a claim failed or could not be evaluated, or a measure regressed
    against --baseline; 2 the input is wrong; 3 the claims could not be measured here (no GPU, no ncu,
    no counter access).
    """
    if save_profile is not None and from_profile is not None:
        raise typer.BadParameter(
            "record a new profile or replay an old one, not both", param_hint="--save-profile"
        )
    if ncu_report and save_profile is None:
        raise typer.BadParameter(
            "keeps reports in the --save-profile folder: give one", param_hint="--ncu-report"
        )
    if clock_control not in ("none", "base"):
        raise typer.BadParameter("none or base", param_hint="--clock-control")
    if cache_control not in ("all", "none"):
        raise typer.BadParameter("all or none", param_hint="--cache-control")
    options = pipeline.CheckOptions(
        arch=arch,
        ncu=NcuOptions(
            executable=ncu,
            clock_control=clock_control,
            cache_control=cache_control,
            case_timeout_s=case_timeout,
        ),
        save_profile=save_profile,
        keep_report=ncu_report,
        from_profile=from_profile,
        static_only=static_only,
        cache=_cache(no_cache),
        passes=_passes(no_cache),
        gpus=_gpus(gpus),
        explain=explain,
        shard=_shard(shard),
    )
    console = _console()
    try:
        before = baselines.load(baseline) if baseline is not None else None
        overrides = dict(baselines.parse_tolerance(t) for t in tolerance or [])
    except InputError as error:
        console.print(Text(str(error), style="bold red"), soft_wrap=True)
        raise typer.Exit(int(ExitCode.BAD_INPUT)) from None
    started = time.monotonic()
    results = _check_files(files, options)
    report.print_run(console, results, time.monotonic() - started, verbose)
    code = pipeline.exit_code(results)
    if before is not None:
        changes = baselines.compare(before, results, overrides)
        report.print_changes(console, changes)
        if any(change.worse for change in changes) and code in (ExitCode.OK, ExitCode.NOT_MEASURABLE):
            code = ExitCode.CLAIM_FAILED
    _write_outputs(results, code, json_file, junit_xml, markdown)
    raise typer.Exit(int(code))


def _write_outputs(
    results, code: ExitCode, json_file: Path | None, junit_xml: Path | None, markdown: Path | None
) -> None:
    if json_file is not None:
        json_file.write_text(export.to_json(results, code))
    if junit_xml is not None:
        junit_xml.write_text(export.to_junit(results))
    if markdown is not None:
        markdown.write_text(export.to_markdown(results))


baseline_app = typer.Typer(
    no_args_is_help=True, help="Record every measured value of a run, to compare later runs with."
)
app.add_typer(baseline_app, name="baseline")


@baseline_app.command("save")
def baseline_save(
    output: Annotated[Path, typer.Argument(help="the baseline file to write (JSON)", show_default=False)],
    files: Files,
    arch: Arch = None,
    ncu: Ncu = "ncu",
    from_profile: FromProfile = None,
) -> None:
    """Check the files and save every measured value as a baseline for `check --baseline`.

    Exit codes as for check; the baseline is written whatever the verdicts.
    """
    options = pipeline.CheckOptions(
        arch=arch, ncu=NcuOptions(executable=ncu), from_profile=from_profile, cache=_cache(False)
    )
    console = _console()
    started = time.monotonic()
    results = _check_files(files, options)
    report.print_run(console, results, time.monotonic() - started, verbose=False)
    baselines.save(results, output)
    console.print(Text(f"baseline written to {output}"))
    raise typer.Exit(int(pipeline.exit_code(results)))


@app.command()
def audit(
    files: Files,
    from_profile: FromProfile = None,
    markdown: Annotated[
        Path | None, typer.Option(help="also write the audit as Markdown to this file")
    ] = None,
    arch: Arch = None,
    ncu: Ncu = "ncu",
) -> None:
    """One row per documented claim: the document's figure, what this GPU measured, and whether it holds.

    Exit codes as for check.
    """
    options = pipeline.CheckOptions(
        arch=arch, ncu=NcuOptions(executable=ncu), from_profile=from_profile, cache=_cache(False)
    )
    console = _console()
    results = _check_files(files, options)
    for result in results:
        if result.input_error is not None:
            report.print_file(console, result, verbose=False)
    rows = claims_audit.audit_rows(results)
    console.print(claims_audit.table(rows))
    console.print(Text(f"audit: {claims_audit.counts_line(rows)}"))
    if markdown is not None:
        replayed = any(r.replayed for r in results)
        markdown.write_text(claims_audit.markdown(rows, claims_audit.provenance_of(results), replayed))
    raise typer.Exit(int(pipeline.exit_code(results)))


@app.command()
def build(files: Files, arch: Arch = None, no_cache: NoCache = False) -> None:
    """Compile the kernels and show their static facts: registers, spills, stack, shared memory, SASS mix.

    Exit codes: 0 built; 2 the input is wrong or nothing says which architecture to build for.
    """
    console = _console()
    status = ExitCode.OK
    environment = pipeline.Environment.probe("ncu")
    for path in expand(files):
        built = pipeline.build_file(
            path, pipeline.CheckOptions(arch=arch, cache=_cache(no_cache)), environment
        )
        report.print_build(console, path, built)
        if isinstance(built, str):
            status = ExitCode.BAD_INPUT
    raise typer.Exit(int(status))


cache_app = typer.Typer(
    no_args_is_help=True,
    help="The compile cache: kernels compiled once, until their source, headers, options or NVRTC change.",
)
app.add_typer(cache_app, name="cache")


@cache_app.command("clean")
def cache_clean() -> None:
    """Remove every compiled kernel, and the replay passes remembered, from the cache folder
    ($NCUVERIFY_CACHE_DIR, else ~/.cache/ncuverify)."""
    folder = compile_cache.default_folder()
    removed = CompileCache(folder).clean()
    _console().print(Text(f"removed {removed} entries from {folder}"))


@cache_app.command("where")
def cache_where() -> None:
    """Print the cache's folder."""
    print(compile_cache.default_folder())


@app.command()
def merge(
    results: Annotated[
        list[Path], typer.Argument(help="JSON results (check --json) of the shards", show_default=False)
    ],
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="show the documents' figures and notes")
    ] = False,
    json_file: Annotated[Path | None, typer.Option("--json", help="write the merged results as JSON")] = None,
    junit_xml: Annotated[Path | None, typer.Option(help="write one JUnit test case per claim")] = None,
    markdown: Annotated[Path | None, typer.Option(help="write a Markdown summary")] = None,
) -> None:
    """Join the JSON results of the shards of a run (check --shard K/N --json) into one report and one
    exit code, as if one machine had run them all."""
    console = _console()
    shards = []
    for path in results:
        try:
            shards.append(export.from_json(path.read_text()))
        except (OSError, ValueError, KeyError, TypeError) as error:
            console.print(
                Text(f"{path}: not a result of check --json ({error})", style="bold red"), soft_wrap=True
            )
            raise typer.Exit(int(ExitCode.BAD_INPUT)) from None
    merged = export.merge(shards)
    report.print_run(console, merged, sum(r.seconds for r in merged), verbose)
    code = pipeline.exit_code(merged)
    _write_outputs(merged, code, json_file, junit_xml, markdown)
    raise typer.Exit(int(code))


@app.command()
def lint(files: Files, arch: Arch = None, no_cache: NoCache = False) -> None:
    """Check what can be checked without a GPU: the schema, references between claims, cases and
    kernels, expressions, metric names against the target chip's list, and that every kernel compiles.

    Exit codes: 0 every file is sound; 2 one is not.
    """
    console = _console()
    status = ExitCode.OK
    environment = pipeline.Environment.probe("ncu")
    for path in expand(files):
        options = pipeline.CheckOptions(arch=arch, cache=_cache(no_cache))
        built = pipeline.build_file(path, options, environment, lint=True)
        if isinstance(built, str):
            console.print(Text(f"{path}: input error", style="bold red"))
            console.print(Text(built), soft_wrap=True)
            status = ExitCode.BAD_INPUT
        else:
            console.print(Text(f"{path}: sound ({len(built)} kernels built)", style="green"))
    raise typer.Exit(int(status))


@app.command()
def schema(
    output: Annotated[Path | None, typer.Argument(help="write it here instead of printing it")] = None,
) -> None:
    """The JSON Schema of expectation files (for editors that validate YAML against a schema)."""
    text = json.dumps(json_schema(), indent=1, sort_keys=True) + "\n"
    if output is None:
        sys.stdout.write(text)
    else:
        output.write_text(text)


def _shard(text: str | None) -> tuple[int, int] | None:
    if text is None:
        return None
    k, _, n = text.partition("/")
    if not (k.isdigit() and n.isdigit() and 1 <= int(k) <= int(n)):
        raise typer.BadParameter(f"{text!r}: write K/N with 1 <= K <= N, e.g. 2/4", param_hint="--shard")
    return int(k), int(n)


def _cache(disabled: bool) -> CompileCache | None:
    return None if disabled else CompileCache(compile_cache.default_folder())


def _passes(disabled: bool) -> PassCounts | None:
    """ncu's passes per metric set, remembered in the cache folder (they shape how cases are grouped)."""
    return None if disabled else PassCounts.load(compile_cache.passes_file())


def _gpus(text: str | None) -> tuple[int, ...] | None:
    """--gpus: None for the default GPU; "all" for every GPU the driver reports; else a list of indices."""
    if text is None:
        return None
    if text.strip() == "all":
        count = gpu_count()
        if count == 0:
            raise typer.BadParameter("no GPU here", param_hint="--gpus")
        return tuple(range(count))
    parts = [part.strip() for part in text.split(",")]
    if not all(part.isdigit() for part in parts) or len(set(parts)) != len(parts):
        raise typer.BadParameter(
            f"{text!r}: write all, or distinct GPU indices such as 0,1", param_hint="--gpus"
        )
    return tuple(int(part) for part in parts)


def _check_files(files: list[Path], options: pipeline.CheckOptions) -> list[pipeline.FileResult]:
    """Every file's result; after Ctrl-C, those that finished, and the rest marked as not run. On a
    terminal a line under the output says what is being done; elsewhere nothing is added."""
    console = _console()
    with Progress(
        SpinnerColumn(), TextColumn("{task.description}"), console=console, transient=True
    ) as progress:
        if console.is_terminal:
            task = progress.add_task("starting")
            options = replace(options, on_progress=lambda line: progress.update(task, description=line))
        try:
            return pipeline.check_files(expand(files), options)
        except pipeline.Interrupted as interrupted:
            return interrupted.results


def expand(paths: list[Path]) -> list[Path]:
    """Folders stand for the expectation files in them."""
    expanded: list[Path] = []
    for path in paths:
        expanded += sorted(path.glob("*.yaml")) + sorted(path.glob("*.yml")) if path.is_dir() else [path]
    return expanded


def _console() -> Console:
    # Logs of CI jobs are not terminals: give tables room rather than rich's 80 columns.
    return Console() if sys.stdout.isatty() else Console(width=160)


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(int(ExitCode.NOT_MEASURABLE))
