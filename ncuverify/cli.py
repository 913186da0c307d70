"""The command line: parses options and calls the pipeline.

Whatever goes wrong ends in one line and the documented exit code, never a traceback: wrong input
(exit 2) names the file or option at fault; a bug in ncuverify (exit 4) names a new file that holds
its traceback. Output files and folders are checked before anything is compiled, so that a long run
is never lost to a path that cannot be written; and each output is written on its own, before the
terminal report, so that one that fails loses none of the others.
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
import stat
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn
from typer.core import TyperGroup

from ncuverify import audit as claims_audit
from ncuverify import baseline as baselines
from ncuverify import cache as compile_cache
from ncuverify import export, pipeline, report
from ncuverify.build import BuildLimits
from ncuverify.cache import CompileCache
from ncuverify.environment import gpu_count
from ncuverify.errors import ExitCode, InputError
from ncuverify.pipeline import internal_error_line
from ncuverify.profile import NcuOptions
from ncuverify.profile.schedule import PassCounts
from ncuverify.report import block_text, line_text
from ncuverify.results import FileResult, exit_code, worst
from ncuverify.spec import ARCH_PATTERN, Tolerance, expand_paths, json_schema
from ncuverify.text import one_line, printable

# The longest time limit an option may set: a week; anything longer is a typo or an attack.
MAX_SECONDS = 7 * 24 * 3600.0
# --shard K/N and --gpus: small numbers in ASCII digits (str.isdigit takes '²', which int() refuses).
MAX_SHARDS = 10000
_SHARD = re.compile(r"([0-9]{1,5})/([0-9]{1,5})")
_GPU_INDEX = re.compile(r"[0-9]{1,3}")
# A build target, as an expectation file's `arch` is written (sm_90, sm_90a, compute_80).


class _Guarded(TyperGroup):
    """The root command: what a command raises ends as one line and its exit code, never a traceback."""

    # typer hands every command its own Context, a subclass of the one the base class names
    def invoke(self, ctx: typer.Context) -> Any:  # type: ignore[override]
        try:
            return super().invoke(ctx)
        except (typer.Exit, typer.Abort, typer.TyperException, BrokenPipeError):
            raise  # typer's own ends (usage errors exit 2), and a reader of the output that went away
        except InputError as error:
            _console().print(block_text(error, "bold red"), soft_wrap=True)
            raise typer.Exit(int(ExitCode.BAD_INPUT)) from None
        except KeyboardInterrupt:
            print("interrupted", file=sys.stderr)
            raise typer.Exit(int(ExitCode.NOT_MEASURABLE)) from None
        except Exception as error:
            _say_internal_error(error)
            raise typer.Exit(int(ExitCode.INTERNAL_ERROR)) from None


def _say_internal_error(error: BaseException, what: str = "ncuverify") -> None:
    print(f"{what}: {internal_error_line(error)}", file=sys.stderr)


# --- option values -------------------------------------------------------------------------------------


def _seconds(value: float) -> float:
    """A time limit: finite, above 0, at most a week (nan and inf would never stop anything)."""
    if not (math.isfinite(value) and 0 < value <= MAX_SECONDS):
        raise typer.BadParameter(f"{value}: give a number of seconds above 0 and at most {MAX_SECONDS:.0f}")
    return value


def _arch(value: str | None) -> str | None:
    if value is not None and not re.fullmatch(ARCH_PATTERN, value, re.ASCII):
        raise typer.BadParameter(f"{one_line(repr(value))}: write a build target such as sm_90 or sm_90a")
    return value


app = typer.Typer(
    cls=_Guarded,
    add_completion=False,
    no_args_is_help=True,
    # Typer's own traceback shows local variables, which may hold secrets; _Guarded shows none.
    pretty_exceptions_enable=False,
    help="Check quantitative claims about CUDA kernels against Nsight Compute measurements.",
)


# Arguments and options shared by the commands.
Files = Annotated[
    list[Path], typer.Argument(help="expectation files (YAML), or folders of them", show_default=False)
]
Arch = Annotated[
    str | None,
    typer.Option(
        help="build for this architecture, e.g. sm_90 (default: the GPU's, else the file's)", callback=_arch
    ),
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
AllowInclude = Annotated[
    list[Path] | None,
    typer.Option(
        "--allow-include",
        help="a folder outside the project that kernels may include from (repeatable)",
        show_default=False,
    ),
]
CompileTimeout = Annotated[
    float, typer.Option(help="stop compiling one kernel source after this many seconds", callback=_seconds)
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
        typer.Option(
            help="stop an ncu process that makes no progress (a case, or ncu itself) for this many seconds",
            callback=_seconds,
        ),
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
    allow_include: AllowInclude = None,
    compile_timeout: CompileTimeout = 120.0,
) -> None:
    """Build, profile and judge every claim of the given files (expectation files, or folders of them).

    Exit codes: 0 every claim holds; 1 a claim failed or could not be evaluated, or a measure regressed
    against --baseline; 2 the input is wrong (an output that cannot be written too); 3 the claims could
    not be measured here (no GPU, no ncu, no counter access); 4 ncuverify itself failed (one line names
    the file that holds the traceback). The first in the order 4, 2, 1, 3 wins.
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
    shares = _shard(shard)
    chosen_gpus = _gpus(gpus)
    paths = expand_paths(files)
    outputs = {"--json": json_file, "--junit-xml": junit_xml, "--markdown": markdown}
    check_outputs(outputs, [*paths, *([baseline] if baseline is not None else [])])
    check_input_files([("--baseline", baseline)] if baseline is not None else [])
    check_profile_folders(save_profile, from_profile)
    limits = build_limits(allow_include, compile_timeout)
    overrides = _tolerances(tolerance or [])
    before = baselines.load(baseline) if baseline is not None else None
    console = _console()
    passes = _passes(no_cache)
    _print_warnings(console, passes.warnings if passes is not None else ())
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
        build=limits,
        passes=passes,
        gpus=chosen_gpus,
        explain=explain,
        shard=shares,
    )
    started = time.monotonic()
    results = _check_files(paths, options)
    code = exit_code(results)
    changes = None
    if before is not None:
        try:
            changes = baselines.compare(before, results, overrides)
        except Exception as error:  # a bug in the comparison: the results are still written and shown
            _say_internal_error(error, "--baseline")
            code = worst(code, ExitCode.INTERNAL_ERROR)
        if changes and any(change.worse for change in changes):
            code = worst(code, ExitCode.CLAIM_FAILED)
    written = write_results(console, results, code, outputs, _run_identity(shares, paths))
    shown = report.print_run(console, results, time.monotonic() - started, verbose)
    if changes is not None:
        report.print_changes(console, changes)
    raise typer.Exit(int(worst(code, written, shown)))


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
    allow_include: AllowInclude = None,
    compile_timeout: CompileTimeout = 120.0,
) -> None:
    """Check the files and save every measured value as a baseline for `check --baseline`.

    Exit codes as for check; the baseline is written whatever the verdicts.
    """
    paths = expand_paths(files)
    check_outputs({"": output}, paths)
    check_profile_folders(None, from_profile)
    options = pipeline.CheckOptions(
        arch=arch,
        ncu=NcuOptions(executable=ncu),
        from_profile=from_profile,
        cache=_cache(False),
        build=build_limits(allow_include, compile_timeout),
    )
    console = _console()
    started = time.monotonic()
    results = _check_files(paths, options)
    written = write_output(console, "", output, lambda path: baselines.save(results, path))
    shown = report.print_run(console, results, time.monotonic() - started, verbose=False)
    if written is ExitCode.OK:
        console.print(line_text(f"baseline written to {output}"), soft_wrap=True)
    raise typer.Exit(int(worst(exit_code(results), written, shown)))


