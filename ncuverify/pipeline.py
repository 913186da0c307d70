"""The stages in order: spec -> build -> profile -> judge. Each file is loaded, built and judged on its
static facts; then the profiler claims of all files are profiled in one go (`session`) and judged;
then failed claims on memory are explained. A bug that strikes while one file is handled is that
file's internal error: the other files are still judged."""

from __future__ import annotations

import concurrent.futures
import os
import platform
import shutil
import tempfile
import time
import traceback
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from ncuverify import __version__, explain, metrics, profile
from ncuverify.build import BuildLimits, KernelBuild, build_spec, is_static, nvrtc_version
from ncuverify.build import measurement_rows as static_rows
from ncuverify.cache import CompileCache
from ncuverify.environment import Gpu, detect_gpu, find_ncu, gpu_count, ncu_version
from ncuverify.errors import EnvironmentProblem, InputError
from ncuverify.explain import Explanation
from ncuverify.judge import applies_to, judge, other_arch, skip_all
from ncuverify.measurements import Measurements
from ncuverify.profile import explain_pass, per_file, plan, recording, session
from ncuverify.profile.schedule import PassCounts
from ncuverify.provenance import Provenance
from ncuverify.results import ClaimResult, FileKey, FileResult, Verdict, run_keys
from ncuverify.spec import Claim, Spec, load, share_of
from ncuverify.text import one_line, printable

# How much of an unexpected exception's message its one line shows; the traceback file has it all.
_MAX_INTERNAL_MESSAGE = 300


@dataclass(frozen=True)
class CheckOptions:
    arch: str | None = None  # build target; else the GPU's, else the file's
    ncu: profile.NcuOptions = field(default_factory=profile.NcuOptions)
    save_profile: Path | None = None  # record the run's profile in this folder
    keep_report: bool = False  # with save_profile: keep ncu's .ncu-rep reports too
    from_profile: Path | None = None  # judge a recorded profile from this folder instead of profiling
    static_only: bool = False  # judge only the claims that need no GPU
    cache: CompileCache | None = None  # compile through this cache; None compiles every time
    build: BuildLimits = field(default_factory=BuildLimits)  # what kernels may include; build time limit
    passes: PassCounts | None = None  # ncu's passes per metric set, remembered between runs
    gpus: tuple[int, ...] | None = None  # profile on these GPUs; None: the first
    explain: bool = True  # profile failing memory claims again for ncu's rules and source lines
    shard: tuple[int, int] | None = None  # (K, N): judge only the K-th of N shares of the claims
    on_progress: Callable[[str], None] | None = None  # told what the run is doing, a line at a time


@dataclass(frozen=True)
class Environment:
    """What the machine can do, probed once per run."""

    gpu: Gpu | None
    ncu: str | None
    problem: str | None  # why profiler claims cannot be measured here
    gpu_count: int = 0

    @classmethod
    def probe(cls, ncu_executable: str) -> Environment:
        try:
            gpu = detect_gpu()
        except EnvironmentProblem as problem:
            return cls(None, None, str(problem))
        try:
            return cls(gpu, find_ncu(ncu_executable), None, gpu_count())
        except EnvironmentProblem as problem:
            return cls(gpu, None, str(problem), gpu_count())


class Interrupted(Exception):
    """The run was interrupted (Ctrl-C); results holds every file, judged as far as it got."""

    def __init__(self, results: list[FileResult]) -> None:
        super().__init__("interrupted")
        self.results = results


@dataclass(frozen=True)
class _Prepared:
    """A file loaded, built and judged on its static facts; its profiler claims wait for the run's ncu."""

    key: FileKey  # the file's identity in the run
    path: Path
    spec: Spec
    arch: str | None
    builds: dict[str, KernelBuild] | None
    judged: list[ClaimResult]  # claims judged already: static facts, other architectures, skipped
    waiting: list[Claim]  # claims on the profiler
    static: Measurements
    started: float
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Profiled:
    """What the run's profile gave: measurements per file key, where they come from, or why not."""

    measured: dict[str, Measurements] = field(default_factory=dict)
    provenance: Provenance | None = None
    replayed: bool = False
    problem: str | None = None  # no profile: the profiler claims are skipped with this reason
    input_error: str | None = None  # ncu refused what the claims asked for
    internal_error: str | None = None  # ncuverify failed while profiling: every waiting file's line
    # file key -> its line, where ncuverify failed to split that file's measurements out of the profile
    internal_errors: dict[str, str] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()  # for every profiled file


