"""The stages in order: spec -> build -> profile -> judge, for each expectation file."""

from __future__ import annotations

import shutil
import tempfile
import time
import zlib
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from ncuverify import __version__, metrics, profile, recording
from ncuverify.build import KernelBuild, build_spec, nvrtc_version
from ncuverify.cache import CompileCache
from ncuverify.environment import Gpu, detect_gpu, find_ncu, ncu_version
from ncuverify.errors import EnvironmentProblem, ExitCode, InputError
from ncuverify.judge import ClaimResult, Verdict, applies_to, judge, other_arch, skip_all
from ncuverify.recording import Provenance
from ncuverify.runner import PlannedCase
from ncuverify.spec import Claim, Spec, load
from ncuverify.static import is_static
from ncuverify.static import measurement_rows as static_rows


@dataclass(frozen=True)
class CheckOptions:
    arch: str | None = None  # build target; else the GPU's, else the file's
    ncu: profile.NcuOptions = field(default_factory=profile.NcuOptions)
    save_profile: Path | None = None  # record each file's profile under this folder
    from_profile: Path | None = None  # judge recorded profiles from this folder instead of profiling
    static_only: bool = False  # judge only the claims that need no GPU
    cache: CompileCache | None = None  # compile through this cache; None compiles every time
    shard: tuple[int, int] | None = None  # (K, N): judge only the K-th of N shares of the claims
    on_progress: Callable[[str], None] | None = None  # told what the run is doing, a line at a time


@dataclass(frozen=True)
class Environment:
    """What the machine can do, probed once per run."""

    gpu: Gpu | None
    ncu: str | None
    problem: str | None  # why profiler claims cannot be measured here

    @classmethod
    def probe(cls, ncu_executable: str) -> Environment:
        try:
            gpu = detect_gpu()
        except EnvironmentProblem as problem:
            return cls(None, None, str(problem))
        try:
            return cls(gpu, find_ncu(ncu_executable), None)
        except EnvironmentProblem as problem:
            return cls(gpu, None, str(problem))


@dataclass(frozen=True)
class FileResult:
    path: Path
    claims: list[ClaimResult]
    input_error: str | None = None
    seconds: float = 0.0
    provenance: Provenance | None = None  # where the profiler's figures come from
    replayed: bool = False  # the figures come from a recording, not from this run
    warnings: list[str] = field(default_factory=list)
    measurements: profile.Measurements | None = None  # everything measured: static facts and profiler
    spec: Spec | None = None  # the file as loaded; None where it could not be
    not_run: str | None = None  # why the file was not checked (the run was interrupted)

    def count(self, verdict: Verdict) -> int:
        return sum(1 for result in self.claims if result.verdict is verdict)


class Interrupted(Exception):
    """The run was interrupted (Ctrl-C); results holds every file, finished or marked not run."""

    def __init__(self, results: list[FileResult]) -> None:
        super().__init__("interrupted")
        self.results = results


def check_files(paths: Iterable[Path], options: CheckOptions) -> list[FileResult]:
    """Every file's result; on Ctrl-C, Interrupted with the files finished so far and the rest marked."""
    paths = list(paths)
    results: list[FileResult] = []
    try:
        environment = Environment.probe(options.ncu.executable)
        for path in paths:
            results.append(check_file(path, options, environment))
    except KeyboardInterrupt:
        reason = "the run was interrupted before this file was checked"
        results += [FileResult(path, [], not_run=reason) for path in paths[len(results) :]]
        raise Interrupted(results) from None
    return results


def check_file(path: Path, options: CheckOptions, environment: Environment) -> FileResult:
    started = time.monotonic()
    _say(options, f"{path.name}: reading")
    try:
        spec = load(path)
        if options.shard is not None:
            spec = share_of(spec, *options.shard)
        recorded = recording.load(options.from_profile, spec.path.stem) if options.from_profile else None
        arch = recorded.provenance.arch if recorded else target_arch(spec, options, environment)
        if arch is not None:
            check_metric_names(spec, arch, environment.ncu)
        _say(options, f"{path.name}: compiling")
        builds = build_spec(spec, arch, options.cache) if arch is not None else None
        outcome = _judge_file(spec, arch, builds, options, environment, recorded)
    except InputError as error:
        return FileResult(path, [], input_error=str(error), seconds=time.monotonic() - started)
    warnings = []
    if recorded is not None and builds is not None:
        warnings = [
            f"kernel {name} changed since it was recorded: its figures may be stale"
            for name in recording.changed_kernels(recorded, builds)
        ]
    return FileResult(
        path,
        _in_file_order(spec, outcome.results),
        seconds=time.monotonic() - started,
        provenance=outcome.provenance,
        replayed=recorded is not None,
        warnings=warnings,
        measurements=outcome.measurements,
        spec=spec,
    )


@dataclass(frozen=True)
class _Outcome:
    results: list[ClaimResult]
    provenance: Provenance | None = None
    measurements: profile.Measurements | None = None