@app.command()
def audit(
    files: Files,
    from_profile: FromProfile = None,
    markdown: Annotated[
        Path | None, typer.Option(help="also write the audit as Markdown to this file")
    ] = None,
    arch: Arch = None,
    ncu: Ncu = "ncu",
    allow_include: AllowInclude = None,
    compile_timeout: CompileTimeout = 120.0,
) -> None:
    """One row per documented claim: the document's figure, what this GPU measured, and whether it holds.

    Exit codes as for check.
    """
    paths = expand_paths(files)
    check_outputs({"--markdown": markdown}, paths)
    check_profile_folders(None, from_profile)
    options = pipeline.CheckOptions(
        arch=arch,
        ncu=NcuOptions(executable=ncu),
        from_profile=from_profile,
        cache=_cache(False),
        build=build_limits(allow_include, compile_timeout),
    )
    console = _console()
    results = _check_files(paths, options)
    rows, status = _audit_rows(console, results)
    if markdown is not None:
        provenance = claims_audit.provenance_of(results)
        replayed = any(r.replayed for r in results)

        def write_audit(path: Path) -> None:
            _write_text(path, claims_audit.markdown(rows, provenance, replayed))

        status = worst(status, write_output(console, "--markdown", markdown, write_audit))
    problems = [r for r in results if r.input_error is not None or r.internal_error is not None]
    status = worst(status, report.print_files(console, problems, verbose=False))
    console.print(claims_audit.table(rows))
    console.print(line_text(f"audit: {claims_audit.counts_line(rows)}"), soft_wrap=True)
    raise typer.Exit(int(worst(exit_code(results), status)))