def check_files(
    paths: Iterable[Path], options: CheckOptions, environment: Environment | None = None
) -> list[FileResult]:
    """Every file's result. Static claims are judged as each file is built; the profiler claims of all
    files are then profiled together. An unexpected exception while one file is prepared, split out of
    the profile or judged is that file's internal error; the others are still judged. On Ctrl-C,
    Interrupted with every file judged as far as it got. The environment is probed unless given."""
    paths = list(paths)
    keys = run_keys(paths)
    prepared: list[_Prepared | FileResult] = []
    try:
        environment = environment or Environment.probe(options.ncu.executable)
        _prepare_all(paths, keys, options, environment, prepared)
        waiting = [p for p in prepared if isinstance(p, _Prepared) and p.waiting]
        with _work_dir(options.save_profile) as work_dir:
            profiled = _profile_isolated(waiting, options, environment, work_dir)
            results = [_finish_isolated(p, profiled) for p in prepared]
            return _explained_isolated(results, waiting, profiled, options, environment, work_dir)
    except KeyboardInterrupt:
        reason = "the run was interrupted before this file was checked"
        interrupted = _Profiled(problem="the run was interrupted before these claims were profiled")
        finished = [_finish_isolated(p, interrupted) for p in prepared]
        later = zip(paths[len(prepared) :], keys[len(prepared) :], strict=True)
        finished += [FileResult(path, [], not_run=reason, key=key.name) for path, key in later]
        raise Interrupted(finished) from None


def check_file(path: Path, options: CheckOptions, environment: Environment | None = None) -> FileResult:
    """One file's result: a run of one file."""
    return check_files([path], options, environment)[0]


def _prepare_all(
    paths: list[Path],
    keys: list[FileKey],
    options: CheckOptions,
    environment: Environment,
    prepared: list[_Prepared | FileResult],
) -> None:
    """Every file prepared, appended to prepared in order. Files are built side by side: a build waits
    on its compiler and disassembler processes, so threads keep every core busy. On Ctrl-C, prepared
    holds the files before the first unfinished one; those still compiling stop within their limit."""
    workers = max(1, min(len(paths), os.cpu_count() or 1))
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ncuverify-build")
    try:
        futures = [
            pool.submit(_prepare_isolated, path, key, options, environment)
            for path, key in zip(paths, keys, strict=True)
        ]
        for future in futures:
            prepared.append(future.result())
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


def _prepare(
    path: Path, key: FileKey, options: CheckOptions, environment: Environment
) -> _Prepared | FileResult:
    """Load, build and judge the static claims of one file; a FileResult if nothing is left to profile."""
    started = time.monotonic()
    _say(options, f"{path.name}: reading")
    try:
        spec = load(path)
        if options.shard is not None:
            spec = share_of(spec, *options.shard)
        from_profile = options.from_profile
        provenance = recording.load_provenance(from_profile, key) if from_profile else None
        arch = provenance.arch if provenance else target_arch(spec, options, environment)
        if arch is not None:
            check_metric_names(spec, arch, environment.ncu)
        _say(options, f"{path.name}: compiling")
        builds = build_spec(spec, arch, options.cache, options.build) if arch is not None else None
    except InputError as error:
        return FileResult(path, [], input_error=str(error), seconds=time.monotonic() - started, key=key.name)
    applicable = [claim for claim in spec.content.claims if applies_to(claim, arch)]
    judged = other_arch([claim for claim in spec.content.claims if claim not in applicable], arch)
    static_claims, profiler_claims = split_claims(applicable)
    if options.static_only:
        profiler_claims = []
    if builds is None:
        reason = f"{environment.problem or 'no GPU'}; and no architecture to build for: pass --arch or set 'arch' in the file"
        judged += skip_all(static_claims + profiler_claims, reason)
        return _Prepared(key, path, spec, arch, None, judged, [], Measurements.empty(), started)
    static = static_measurements(spec, builds, applicable)
    judged += judge(static_claims, static, arch)
    warnings = build_warnings(builds)
    if provenance is not None:
        warnings += [
            f"kernel {name} changed since it was recorded: its figures may be stale"
            for name in recording.changed_kernels(provenance, builds, key.name)
        ]
    return _Prepared(key, path, spec, arch, builds, judged, profiler_claims, static, started, warnings)