def _judge_file(
    spec: Spec,
    arch: str | None,
    builds: dict[str, KernelBuild] | None,
    options: CheckOptions,
    environment: Environment,
    recorded: recording.Recording | None,
) -> _Outcome:
    """Every claim's verdict: static claims from the build, profiler claims from ncu or a recording."""
    applicable = [claim for claim in spec.content.claims if applies_to(claim, arch)]
    elsewhere = other_arch([claim for claim in spec.content.claims if claim not in applicable], arch)
    static_claims, profiler_claims = split_claims(applicable)
    if options.static_only:
        profiler_claims = []
    if builds is None:
        reason = f"{environment.problem or 'no GPU'}; and no architecture to build for: pass --arch or set 'arch' in the file"
        return _Outcome(elsewhere + skip_all(static_claims + profiler_claims, reason))
    measured = static_measurements(spec, builds, applicable)
    if not profiler_claims:
        return _Outcome(elsewhere + judge(static_claims, measured, arch), measurements=measured)
    try:
        if recorded is not None:
            profiled, provenance = replay(spec, builds, recorded), recorded.provenance
        else:
            profiled, provenance = measure(spec, builds, profiler_claims, options, environment)
    except EnvironmentProblem as problem:
        skipped = skip_all(profiler_claims, str(problem))
        return _Outcome(elsewhere + judge(static_claims, measured, arch) + skipped, measurements=measured)
    everything = measured.combined(profiled)
    results = judge(static_claims + profiler_claims, everything, arch)
    return _Outcome(elsewhere + results, provenance, everything)


def share_of(spec: Spec, k: int, n: int) -> Spec:
    """The file with only the claims of the k-th of n shares (1-based): the same on every machine."""
    kept = [c for c in spec.content.claims if zlib.crc32(f"{spec.path.stem}:{c.id}".encode()) % n == k - 1]
    return replace(spec, content=spec.content.model_copy(update={"claims": kept}))


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
        return build_spec(spec, arch, options.cache)
    except InputError as error:
        return str(error)


def check_metric_names(spec: Spec, arch: str, ncu: str | None = None) -> None:
    """Refuse, before anything runs, metric names that ncu does not know on arch's chip."""
    problems = []
    for claim in spec.content.claims:
        names = {ref.name for ref in claim.metric_refs() if profile.is_ncu_metric(ref)}
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


def static_measurements(
    spec: Spec, builds: dict[str, KernelBuild], claims: list[Claim]
) -> profile.Measurements:
    """The static facts of every case's kernel, as measurements, with the SASS counts the claims ask for."""
    patterns = [
        ref.sass_pattern for claim in claims for ref in claim.metric_refs() if ref.sass_pattern is not None
    ]
    cases = {name: case.kernel for name, case in spec.content.cases.items()}
    facts = {name: build.facts for name, build in builds.items()}
    return profile.Measurements(frame=static_rows(cases, facts, patterns))


def target_arch(spec: Spec, options: CheckOptions, environment: Environment) -> str | None:
    """--arch, else the GPU's own architecture, else the file's `arch` (for machines without a GPU)."""
    if options.arch is not None:
        return options.arch
    if environment.gpu is not None:
        return environment.gpu.arch
    return spec.content.arch


def measure(
    spec: Spec,
    builds: dict[str, KernelBuild],
    claims: list[Claim],
    options: CheckOptions,
    environment: Environment,
) -> tuple[profile.Measurements, Provenance]:
    """Profile the cases these claims read, asking for the metrics they read: one ncu process, and one
    more for the cases after each one that faulted or hung (it poisons or ends the process it ran in)."""
    if environment.problem is not None or environment.ncu is None or environment.gpu is None:
        raise EnvironmentProblem(environment.problem or "ncu is not available")
    ncu = replace(
        options.ncu,
        executable=environment.ncu,
        on_case=lambda case: _say(options, f"{spec.path.name}: profiling {case}"),
    )
    needed_cases, metrics = _needs(spec, claims)
    symbols = _symbols(spec, builds)
    keep_dir = options.save_profile / spec.path.stem if options.save_profile is not None else None
    runs: list[recording.Run] = []
    measured: list[profile.Measurements] = []
    with _work_dir(keep_dir) as work_dir:
        cubins = _write_cubins(spec, builds, needed_cases, work_dir)
        remaining = needed_cases
        while remaining:
            planned = [
                profile.planned_case(
                    n, spec.content.cases[n], builds[spec.content.cases[n].kernel], cubins[n]
                )
                for n in remaining
            ]
            run_dir = work_dir / f"run{len(runs)}" if runs else work_dir
            run = profile.run_ncu(run_dir, planned, metrics, ncu)
            profile.diagnose(run)
            status = _faults_named(run.status, planned, run_dir, ncu) or _runner_failure(run, remaining)
            runs.append(recording.Run(run.report, status, run.command))
            measured.append(_run_measurements(runs[-1], symbols))
            remaining = _to_run_again(status, measured[-1])
        provenance = _provenance(environment.gpu, ncu, runs[0].command, builds)
        if keep_dir is not None:
            recording.save(keep_dir, runs, provenance)
    return _combined(measured), provenance