def _audit_rows(
    console: Console, results: Sequence[FileResult]
) -> tuple[list[claims_audit.AuditRow], ExitCode]:
    """Every file's rows; a file whose rows cannot be made shows its internal error line instead."""
    rows: list[claims_audit.AuditRow] = []
    status = ExitCode.OK
    for result in results:
        try:
            rows += claims_audit.audit_rows([result])
        except Exception as error:  # a bug on this file's rows: the other files' rows are still audited
            line = f"{result.path}: {internal_error_line(error)}"
            console.print(line_text(line, "bold red"), soft_wrap=True)
            status = ExitCode.INTERNAL_ERROR
    return claims_audit.in_order(rows), status


@app.command()
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
    paths = expand_paths(files)
    options = pipeline.CheckOptions(
        arch=arch, cache=_cache(no_cache), build=build_limits(allow_include, compile_timeout)
    )
    console = _console()
    status = ExitCode.OK
    environment = pipeline.Environment.probe("ncu")
    for path in paths:
        try:
            built = pipeline.build_file(path, options, environment)
            report.print_build(console, path, built)
        except Exception as error:  # a bug on this file: the other files are still built
            console.print(line_text(f"{path}: {internal_error_line(error)}", "bold red"), soft_wrap=True)
            status = worst(status, ExitCode.INTERNAL_ERROR)
            continue
        if isinstance(built, str):
            status = worst(status, ExitCode.BAD_INPUT)
    raise typer.Exit(int(status))


cache_app = typer.Typer(
    no_args_is_help=True,
    help="The compile cache: kernels compiled once, until their source, headers, options or NVRTC change.",
)
app.add_typer(cache_app, name="cache")


@cache_app.command("clean")
def cache_clean() -> None:
    """Remove every compiled kernel, and the replay passes remembered, from the cache folder
    ($NCUVERIFY_CACHE_DIR, else ~/.cache/ncuverify). A folder that ncuverify did not make is left alone
    (exit 2)."""
    folder = compile_cache.default_folder()
    removed = CompileCache(folder).clean()  # InputError for a folder without ncuverify's marker
    _console().print(line_text(f"removed {removed} entries from {folder}"), soft_wrap=True)


@cache_app.command("where")
def cache_where() -> None:
    """Print the cache's folder."""
    print(printable(str(compile_cache.default_folder())))


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
    partial: Annotated[
        bool,
        typer.Option("--partial", help="merge what is there, saying which shards are missing"),
    ] = False,
) -> None:
    """Join the JSON results of the shards of a run (check --shard K/N --json) into one report and one
    exit code, as if one machine had run them all. Shards that are not one whole run (one missing or
    twice, another suite's) are refused (exit 2) unless --partial is given."""
    outputs = {"--json": json_file, "--junit-xml": junit_xml, "--markdown": markdown}
    check_outputs(outputs, results)
    check_input_files([("", path) for path in results])
    console = _console()
    shards = [export.read_shard(path) for path in results]
    merged, warnings = export.merge(shards, partial=partial)
    _print_warnings(console, warnings)
    code = exit_code(merged)
    written = write_results(console, merged, code, outputs, _merged_identity(shards, partial))
    shown = report.print_run(console, merged, sum(r.seconds for r in merged), verbose)
    raise typer.Exit(int(worst(code, written, shown)))


