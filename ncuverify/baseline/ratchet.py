"""The ratchet over kernel sets: against a baseline, no kernel of a set may grow its registers, spills,
stack or shared memory (beyond its tolerance) unless an allow entry accepts it; kernels added to or
removed from a set since the baseline are reported, and do not fail the run. Allow entries that accept
nothing in the run are warned about, so that a stale allow-list shows."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from ncuverify.baseline import snapshot as baselines
from ncuverify.baseline.snapshot import Baseline, Change
from ncuverify.judge.kernel_sets import of_set_case
from ncuverify.names import function_name
from ncuverify.results import FileResult
from ncuverify.spec import Tolerance
from ncuverify.spec.allow import AllowEntry


@dataclass(frozen=True)
class KernelMove:
    """A kernel of a set that the baseline has and the run has not (removed), or the other way."""

    file: str
    case: str  # KEY[kernel]
    added: bool


@dataclass(frozen=True)
class Comparison:
    """What moved against a baseline: each change (growths an allow entry accepts marked so), and the
    kernels of sets added and removed since."""

    changes: list[Change]
    moves: list[KernelMove]
    # the line saying the baseline's kernels were compiled by another nvcc (snapshot.toolkit_note)
    toolkits: str | None = None

    @property
    def regressed(self) -> bool:
        """Whether a measure got worse that no allow entry accepts: the run fails."""
        return any(change.worse and change.allowed is None for change in self.changes)


def compare(baseline: Baseline, results: Sequence[FileResult], overrides: dict[str, Tolerance]) -> Comparison:
    """The baseline comparison, with the allow-list applied and the sets' kernels added and removed."""
    by_key = {result.key: result for result in results}
    changes = [
        _allowed(change, by_key[change.file]) for change in baselines.compare(baseline, results, overrides)
    ]
    moves = [move for result in results for move in _moves(baseline, result)]
    return Comparison(changes, moves, baselines.toolkit_note(baseline, results))


def _allowed(change: Change, result: FileResult) -> Change:
    """The change, marked with the allow entry that accepts it where it is a kernel's growth."""
    label = of_set_case(change.case)
    if not change.worse or label is None or result.spec is None:
        return change
    symbol = _symbol(result, change.case)
    for index, entry in enumerate(result.spec.content.allow):
        if entry.covers_growth(change.metric) and entry.covers_kernel(
            function_name(label[1]), label[1], symbol
        ):
            return replace(change, allowed=entry.reason, allowed_by=index)
    return change


def _symbol(result: FileResult, case: str) -> str:
    if result.measurements is None:
        return ""
    return next((kernel for named, kernel, *_ in result.measurements.rows if named == case), "")


def _moves(baseline: Baseline, result: FileResult) -> list[KernelMove]:
    before = {case for case in baseline.recorded(result).cases if of_set_case(case)}
    if result.measurements is None:
        return []  # the file was not measured: nothing is known of its kernels
    now = {case for case in result.measurements.cases if of_set_case(case)}
    return [KernelMove(result.key, case, True) for case in sorted(now - before)] + [
        KernelMove(result.key, case, False) for case in sorted(before - now)
    ]


def with_stale_warnings(results: Sequence[FileResult], changes: Sequence[Change] | None) -> list[FileResult]:
    """Each file's result with a warning for every allow entry that accepts nothing in the run: no
    failing kernel of a claim, and (where the run is compared with a baseline: changes is not None) no
    growth. Without a baseline, an entry that could accept a growth is not judged."""
    return [_warned(result, changes) for result in results]


def _warned(result: FileResult, changes: Sequence[Change] | None) -> FileResult:
    if result.spec is None or not result.spec.content.allow or result.input_error is not None:
        return result
    used = {o.allowed_by for claim in result.claims for o in claim.kernels}
    used |= {c.allowed_by for c in changes or () if c.file == result.key}
    stale = [
        f"allow[{index}] ({entry.describe()}) accepts nothing in this run: remove it if it is fixed"
        for index, entry in enumerate(result.spec.content.allow)
        if index not in used and (changes is not None or not _could_accept_growth(entry))
    ]
    return replace(result, warnings=[*result.warnings, *stale]) if stale else result


def _could_accept_growth(entry: AllowEntry) -> bool:
    return entry.claim is None and (
        entry.metric is None
        or entry.metric in baselines.DEFAULT_TOLERANCES
        or entry.metric in baselines.SET_TOLERANCES
    )
