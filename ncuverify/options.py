"""The options of a run: what to build for, how to profile, what to judge."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ncuverify import profile
from ncuverify.build import BuildLimits
from ncuverify.cache import CompileCache
from ncuverify.schedule import PassCounts


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