def _merged_identity(shards: Sequence[export.Shard], partial: bool) -> export.ShardOf | None:
    """A merged run is the whole (1/1) of its suite; a partial merge says which shares it lacks (or
    that it cannot tell: shards of earlier versions), so that it never passes for a whole run later."""
    identities = [shard.shard for shard in shards]
    known = [of for of in identities if of is not None]
    if not known:
        return export.ShardOf(
            1, 1, export.suite_digest([r.path for s in shards for r in s.results]), ("?/?",)
        )
    missing = {m for of in known for m in of.missing}
    if partial:
        missing |= {f"{k}/{known[0].n}" for k in range(1, known[0].n + 1)} - {
            f"{of.k}/{of.n}" for of in known
        }
        if None in identities:
            missing.add("?/?")
    return export.ShardOf(1, 1, known[0].suite, tuple(sorted(missing)))


def _run_identity(shares: tuple[int, int] | None, paths: Sequence[Path]) -> export.ShardOf:
    """Which share of which suite this run is, for --json (merge checks that shards make one run)."""
    k, n = shares or (1, 1)
    return export.ShardOf(k, n, export.suite_digest(paths))


@app.command()
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
    paths = expand_paths(files)
    options = pipeline.CheckOptions(
        arch=arch, cache=_cache(no_cache), build=build_limits(allow_include, compile_timeout)
    )
    console = _console()
    status = ExitCode.OK
    environment = pipeline.Environment.probe("ncu")
    for path in paths:
        try:
            built = pipeline.build_file(path, options, environment, lint=True)
        except Exception as error:  # a bug on this file: the other files are still linted
            console.print(line_text(f"{path}: {internal_error_line(error)}", "bold red"), soft_wrap=True)
            status = worst(status, ExitCode.INTERNAL_ERROR)
            continue
        if isinstance(built, str):
            console.print(line_text(f"{path}: input error", "bold red"), soft_wrap=True)
            console.print(block_text(built), soft_wrap=True)
            status = worst(status, ExitCode.BAD_INPUT)
        else:
            line = f"{path}: sound ({len(built)} kernels built)"
            console.print(line_text(line, "green"), soft_wrap=True)
            _print_warnings(console, pipeline.build_warnings(built))
    raise typer.Exit(int(status))


@app.command()
def schema(
    output: Annotated[Path | None, typer.Argument(help="write it here instead of printing it")] = None,
) -> None:
    """The JSON Schema of expectation files (for editors that validate YAML against a schema)."""
    if output is not None:
        check_outputs({"": output}, [])
    text = json.dumps(json_schema(), indent=1, sort_keys=True) + "\n"
    if output is None:
        sys.stdout.write(text)
    else:
        raise typer.Exit(int(write_output(_console(), "", output, lambda path: _write_text(path, text))))


# --- outputs -------------------------------------------------------------------------------------------


def check_outputs(outputs: Mapping[str, Path | None], inputs: Sequence[Path]) -> None:
    """Refuse, before anything runs, outputs (option -> path; "" for an argument) that could not be
    written, or would overwrite an input of the run or another output: InputError, a line each."""
    inputs_found = {_identity(path) for path in inputs}
    taken: dict[object, str] = {}
    problems = []
    for option, path in outputs.items():
        if path is None:
            continue
        identity = _identity(path)
        problem = _output_problem(path)
        if problem is None and identity in inputs_found:
            problem = "is an input of this run; refusing to overwrite it"
        if problem is None and identity in taken:
            problem = f"is also the output of {taken[identity] or 'the command'}"
        taken.setdefault(identity, option)
        if problem is not None:
            problems.append(f"{option}: {path}: {problem}" if option else f"{path}: {problem}")
    if problems:
        raise InputError("\n".join(printable(problem) for problem in problems))


