"""What a run found: a verdict per claim, a result per file, the run's exit code, and the one identity
of a file that recordings, baselines, shards, JSON and JUnit all know it by."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from ncuverify.errors import ExitCode
from ncuverify.explain import Explanation
from ncuverify.measurements import Measurements
from ncuverify.provenance import Provenance, ReusedFrom
from ncuverify.spec import Claim, Spec, project_root
from ncuverify.spec.points import Point


def file_key(path: Path) -> str:
    """A file's identity: its path relative to the root of its project (`expectations/x.yaml`), the
    same on every machine and from every working folder; two files of one name in different folders
    are two files. A file outside any project is known by its name."""
    absolute = Path(os.path.abspath(path))
    try:
        return absolute.resolve().relative_to(project_root(absolute.parent)).as_posix()
    # it links out of its project; a folder cannot be searched, or loops; a NUL in a path read from JSON
    except (ValueError, OSError, RuntimeError):
        return absolute.name


@dataclass(frozen=True)
class FileKey:
    """A file's identity in a run (file_key, numbered where two files of the run share one), and the
    name earlier versions gave it in recordings (its stem, numbered likewise), so that those replay."""

    name: str
    legacy: str


def run_keys(paths: Sequence[Path]) -> list[FileKey]:
    """The keys of a run's files, in order: two files share one only where they are in different
    projects under the same relative path; the later ones are numbered."""
    names: set[str] = set()
    legacies: set[str] = set()
    return [FileKey(_numbered(file_key(path), names), _numbered(path.stem, legacies)) for path in paths]


def _numbered(key: str, taken: set[str]) -> str:
    """key, or key.2, key.3 ... where an earlier file of the run has it."""
    numbered, n = key, 1
    while numbered in taken:
        n += 1
        numbered = f"{key}.{n}"
    taken.add(numbered)
    return numbered


class Verdict(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"  # could not be evaluated: the case failed, a metric is missing, a division by zero
    SKIPPED = "skipped"  # this environment cannot measure it
    XFAILED = "xfailed"  # failed, as the claim says it does here
    XPASSED = "xpassed"  # passed where the claim says it fails: the expectation is out of date
    OTHER_ARCH = "other_arch"  # about other architectures than this run's: not checked, not a problem


class KernelVerdict(StrEnum):
    """One kernel's verdict under a claim over kernels."""

    PASSED = "passed"
    FAILED = "failed"
    ALLOWED = "allowed"  # failed, and an allow entry accepts it
    ERROR = "error"  # its value could not be read


@dataclass(frozen=True)
class KernelOutcome:
    """One kernel of a claim over kernels: its value and verdict, and the allow entry that accepts it."""

    kernel: str  # its name, or its signature where two kernels of the set share a name
    value: float | None
    verdict: KernelVerdict
    reason: str | None = None  # why it could not be read; the allow entry's reason
    allowed_by: int | None = None  # the allow entry's index in its file (not kept in JSON)


@dataclass(frozen=True)
class ClaimResult:
    claim: Claim
    verdict: Verdict
    measured: float | None = None
    reason: str | None = None
    control_measured: float | None = None
    kernels: tuple[KernelOutcome, ...] = ()  # a claim over kernels: each kernel's outcome, in name order
    point: Point = ()  # a claim of a sweep: its sweep's variables' values at its case

    def count(self, verdict: KernelVerdict) -> int:
        return sum(1 for outcome in self.kernels if outcome.verdict is verdict)


@dataclass(frozen=True)
class FileResult:
    """What a run found of one expectation file."""

    path: Path  # as the run was given it
    claims: list[ClaimResult]
    input_error: str | None = None
    internal_error: str | None = None  # ncuverify failed on this file: the line to show, naming the traceback
    seconds: float = 0.0
    provenance: Provenance | None = None  # where the profiler's figures come from
    replayed: bool = False  # the figures come from a recording, not from this run
    reused_from: ReusedFrom | None = None  # some figures are a recording's, taken again (check --reuse)
    warnings: list[str] = field(default_factory=list)
    measurements: Measurements | None = None  # everything measured: static facts and profiler
    spec: Spec | None = None  # the file as loaded; None where it could not be
    not_run: str | None = None  # why the file was not checked (the run was interrupted)
    explanations: dict[str, Explanation] = field(default_factory=dict)  # claim id -> what ncu says
    key: str = ""  # the file's identity (file_key); "" for the one its path has here
    set_aside: int = 0  # claims on the profiler that --static-only left out

    def __post_init__(self) -> None:
        if not self.key:  # frozen: set once, as the dataclass itself sets its fields
            object.__setattr__(self, "key", file_key(self.path))

    def count(self, verdict: Verdict) -> int:
        return sum(1 for result in self.claims if result.verdict is verdict)


# The verdicts of claims that were judged: a value was read (or could not be) and compared.
JUDGED = (Verdict.PASSED, Verdict.FAILED, Verdict.ERROR, Verdict.XFAILED, Verdict.XPASSED)


def set_aside(results: Iterable[FileResult]) -> int:
    """How many claims on the profiler --static-only set aside, over the files."""
    return sum(result.set_aside for result in results)


def judged_nothing(results: Iterable[FileResult]) -> int:
    """How many claims --static-only set aside where the run judged none at all (every claim set
    aside, or about other architectures): 0 where it judged one, or set none aside. Such a run is no
    pass: nothing was checked."""
    results = list(results)
    if any(claim.verdict in JUDGED for result in results for claim in result.claims):
        return 0
    return set_aside(results)


def nothing_judged_line(count: int) -> str:
    """What every output says of a run that judged nothing because --static-only set it all aside."""
    claims = (
        f"{count} claims need a GPU (--static-only set them"
        if count != 1
        else "1 claim needs a GPU (--static-only set it"
    )
    return f"nothing could be judged here: {claims} aside)"


def set_aside_line(count: int) -> str:
    """What the outputs say of claims set aside beside claims judged."""
    return f"{count} set aside (they need a GPU: --static-only)"


def exit_code(results: Iterable[FileResult]) -> ExitCode:
    """4 where ncuverify itself failed on a file, else 2 for wrong input anywhere, else 1 for a failed,
    unevaluable or unexpectedly passing claim, else 3 for skipped (or not run), or where --static-only
    set aside every claim it could have judged, else 0. An expected failure (xfailed) is no failure.
    The first that applies in the order 4, 2, 1, 3 wins."""
    results = list(results)
    if any(r.internal_error for r in results):
        return ExitCode.INTERNAL_ERROR
    if any(r.input_error for r in results):
        return ExitCode.BAD_INPUT
    verdicts = [c.verdict for r in results for c in r.claims]
    if any(v in (Verdict.FAILED, Verdict.ERROR, Verdict.XPASSED) for v in verdicts):
        return ExitCode.CLAIM_FAILED
    if any(v is Verdict.SKIPPED for v in verdicts) or any(r.not_run for r in results):
        return ExitCode.NOT_MEASURABLE
    if judged_nothing(results):
        return ExitCode.NOT_MEASURABLE
    return ExitCode.OK


# The order in which exit codes win when several apply.
_PRECEDENCE = (
    ExitCode.INTERNAL_ERROR,
    ExitCode.BAD_INPUT,
    ExitCode.CLAIM_FAILED,
    ExitCode.NOT_MEASURABLE,
    ExitCode.OK,
)


def worst(*codes: ExitCode) -> ExitCode:
    """The code that wins among codes (4, then 2, 1, 3, 0)."""
    return min(codes, key=_PRECEDENCE.index, default=ExitCode.OK)
