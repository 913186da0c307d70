"""The spec and build stages for one file, and the judging of its static claims: the file loaded, built
and judged on its static facts; its profiler claims wait for the run's profile."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

from ncuverify.build import KernelBuild, build_spec, reads_sass
from ncuverify.build import measurement_rows as static_rows
from ncuverify.build.built import build_warnings
from ncuverify.build.inventory import KernelSet, build_sets
from ncuverify.build.params import check_arguments
from ncuverify.environment import Environment
from ncuverify.errors import InputError
from ncuverify.judge.claims import applies_to, judge, other_arch, skip_all
from ncuverify.judge.kernel_sets import members, set_measurements
from ncuverify.judge.over_kernels import judge_over_kernels
from ncuverify.measurements import Measurements
from ncuverify.names import is_static
from ncuverify.ncu.metrics import check_metric_names
from ncuverify.options import CheckOptions, target_arch
from ncuverify.profile import recording
from ncuverify.provenance import Provenance
from ncuverify.results import FileKey, FileResult
from ncuverify.spec import Claim, Spec, load
from ncuverify.spec.binaries import with_binaries
from ncuverify.spec.shares import with_claims
from ncuverify.stages import staleness
from ncuverify.stages.progress import say
from ncuverify.stages.sharding import sharded
from ncuverify.stages.values import Prepared


def prepare_file(
    path: Path, key: FileKey, options: CheckOptions, environment: Environment
) -> Prepared | FileResult:
    """Load, build and judge the static claims of one file; a FileResult if nothing is left to profile."""
    started = time.monotonic()
    say(options, f"{path.name}: reading")
    try:
        spec, provenance, arch = _spec_and_arch(path, key, options, environment)
        if options.dry_run and options.reuse is None:  # --reuse: built, for the measurement keys
            return _unbuilt(key, path, spec, arch, options, started)
        say(options, f"{path.name}: compiling")
        builds, sets = _built(spec, arch, options)
    except InputError as error:
        return FileResult(path, [], input_error=str(error), seconds=time.monotonic() - started, key=key.name)
    from_profile = options.from_profile
    applicable = [claim for claim in spec.content.claims if applies_to(claim, arch)]
    judged = other_arch([claim for claim in spec.content.claims if not applies_to(claim, arch)], arch)
    static_claims, profiler_claims = split_claims(applicable)
    set_aside = len(profiler_claims) if options.static_only else 0
    if options.static_only:
        profiler_claims = []
    if builds is None:
        reason = f"{environment.problem or 'no GPU'}; and no architecture to build for: pass --arch or set 'arch' in the file"
        judged += skip_all(static_claims + profiler_claims, reason)
        # what --static-only set aside is counted here too: a file of program cases has no build
        return Prepared(
            key, path, spec, arch, None, judged, [], Measurements.empty(), started, set_aside=set_aside
        )
    by_key = members(spec, builds, sets)
    static = static_measurements(spec, builds, applicable)
    if by_key:
        static = static.combined(set_measurements(by_key, patterns_of(applicable)))
    over_kernels = [claim for claim in static_claims if claim.kernels is not None]
    judged += judge([claim for claim in static_claims if claim.kernels is None], static, arch)
    allow = spec.content.allow
    judged += [
        judge_over_kernels(claim, by_key.get(claim.kernels or "", {}), static, allow, arch)
        for claim in over_kernels
    ]
    warnings = build_warnings(builds) + [
        warning for kernel_set in sets.values() for warning in kernel_set.warnings
    ]
    untied = staleness.Staleness()
    if provenance is not None and from_profile is not None:
        where = recording.provenance_file(from_profile, key)
        untied = staleness.staleness(
            spec, key.name, builds, provenance, profiler_claims, where, options.allow_stale
        )
    warnings += untied.warnings
    return Prepared(
        key,
        path,
        spec,
        arch,
        builds,
        judged,
        profiler_claims,
        static,
        started,
        warnings,
        set_aside,
        stale=untied.stale,
        refused=untied.refused,
    )


def _spec_and_arch(
    path: Path, key: FileKey, options: CheckOptions, environment: Environment
) -> tuple[Spec, Provenance | None, str | None]:
    """The file's spec (its share, its claims asked for), the recording's provenance where the run
    replays one, and the architecture its figures are for; InputError where the file is wrong."""
    spec = _read(path, options)
    if options.shard is not None:
        spec = sharded(spec, key, options)
    if options.claims is not None and path.resolve() in options.claims:
        spec = with_claims(spec, options.claims[path.resolve()])
    from_profile = options.from_profile
    provenance = recording.load_provenance(from_profile, key) if from_profile else None
    arch = provenance.arch if provenance else target_arch(spec, options, environment)
    if arch is not None:
        check_metric_names(spec, arch, environment.ncu)
    return spec, provenance, arch


def _built(
    spec: Spec, arch: str | None, options: CheckOptions
) -> tuple[dict[str, KernelBuild] | None, dict[str, KernelSet]]:
    """The file's kernels built for arch, with their arguments checked, and its kernel sets; none
    without an architecture."""
    if arch is None:
        return None, {}
    live = options.from_profile is None and not options.static_only
    limits = replace(options.build, sass=True) if needs_sass(spec, live) else options.build
    builds = build_spec(spec, arch, options.cache, limits)
    check_arguments(spec, builds)
    return builds, build_sets(spec, arch, options.cache, limits)


def _unbuilt(
    key: FileKey, path: Path, spec: Spec, arch: str | None, options: CheckOptions, started: float
) -> Prepared:
    """The file as a dry run plans it: nothing built or judged; the profiler claims that would wait."""
    applicable = [claim for claim in spec.content.claims if applies_to(claim, arch)]
    waiting = [] if options.static_only or arch is None else split_claims(applicable)[1]
    return Prepared(key, path, spec, arch, None, [], waiting, Measurements.empty(), started)


def _read(path: Path, options: CheckOptions) -> Spec:
    """The file as loaded, or as a caller that read it already gave it; with the artifacts given for its
    `binary:` kernels."""
    if options.loaded is not None and (spec := options.loaded.get(path.resolve())) is not None:
        return with_binaries(spec, options.binaries)
    return with_binaries(load(path), options.binaries)


def not_prepared(path: Path, key: FileKey, internal_error: str) -> FileResult:
    """A bug while preparing the file, not the file's fault: its internal error; the other files go on."""
    return FileResult(path, [], internal_error=internal_error, key=key.name)