def check_input_files(inputs: Sequence[tuple[str, Path]]) -> None:
    """Refuse input files ((option, path); "" for an argument) that exist but are not regular files:
    a FIFO would hang the reader, a device flood it. Where one does not exist its reader says so."""
    problems = []
    for option, path in inputs:
        try:
            regular = stat.S_ISREG(os.stat(path).st_mode)
        except (OSError, ValueError):
            continue
        if not regular:
            problems.append(
                f"{option}: {path}: not a regular file" if option else f"{path}: not a regular file"
            )
    if problems:
        raise InputError("\n".join(printable(problem) for problem in problems))


def _output_problem(path: Path) -> str | None:
    """Why path cannot be written as an output file, or None."""
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return _folder_problem(path.parent, "no such folder")
    except (OSError, ValueError) as error:
        return f"cannot use it ({_reason(error)})"
    if stat.S_ISDIR(mode):
        return "is a folder"
    if not os.access(path, os.W_OK):
        return "is not writable"
    return None


def _folder_problem(folder: Path, absent: str) -> str | None:
    """Why files cannot be made in folder (absent: what to say where it does not exist), or None."""
    try:
        mode = os.stat(folder).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return f"{absent} {folder}"
    except (OSError, ValueError) as error:
        return f"cannot use {folder} ({_reason(error)})"
    if not stat.S_ISDIR(mode):
        return f"{folder} is not a folder"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"cannot write in {folder}"
    return None


def check_profile_folders(save_profile: Path | None, from_profile: Path | None) -> None:
    """--save-profile must be a folder, or one that can be made; --from-profile an existing folder."""
    problems = []
    if save_profile is not None:
        problem = _folder_to_make_problem(save_profile)
        if problem is not None:
            problems.append(f"--save-profile: {save_profile}: {problem}")
    if from_profile is not None:
        problem = _folder_to_read_problem(from_profile)
        if problem is not None:
            problems.append(f"--from-profile: {from_profile}: {problem}")
    if problems:
        raise InputError("\n".join(printable(problem) for problem in problems))


def _folder_to_make_problem(folder: Path) -> str | None:
    try:
        mode = os.stat(folder).st_mode
    except (FileNotFoundError, NotADirectoryError):
        existing = next((p for p in folder.absolute().parents if os.path.lexists(p)), Path("/"))
        problem = _folder_problem(existing, "no such folder")
        return f"cannot make it: {problem}" if problem is not None else None
    except (OSError, ValueError) as error:
        return f"cannot use it ({_reason(error)})"
    if not stat.S_ISDIR(mode):
        return "is not a folder"
    if not os.access(folder, os.W_OK | os.X_OK):
        return "cannot write in it"
    return None


def _folder_to_read_problem(folder: Path) -> str | None:
    try:
        mode = os.stat(folder).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return "no such folder"
    except (OSError, ValueError) as error:
        return f"cannot use it ({_reason(error)})"
    if not stat.S_ISDIR(mode):
        return "is not a folder"
    if not os.access(folder, os.R_OK | os.X_OK):
        return "cannot read it"
    return None


def _identity(path: Path) -> object:
    """What makes two paths the same file: device and inode where it exists (hard links, symbolic
    links), else the path resolved."""
    try:
        found = os.stat(path)
    except (OSError, ValueError):
        return os.path.realpath(path)
    return (found.st_dev, found.st_ino)


def _reason(error: Exception) -> str:
    return (error.strerror if isinstance(error, OSError) else None) or str(error)


def write_results(
    console: Console,
    results: Sequence[FileResult],
    code: ExitCode,
    outputs: Mapping[str, Path | None],
    identity: export.ShardOf | None = None,
) -> ExitCode:
    """Each output of a run written on its own: one that fails loses none of the others."""
    renderers: dict[str, Callable[[], str]] = {
        "--json": lambda: export.to_json(results, code, shard=identity),
        "--junit-xml": lambda: export.to_junit(results),
        "--markdown": lambda: export.to_markdown(results),
    }
    written = [
        write_output(console, option, path, functools.partial(_write_rendered, render=renderers[option]))
        for option, path in outputs.items()
        if path is not None
    ]
    return worst(*written)