def _prepare_isolated(
    path: Path, key: FileKey, options: CheckOptions, environment: Environment
) -> _Prepared | FileResult:
    try:
        return _prepare(path, key, options, environment)
    except Exception as error:  # a bug, not the file's fault: the other files go on
        return FileResult(path, [], internal_error=internal_error_line(error), key=key.name)


def build_warnings(builds: dict[str, KernelBuild]) -> list[str]:
    """What the builds warn of (a damaged cache entry rebuilt, ...), each once: kernels compiled
    together share their warnings."""
    return list(dict.fromkeys(w for build in builds.values() for w in getattr(build, "warnings", ())))


def _profile_isolated(
    waiting: list[_Prepared], options: CheckOptions, environment: Environment, work_dir: Path
) -> _Profiled:
    try:
        return _profile(waiting, options, environment, work_dir)
    except Exception as error:  # a bug while profiling: every waiting file's, their static verdicts kept
        return _Profiled(internal_error=internal_error_line(error))


def _profile(
    waiting: list[_Prepared], options: CheckOptions, environment: Environment, work_dir: Path
) -> _Profiled:
    """The profile of every waiting file: replayed from a recording, or from one run of ncu per group."""
    if not waiting:
        return _Profiled()
    files = _file_cases(waiting)
    keys = [p.key.name for p in waiting]
    try:
        if options.from_profile is not None:
            recorded = recording.load(options.from_profile, [p.key for p in waiting])
            symbols = per_file.symbols_of(files)
            measured, failed = _per_file(
                lambda some: per_file.measurements_by_file(recorded.runs, some, symbols), keys
            )
            return _Profiled(measured, recorded.provenance, replayed=True, internal_errors=failed)
        gpu = _usable_gpu(environment)
        settings = _settings(options, environment)
        runs, everything = session.profile_files(files, work_dir, settings)
        warnings = _remember_passes(options.passes)
        provenance = _provenance(gpu, settings.ncu, runs[0].command, files)
        if options.save_profile is not None:
            recording.save(work_dir, runs, provenance)
        measured, failed = _per_file(lambda some: per_file.by_file(everything, some), keys)
        return _Profiled(measured, provenance, internal_errors=failed, warnings=warnings)
    except EnvironmentProblem as problem:
        return _Profiled(problem=str(problem))
    except InputError as error:
        return _Profiled(input_error=str(error))


def _per_file(
    split: Callable[[list[str]], dict[str, Measurements]], keys: list[str]
) -> tuple[dict[str, Measurements], dict[str, str]]:
    """split(keys) in one go; where that fails unexpectedly, each key alone, so that one file's failure
    is that file's internal error (key -> its line) and the other files keep their measurements."""
    try:
        return split(keys), {}
    except (EnvironmentProblem, InputError):
        raise
    except Exception:
        pass  # found again below, file by file
    measured: dict[str, Measurements] = {}
    failed: dict[str, str] = {}
    for key in keys:
        try:
            measured.update(split([key]))
        except (EnvironmentProblem, InputError):
            raise
        except Exception as error:
            failed[key] = internal_error_line(error)
    return measured, failed


def _remember_passes(passes: PassCounts | None) -> tuple[str, ...]:
    """Save ncu's passes per metric set for the next run; a cache folder that cannot take them costs
    the next run a guess, not this run's measurements."""
    if passes is None:
        return ()
    try:
        passes.save()
    except OSError as error:
        return (f"ncu's passes per metric set could not be remembered ({error.strerror or error})",)
    return ()