def needs_sass(spec: Spec, profiling: bool = False) -> bool:
    """Whether the file's claims or its tolerances read SASS, or (where it is profiled) a case reads a
    buffer back, whose kernel's SASS says whether it reads the clock: only then are its cubins
    disassembled."""
    metrics = [ref.name for claim in spec.content.claims for ref in claim.metric_refs()]
    if any(reads_sass(metric) for metric in [*metrics, *spec.content.regressions]):
        return True
    return profiling and any(case.reads_back for case in spec.content.cases.values())


def split_claims(claims: list[Claim]) -> tuple[list[Claim], list[Claim]]:
    """Claims that read only static facts (no GPU needed), and the rest."""
    reads_static = [all(is_static(ref.name) for ref in claim.metric_refs()) for claim in claims]
    static = [claim for claim, only in zip(claims, reads_static, strict=True) if only]
    return static, [claim for claim, only in zip(claims, reads_static, strict=True) if not only]


def static_measurements(spec: Spec, builds: dict[str, KernelBuild], claims: list[Claim]) -> Measurements:
    """The static facts of every case's kernel, as measurements, with the SASS counts the claims ask for."""
    cases = {name: case.kernel for name, case in spec.content.cases.items()}
    facts = {name: build.facts for name, build in builds.items()}
    return Measurements(tuple(static_rows(cases, facts, patterns_of(claims))))


def patterns_of(claims: list[Claim]) -> list[str]:
    """The SASS patterns the claims count."""
    return [
        ref.sass_pattern for claim in claims for ref in claim.metric_refs() if ref.sass_pattern is not None
    ]