def write_output(console: Console, option: str, path: Path, write: Callable[[Path], None]) -> ExitCode:
    """write(path), one line if it fails: BAD_INPUT where the file cannot be written (a full disk, a
    folder gone), INTERNAL_ERROR where ncuverify fails to make its content."""
    try:
        write(path)
    except OSError as error:
        where = f"{option}: {path}" if option else str(path)
        console.print(line_text(f"{where}: cannot write it ({_reason(error)})", "bold red"), soft_wrap=True)
        return ExitCode.BAD_INPUT
    except Exception as error:  # a bug while making this output: the others are still written
        _say_internal_error(error, option or str(path))
        return ExitCode.INTERNAL_ERROR
    return ExitCode.OK


def _write_rendered(path: Path, render: Callable[[], str]) -> None:
    _write_text(path, render())


def _write_text(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8", errors="backslashreplace")


# --- option values -------------------------------------------------------------------------------------


def build_limits(allow_include: Sequence[Path] | None, timeout_s: float) -> BuildLimits:
    """--allow-include folders (each must be an existing folder) and --compile-timeout, for the build."""
    roots: list[Path] = []
    problems = []
    for folder in allow_include or []:
        problem = _folder_to_read_problem(folder)
        if problem is not None:
            problems.append(f"--allow-include: {folder}: {problem}")
        else:
            roots.append(folder.resolve())
    if problems:
        raise InputError("\n".join(printable(problem) for problem in problems))
    return BuildLimits(allowed_roots=tuple(dict.fromkeys(roots)), timeout_s=timeout_s)


def _tolerances(texts: Sequence[str]) -> dict[str, Tolerance]:
    return dict(baselines.parse_tolerance(text) for text in texts)


def _shard(text: str | None) -> tuple[int, int] | None:
    if text is None:
        return None
    matched = _SHARD.fullmatch(text.strip())
    if matched is None or not 1 <= int(matched[1]) <= int(matched[2]) <= MAX_SHARDS:
        raise typer.BadParameter(
            f"{one_line(repr(text))}: write K/N with 1 <= K <= N <= {MAX_SHARDS}, e.g. 2/4",
            param_hint="--shard",
        )
    return int(matched[1]), int(matched[2])


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
    if not all(_GPU_INDEX.fullmatch(part) for part in parts) or len(set(parts)) != len(parts):
        raise typer.BadParameter(
            f"{one_line(repr(text))}: write all, or distinct GPU indices such as 0,1", param_hint="--gpus"
        )
    return tuple(int(part) for part in parts)


def _print_warnings(console: Console, warnings: Sequence[str]) -> None:
    for warning in warnings:
        console.print(line_text(f"warning: {warning}", "bold yellow"), soft_wrap=True)


def _check_files(files: list[Path], options: pipeline.CheckOptions) -> list[FileResult]:
    """Every file's result; after Ctrl-C, those that finished, and the rest marked as not run. On a
    terminal a line under the output says what is being done; elsewhere nothing is added."""
    console = _console()
    with Progress(
        SpinnerColumn(), TextColumn("{task.description}", markup=False), console=console, transient=True
    ) as progress:
        if console.is_terminal:
            task = progress.add_task("starting")
            options = replace(
                options, on_progress=lambda line: progress.update(task, description=one_line(line))
            )
        try:
            return pipeline.check_files(files, options)
        except pipeline.Interrupted as interrupted:
            return interrupted.results


def _console() -> Console:
    # Logs of CI jobs are not terminals: give tables room rather than rich's 80 columns.
    return Console() if sys.stdout.isatty() else Console(width=160)


def main() -> None:
    """The `ncuverify` command. What escapes the commands' own handling (see _Guarded) still ends in
    one line: exit 3 on Ctrl-C, 4 on a bug."""
    try:
        app()
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(int(ExitCode.NOT_MEASURABLE))
    except Exception as error:
        _say_internal_error(error)
        sys.exit(int(ExitCode.INTERNAL_ERROR))