def _faults_named(
    status: list[dict[str, object]], planned: list[PlannedCase], work_dir: Path, ncu: profile.NcuOptions
) -> list[dict[str, object]]:
    """Where a kernel's fault ended the process under ncu, the CUDA error it raises without ncu."""
    named = []
    for entry in status:
        if entry.get("context_lost") and "process ended" in str(entry.get("error")):
            case = next(c for c in planned if c.name == entry["case"])
            error = profile.name_the_fault(work_dir / f"fault-{case.name}", case, ncu.case_timeout_s)
            if error is not None:
                entry = {
                    **entry,
                    "error": f"{error} (run again without the profiler; under it: {entry['error']})",
                }
        named.append(entry)
    return named


def _say(options: CheckOptions, line: str) -> None:
    if options.on_progress is not None:
        options.on_progress(line)


def _to_run_again(status: list[dict[str, object]], measured: profile.Measurements) -> list[str]:
    """After a case poisoned or ended the process: the cases it kept from running or from being reported."""
    if not any(s.get("context_lost") for s in status):
        return []
    done = {str(s["case"]) for s in status}
    not_run = [str(case) for s in status for case in s.get("not_run", [])]  # type: ignore[attr-defined]
    return [*measured.unmeasured, *(case for case in not_run if case not in done)]


def _run_measurements(run: recording.Run, symbols: dict[str, str]) -> profile.Measurements:
    return profile.measurements(profile.parse_csv(run.report), run.status, symbols)


def _combined(parts: list[profile.Measurements]) -> profile.Measurements:
    """The measurements of every run of a file, as one."""
    measured = profile.Measurements.empty()
    for part in parts:
        measured = measured.combined(part)
    return measured


def _write_cubins(
    spec: Spec, builds: dict[str, KernelBuild], cases: list[str], work_dir: Path
) -> dict[str, Path]:
    """Each case's cubin, written once per kernel."""
    paths: dict[str, Path] = {}
    for name in cases:
        kernel = spec.content.cases[name].kernel
        path = work_dir / f"{kernel}.cubin"
        if not path.exists():
            path.write_bytes(builds[kernel].cubin)
        paths[name] = path
    return paths


def replay(spec: Spec, builds: dict[str, KernelBuild], recorded: recording.Recording) -> profile.Measurements:
    """The measurements of a recorded run, as if ncu had just produced them."""
    symbols = _symbols(spec, builds)
    return _combined([_run_measurements(run, symbols) for run in recorded.runs])


def _symbols(spec: Spec, builds: dict[str, KernelBuild]) -> dict[str, str]:
    return {name: builds[case.kernel].symbol for name, case in spec.content.cases.items()}


def _provenance(
    gpu: Gpu, ncu: profile.NcuOptions, command: list[str], builds: dict[str, KernelBuild]
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
        kernels={name: build.source_digest for name, build in builds.items()},
    )


@contextmanager
def _work_dir(keep_dir: Path | None) -> Iterator[Path]:
    if keep_dir is not None:
        keep_dir.mkdir(parents=True, exist_ok=True)
        yield keep_dir
        return
    with tempfile.TemporaryDirectory(prefix="ncuverify-") as scratch:
        yield Path(scratch)


def _needs(spec: Spec, claims: list[Claim]) -> tuple[list[str], set[str]]:
    """The cases (in file order) and the profiler metrics that the claims read."""
    refs = [ref for claim in claims for ref in claim.metric_refs()]
    cases = {ref.case for ref in refs} | {claim.control for claim in claims if claim.control}
    metrics = {ref.name for ref in refs if profile.is_ncu_metric(ref)}
    return [name for name in spec.content.cases if name in cases], metrics


def _runner_failure(run: profile.ProfileRun, cases: list[str]) -> list[dict[str, object]]:
    """The runner left no status: it never started. Every case fails with what it printed last."""
    lines = [line for line in (run.output + run.report).splitlines() if line.strip()]
    reason = f"the runner did not start (exit {run.returncode}): {lines[-1] if lines else 'no output'}"
    return [{"case": name, "ok": False, "error": reason} for name in cases]


def exit_code(results: Iterable[FileResult]) -> ExitCode:
    """2 for wrong input anywhere, else 1 for a failed, unevaluable or unexpectedly passing claim, else 3
    for skipped, else 0. An expected failure (xfailed) is no failure."""
    results = list(results)
    if any(r.input_error for r in results):
        return ExitCode.BAD_INPUT
    verdicts = [c.verdict for r in results for c in r.claims]
    if any(v in (Verdict.FAILED, Verdict.ERROR, Verdict.XPASSED) for v in verdicts):
        return ExitCode.CLAIM_FAILED
    if any(v is Verdict.SKIPPED for v in verdicts) or any(r.not_run for r in results):
        return ExitCode.NOT_MEASURABLE
    return ExitCode.OK