def _file_cases(waiting: list[_Prepared]) -> list[plan.FileCases]:
    return [plan.FileCases(p.key.name, p.spec, p.builds or {}, p.waiting) for p in waiting]


def _usable_gpu(environment: Environment) -> Gpu:
    if environment.problem is not None or environment.ncu is None or environment.gpu is None:
        raise EnvironmentProblem(environment.problem or "ncu is not available")
    return environment.gpu


def _settings(options: CheckOptions, environment: Environment) -> session.Settings:
    gpus = options.gpus or (environment.gpu.index if environment.gpu else 0,)
    missing = [g for g in gpus if g >= max(environment.gpu_count, 1)]
    if missing:
        raise InputError(f"--gpus: no GPU {missing[0]} here (the driver reports {environment.gpu_count})")
    return session.Settings(
        ncu=replace(options.ncu, executable=environment.ncu or options.ncu.executable),
        gpus=tuple(gpus),
        passes=options.passes,
        keep_report=options.keep_report,
        say=options.on_progress,
    )


def _finish_isolated(prepared: _Prepared | FileResult, profiled: _Profiled) -> FileResult:
    if isinstance(prepared, FileResult):
        return prepared
    try:
        return _finish(prepared, profiled)
    except Exception as error:  # a bug while judging this file: its static verdicts are kept
        return FileResult(
            prepared.path,
            list(prepared.judged),
            internal_error=internal_error_line(error),
            seconds=time.monotonic() - prepared.started,
            warnings=prepared.warnings,
            spec=prepared.spec,
            key=prepared.key.name,
        )


def _finish(prepared: _Prepared, profiled: _Profiled) -> FileResult:
    """The file's result: its profiler claims judged on the run's profile (or skipped, with why)."""
    results = list(prepared.judged)
    measured = prepared.static
    internal_error = None
    warnings = list(prepared.warnings)
    if prepared.waiting:
        if profiled.input_error is not None:
            return FileResult(
                prepared.path, [], input_error=profiled.input_error, spec=prepared.spec, key=prepared.key.name
            )
        internal_error = profiled.internal_errors.get(prepared.key.name, profiled.internal_error)
        warnings += profiled.warnings
        if internal_error is not None:
            results += skip_all(
                prepared.waiting, "not profiled: ncuverify failed (its internal error says how)"
            )
        elif profiled.replayed and prepared.key.name not in profiled.measured:
            missing = f"the recording holds no case of {prepared.path.name}"
            return FileResult(
                prepared.path, [], input_error=missing, spec=prepared.spec, key=prepared.key.name
            )
        elif prepared.key.name in profiled.measured:
            measured = prepared.static.combined(profiled.measured[prepared.key.name])
            results += judge(prepared.waiting, measured, prepared.arch)
        else:
            results += skip_all(prepared.waiting, profiled.problem or "not profiled")
    return FileResult(
        prepared.path,
        _in_file_order(prepared.spec, results),
        internal_error=internal_error,
        seconds=time.monotonic() - prepared.started,
        provenance=profiled.provenance if prepared.waiting else None,
        replayed=profiled.replayed and bool(prepared.waiting),
        warnings=warnings,
        measurements=measured,
        spec=prepared.spec,
        key=prepared.key.name,
    )


def _explained_isolated(
    results: list[FileResult],
    waiting: list[_Prepared],
    profiled: _Profiled,
    options: CheckOptions,
    environment: Environment,
    work_dir: Path,
) -> list[FileResult]:
    try:
        return _explained(results, waiting, profiled, options, environment, work_dir)
    except Exception as error:  # a bug while explaining: the files with failed claims keep their verdicts
        line = internal_error_line(error)
        profiled_paths = {p.path for p in waiting}
        return [
            replace(r, internal_error=r.internal_error or line)
            if r.path in profiled_paths and r.count(Verdict.FAILED)
            else r
            for r in results
        ]


