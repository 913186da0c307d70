"""The options of a run: what to build for, how to profile, what to judge; and the one way to make
them, with the command line's defaults, that every caller uses (the commands, `ncuverify.check`, the
pytest plugin)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ncuverify import profile
from ncuverify.build import BuildLimits
from ncuverify.build import cache as compile_cache
from ncuverify.build.cache import CompileCache
from ncuverify.environment import Environment
from ncuverify.errors import InputError
from ncuverify.folders import folder_to_read_problem
from ncuverify.profile.schedule import PassCounts
from ncuverify.spec import Spec
from ncuverify.spec.shares import Part
from ncuverify.text import printable

# The longest time limit an option may set: a week; anything longer is a typo or an attack.
MAX_SECONDS = 7 * 24 * 3600.0


@dataclass(frozen=True)
class CheckOptions:
    arch: str | None = None  # build target; else the GPU's, else the file's
    ncu: profile.NcuOptions = field(default_factory=profile.NcuOptions)
    save_profile: Path | None = None  # record the run's profile in this folder
    keep_report: bool = False  # with save_profile: keep ncu's .ncu-rep reports too
    from_profile: Path | None = None  # judge a recorded profile from this folder instead of profiling
    # take the figures of cases whose measurement key is unchanged from the recording in this folder
    reuse: Path | None = None
    static_only: bool = False  # judge only the claims that need no GPU
    cache: CompileCache | None = None  # compile through this cache; None compiles every time
    build: BuildLimits = field(default_factory=BuildLimits)  # what kernels may include; build time limit
    passes: PassCounts | None = None  # ncu's passes per metric set, remembered between runs
    gpus: tuple[int, ...] | None = None  # profile on these GPUs; None: the first
    explain: bool = True  # profile failing memory claims again for ncu's rules and source lines
    shard: tuple[int, int] | None = None  # (K, N): judge only the K-th of N shares of the suite
    # with shard: what the share takes of each file (by key), as the run's files were split together
    parts: Mapping[str, Part] | None = None
    dry_run: bool = False  # prepare each file up to its build, and plan the run: build and profile nothing
    # judge recorded figures of kernels, cases or program files that changed since, or that the recording
    # holds no digest of (else: an error, stages.staleness)
    allow_stale: bool = False
    # judge only these claims of each file (by its resolved path; a file not named: all of its claims)
    claims: Mapping[Path, frozenset[str]] | None = None
    # files already read (by their resolved paths), judged as read rather than read again: the pytest
    # plugin's collection read them
    loaded: Mapping[Path, Spec] | None = None
    on_progress: Callable[[str], None] | None = None  # told what the run is doing, a line at a time
    allow_programs: bool = False  # run the commands of program cases (code the expectation file names)
    # artifacts given for `binary:` kernels, by kernel key (check --binary KERNEL=PATH), absolute
    binaries: Mapping[str, Path] = field(default_factory=dict)
    # True (check --facts-without-ncu): cases whose claims read only launch facts the driver gives, or
    # only buffers, run in a process of the runner alone. Off by default: ncu keeps every other
    # profiled process's kernels off the GPU while it profiles, and the runner alone keeps nothing
    # off it, so it is for a run that has the GPU to itself.
    driver_facts: bool = False


def for_run(
    *,
    arch: str | None = None,
    ncu: profile.NcuOptions | None = None,
    save_profile: Path | None = None,
    keep_report: bool = False,
    from_profile: Path | None = None,
    reuse: Path | None = None,
    static_only: bool = False,
    cache: bool = True,
    build: BuildLimits | None = None,
    gpus: tuple[int, ...] | None = None,
    explain: bool = True,
    shard: tuple[int, int] | None = None,
    allow_programs: bool = False,
    allow_stale: bool = False,
    binaries: Mapping[str, Path] | None = None,
    driver_facts: bool = False,
) -> CheckOptions:
    """A run's options as `ncuverify check` makes them: compiled through the compile cache and with
    ncu's passes per metric set remembered in its folder, unless cache is False (then every kernel is
    compiled and the passes are guessed); failed memory claims explained unless explain is False."""
    return CheckOptions(
        arch=arch,
        ncu=ncu or profile.NcuOptions(),
        save_profile=save_profile,
        keep_report=keep_report,
        from_profile=from_profile,
        reuse=reuse,
        static_only=static_only,
        cache=CompileCache(compile_cache.default_folder()) if cache else None,
        build=build or BuildLimits(),
        # they shape how cases are grouped into ncu processes
        passes=PassCounts.load(compile_cache.passes_file()) if cache else None,
        gpus=gpus,
        explain=explain,
        shard=shard,
        allow_programs=allow_programs,
        allow_stale=allow_stale,
        binaries=binaries or {},
        driver_facts=driver_facts,
    )


def seconds_problem(value: float) -> str | None:
    """Why value is no time limit, or None: it must be finite, above 0, at most a week (nan and inf
    would never stop anything)."""
    if math.isfinite(value) and 0 < value <= MAX_SECONDS:
        return None
    return f"{value}: give a number of seconds above 0 and at most {MAX_SECONDS:.0f}"


def build_limits(
    allow_include: Iterable[Path] | None,
    timeout_s: float,
    include_option: str = "--allow-include",
    timeout_option: str = "--compile-timeout",
    cuda_home: Path | None = None,
) -> BuildLimits:
    """The folders outside the project that kernels may include from (each must be an existing
    folder), the compile time limit and the CUDA toolkit nvcc comes from (--cuda-home), for the build;
    a refusal names the option at fault."""
    roots: list[Path] = []
    problems = []
    for folder in allow_include or []:
        problem = folder_to_read_problem(folder)
        if problem is not None:
            problems.append(f"{include_option}: {folder}: {problem}")
        else:
            roots.append(folder.resolve())
    if (timeout_problem := seconds_problem(timeout_s)) is not None:
        problems.append(f"{timeout_option}: {timeout_problem}")
    if cuda_home is not None and (home_problem := folder_to_read_problem(cuda_home)) is not None:
        problems.append(f"--cuda-home: {cuda_home}: {home_problem}")
    if problems:
        raise InputError("\n".join(printable(problem) for problem in problems))
    return BuildLimits(
        allowed_roots=tuple(dict.fromkeys(roots)),
        timeout_s=timeout_s,
        cuda_home=cuda_home.resolve() if cuda_home is not None else None,
    )


def target_arch(spec: Spec, options: CheckOptions, environment: Environment) -> str | None:
    """--arch, else the GPU's own architecture, else the file's `arch` (for machines without a GPU)."""
    if options.arch is not None:
        return options.arch
    if environment.gpu is not None:
        return environment.gpu.arch
    return spec.content.arch


# What `init` and `build` compile sources for without --arch or a GPU to ask: Hopper, the architecture
# this project's expectation files are written for.
DEFAULT_SOURCE_ARCH = "sm_90"


def source_arch(given: str | None, environment: Environment) -> tuple[str, str | None]:
    """The architecture `init` and `build` compile a source for: --arch, else the GPU's, else sm_90;
    and the note that says so where sm_90 was taken for want of a GPU (None otherwise)."""
    if given is not None:
        return given, None
    if environment.gpu is not None:
        return environment.gpu.arch, None
    return DEFAULT_SOURCE_ARCH, f"no GPU here: building for {DEFAULT_SOURCE_ARCH} (pass --arch to choose)"
