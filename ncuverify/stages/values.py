"""What the stages hand on: a file prepared for the run's profile, and what that profile gave."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ncuverify.build import KernelBuild
from ncuverify.measurements import Measurements
from ncuverify.provenance import Provenance, ReusedFrom
from ncuverify.results import ClaimResult, FileKey
from ncuverify.spec import Claim, Spec


@dataclass(frozen=True)
class Prepared:
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
    set_aside: int = 0  # profiler claims left out by --static-only
    # replayed cases whose kernel or launch changed since the recording -> why; their claims are stale
    stale: dict[str, str] = field(default_factory=dict)
    # why the recorded figures cannot be judged at all (stages.staleness): the file's one input error
    refused: str | None = None


@dataclass(frozen=True)
class Profiled:
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
    reused: dict[str, ReusedFrom] = field(
        default_factory=dict
    )  # file key -> its figures taken again (--reuse)