def _explained(
    results: list[FileResult],
    waiting: list[_Prepared],
    profiled: _Profiled,
    options: CheckOptions,
    environment: Environment,
    work_dir: Path,
) -> list[FileResult]:
    """The results, with what ncu says about each failed claim on global or shared memory: from the
    recording when replaying, else from a second pass over the failing cases."""
    wanted = _to_explain(results, {p.path: p.key.name for p in waiting})
    if not wanted or not (options.explain or profiled.replayed):
        return results
    try:
        if profiled.replayed:
            root = options.from_profile or work_dir
            keys = [p.key for p in waiting]
            found = {}  # a recording of the run, or a folder of per-file recordings
            for folder in (root, *(root / key.legacy for key in keys)):
                recorded = explain_pass.recorded_explanations(folder).items()
                found.update({recording.renamed(name, keys): explanation for name, explanation in recorded})
        else:
            _say(options, f"explaining {len(wanted)} failed claim(s)")
            cases = {case: topic for case, topic in wanted.values()}
            found = explain_pass.explain_cases(
                cases, _file_cases(waiting), work_dir, _settings(options, environment)
            )
    except (EnvironmentProblem, InputError) as problem:
        unexplained = {path for path, _ in wanted}
        if profiled.replayed and isinstance(problem, InputError):  # a damaged recording is wrong input
            return [replace(r, input_error=str(problem)) if r.path in unexplained else r for r in results]
        warning = f"no explanation from ncu: {problem}"
        return [replace(r, warnings=[*r.warnings, warning]) if r.path in unexplained else r for r in results]
    return [_with_explanations_isolated(r, wanted, found) for r in results]


def _with_explanations_isolated(
    result: FileResult, wanted: dict[tuple[Path, str], tuple[str, str]], found: dict[str, Explanation]
) -> FileResult:
    try:
        return _with_explanations(result, wanted, found)
    except Exception as error:
        return replace(result, internal_error=result.internal_error or internal_error_line(error))


def _to_explain(results: list[FileResult], keys: dict[Path, str]) -> dict[tuple[Path, str], tuple[str, str]]:
    """(file, claim id) -> (qualified case, topic) for each failed profiler claim on global or shared memory."""
    wanted = {}
    for result in results:
        for claim_result in result.claims:
            claim = claim_result.claim
            refs = [ref for ref in claim.metric_refs() if plan.is_ncu_metric(ref)]
            topic = explain.topic_of(ref.name for ref in refs)
            if claim_result.verdict is Verdict.FAILED and topic is not None and result.path in keys:
                # the claim's own case, else (all its metrics name theirs) the case of its first one
                case = claim.case or refs[0].case
                wanted[result.path, claim.id] = (plan.qualified(keys[result.path], case), topic)
    return wanted


def _with_explanations(
    result: FileResult, wanted: dict[tuple[Path, str], tuple[str, str]], found: dict[str, Explanation]
) -> FileResult:
    explanations = {
        claim_id: found[case]
        for (path, claim_id), (case, _) in wanted.items()
        if path == result.path and case in found
    }
    return replace(result, explanations=explanations) if explanations else result


def build_file(
    path: Path, options: CheckOptions, environment: Environment, lint: bool = False
) -> dict[str, KernelBuild] | str:
    """The kernels of one file, built; or why they could not be. With lint, the metric names are
    checked against the target chip's list too."""
    try:
        spec = load(path)
        arch = target_arch(spec, options, environment)
        if arch is None:
            return "no architecture to build for: pass --arch or set 'arch' in the file"
        if lint:
            check_metric_names(spec, arch, environment.ncu or shutil.which(options.ncu.executable))
        return build_spec(spec, arch, options.cache, options.build)
    except InputError as error:
        return str(error)


def check_metric_names(spec: Spec, arch: str, ncu: str | None = None) -> None:
    """Refuse, before anything runs, metric names that ncu does not know on arch's chip."""
    problems = []
    for claim in spec.content.claims:
        names = {ref.name for ref in claim.metric_refs() if plan.is_ncu_metric(ref)}
        for name, suggestion in metrics.unknown(names, arch, ncu).items():
            hint = f" (did you mean {suggestion}?)" if suggestion else ""
            problems.append(f"{spec.path}: claim {claim.id}: ncu knows no metric {name} on {arch}{hint}")
    if problems:
        raise InputError("\n".join(problems))


