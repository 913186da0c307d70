"""The stages in order: spec -> build -> profile -> judge, for each expectation file."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from ncuverify import profile
from ncuverify.build import KernelBuild, build_spec
from ncuverify.environment import Gpu, detect_gpu, find_ncu
from ncuverify.errors import EnvironmentProblem, ExitCode, InputError
from ncuverify.judge import ClaimResult, Verdict, judge, skip_all
from ncuverify.spec import Claim, Spec, load
from ncuverify.static import is_static
from ncuverify.static import measurement_rows as static_rows


@dataclass(frozen=True)
class CheckOptions:
    arch: str | None = None  # build target; else the GPU's, else the file's
    ncu: profile.NcuOptions = field(default_factory=profile.NcuOptions)
    keep_dir: Path | None = None  # keep each file's plan, cubins, ncu log and runner status here
    static_only: bool = False  # judge only the claims that need no GPU


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
    gpu: Gpu | None = None
    ncu_command: list[str] | None = None

    def count(self, verdict: Verdict) -> int:
        return sum(1 for result in self.claims if result.verdict is verdict)


def check_files(paths: Iterable[Path], options: CheckOptions) -> list[FileResult]:
    environment = Environment.probe(options.ncu.executable)
    return [check_file(path, options, environment) for path in paths]


def check_file(path: Path, options: CheckOptions, environment: Environment) -> FileResult:
    started = time.monotonic()

    def finished(results: list[ClaimResult], **extra: object) -> FileResult:
        return FileResult(path, results, seconds=time.monotonic() - started, **extra)  # type: ignore[arg-type]

    try:
        spec = load(path)
        arch = target_arch(spec, options, environment)
        builds = build_spec(spec, arch) if arch is not None else None
    except InputError as error:
        return FileResult(path, [], input_error=str(error), seconds=time.monotonic() - started)
    static_claims, profiler_claims = split_claims(spec.content.claims)
    if options.static_only:
        profiler_claims = []
    if builds is None:
        reason = environment.problem or "no GPU"
        return finished(
            skip_all(
                [*static_claims, *profiler_claims],
                f"{reason}; and no architecture to build for: pass --arch or set 'arch' in the file",
            )
        )
    measured = static_measurements(spec, builds, [*static_claims, *profiler_claims])
    if not profiler_claims:
        return finished(judge(static_claims, measured, arch))
    if environment.problem is not None or environment.ncu is None:
        skipped = skip_all(profiler_claims, environment.problem or "ncu is not available")
        return finished(_in_file_order(spec, judge(static_claims, measured, arch) + skipped))
    keep = options.keep_dir / spec.path.stem if options.keep_dir is not None else None
    try:
        profiled, command = measure(
            spec, builds, profiler_claims, replace(options.ncu, executable=environment.ncu), keep
        )
    except EnvironmentProblem as problem:
        skipped = skip_all(profiler_claims, str(problem))
        return finished(
            _in_file_order(spec, judge(static_claims, measured, arch) + skipped), gpu=environment.gpu
        )
    results = judge([*static_claims, *profiler_claims], measured.combined(profiled), arch)
    return finished(_in_file_order(spec, results), gpu=environment.gpu, ncu_command=command)


def build_file(path: Path, options: CheckOptions, environment: Environment) -> dict[str, KernelBuild] | str:
    """The kernels of one file, built; or why they could not be."""
    try:
        spec = load(path)
        arch = target_arch(spec, options, environment)
        if arch is None:
            return "no architecture to build for: pass --arch or set 'arch' in the file"
        return build_spec(spec, arch)
    except InputError as error:
        return str(error)


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
    options: profile.NcuOptions,
    keep_dir: Path | None = None,
) -> tuple[profile.Measurements, list[str]]:
    """Profile the cases these claims read, in one ncu process, asking for the metrics they read."""
    needed_cases, metrics = _needs(spec, claims)
    with _work_dir(keep_dir) as work_dir:
        cubins: dict[str, Path] = {}
        planned = []
        symbols = {}
        for name in needed_cases:
            case = spec.content.cases[name]
            build = builds[case.kernel]
            cubin = cubins.get(case.kernel)
            if cubin is None:
                cubin = cubins[case.kernel] = work_dir / f"{case.kernel}.cubin"
                cubin.write_bytes(build.cubin)
            planned.append(profile.planned_case(name, case, build, cubin))
            symbols[name] = build.symbol
        run = profile.run_ncu(work_dir, planned, metrics, options)
    profile.diagnose(run)
    status = run.status or _runner_failure(run, needed_cases)
    table = profile.parse_csv(run.report)
    return profile.measurements(table, status, symbols), run.command


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
    metrics = {ref.name for ref in refs if not is_static(ref)}
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
    if any(v is Verdict.SKIPPED for v in verdicts):
        return ExitCode.NOT_MEASURABLE
    return ExitCode.OK