def split_claims(claims: list[Claim]) -> tuple[list[Claim], list[Claim]]:
    """Claims that read only static facts (no GPU needed), and the rest."""
    static = [c for c in claims if all(is_static(ref) for ref in c.metric_refs())]
    return static, [c for c in claims if c not in static]


def _in_file_order(spec: Spec, results: list[ClaimResult]) -> list[ClaimResult]:
    position = {claim.id: index for index, claim in enumerate(spec.content.claims)}
    return sorted(results, key=lambda result: position[result.claim.id])


def static_measurements(spec: Spec, builds: dict[str, KernelBuild], claims: list[Claim]) -> Measurements:
    """The static facts of every case's kernel, as measurements, with the SASS counts the claims ask for."""
    patterns = [
        ref.sass_pattern for claim in claims for ref in claim.metric_refs() if ref.sass_pattern is not None
    ]
    cases = {name: case.kernel for name, case in spec.content.cases.items()}
    facts = {name: build.facts for name, build in builds.items()}
    return Measurements(frame=static_rows(cases, facts, patterns))


def target_arch(spec: Spec, options: CheckOptions, environment: Environment) -> str | None:
    """--arch, else the GPU's own architecture, else the file's `arch` (for machines without a GPU)."""
    if options.arch is not None:
        return options.arch
    if environment.gpu is not None:
        return environment.gpu.arch
    return spec.content.arch


def _provenance(
    gpu: Gpu, ncu: profile.NcuOptions, command: list[str], files: list[plan.FileCases]
) -> Provenance:
    major, minor = nvrtc_version()
    return Provenance(
        recorded_at=recording.now(),
        gpu=gpu.name,
        arch=gpu.arch,
        nvidia_driver=recording.nvidia_driver_version(),
        cuda_driver=gpu.driver_version,
        ncu_version=ncu_version(ncu.executable),
        nvrtc_version=f"{major}.{minor}",
        ncuverify_version=__version__,
        clock_control=ncu.clock_control,
        cache_control=ncu.cache_control,
        ncu_command=command,
        kernels={
            plan.qualified(file.key, name): build.source_digest
            for file in files
            for name, build in file.builds.items()
        },
    )


@contextmanager
def _work_dir(keep_dir: Path | None) -> Iterator[Path]:
    if keep_dir is not None:
        try:
            keep_dir.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise InputError(
                f"{printable(str(keep_dir))}: cannot make the folder for the profile ({error.strerror})"
            ) from None
        yield keep_dir
        return
    # A scratch folder that cannot be removed to the last file must not cost the run its results.
    with tempfile.TemporaryDirectory(prefix="ncuverify-", ignore_cleanup_errors=True) as scratch:
        yield Path(scratch)


def _say(options: CheckOptions, line: str) -> None:
    if options.on_progress is not None:
        options.on_progress(line)


def internal_error_line(error: BaseException) -> str:
    """The one line that stands for a bug in ncuverify: what was raised, made printable and short, and
    a new file that holds its traceback, to report it with."""
    try:
        message = one_line(str(error))
    except Exception:  # an exception that cannot even say what it is
        message = "(its message cannot be shown)"
    if len(message) > _MAX_INTERNAL_MESSAGE:
        message = message[:_MAX_INTERNAL_MESSAGE] + "..."
    what = one_line(type(error).__name__) + (f": {message}" if message else "")
    try:
        saved = _save_traceback(error)
    except OSError as problem:
        return (
            f"internal error: {what}, please report it (its traceback could not be saved: {problem.strerror})"
        )
    return f"internal error: {what}, please report it with {saved}"


def _save_traceback(error: BaseException) -> str:
    """A new file (readable by its owner only) holding the traceback of error; its path."""
    handle, name = tempfile.mkstemp(prefix="ncuverify-internal-", suffix=".txt")
    with os.fdopen(handle, "w", encoding="utf-8", errors="backslashreplace") as file:
        file.write(f"ncuverify {__version__}, Python {platform.python_version()}\n")
        file.write(printable("".join(traceback.format_exception(error))))
    return name
