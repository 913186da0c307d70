"""Which ncu process profiles which case: the fewest processes and replays for a whole run.

ncu asks every kernel of a process for every metric on its command line, and collecting more metrics
takes more replay passes of each kernel. A process costs a start (ncu, then the runner's Python and
CUDA: about 2.5 s on an H200 machine); a pass costs each kernel a save and restore of its memory and a
replay (about 0.03 s for the suite's kernels). So cases that need the same metrics share a process,
and two such groups are merged when the passes the merge adds cost less than the start it saves. With
several GPUs, each group's cases are spread over the GPUs, one process per GPU and group.

A case whose kernel writes results that the runner reads back (in-kernel clock() timings) is pinned:
what it reads back comes from ncu's last replay, and a pass for metrics it does not need can change it
(SASS-patched metrics slow every instruction), so it only shares a process that asks for its metrics.

How many passes a set of metrics takes is only known from ncu (the raw page's
`profiler__replayer_passes`); `PassCounts` remembers what past runs reported and guesses the rest.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

START_S = 2.5  # one ncu process: ncu itself, then the runner's Python and CUDA start-up
PASS_S = 0.03  # one replay pass of one launch, memory save and restore included

# Metrics that ncu reads without replaying the kernel for them.
_FREE_PREFIXES = ("launch__", "device__", "profiler__", "gpu__time_duration")


@dataclass(frozen=True)
class ProfiledCase:
    """A case that ncu must profile: its name, how many times it launches, and the metrics it needs."""

    name: str
    launches: int
    metrics: frozenset[str]
    pinned: bool = False  # reads results back from the kernel: no metrics beyond its own


@dataclass(frozen=True)
class Group:
    """The cases of one ncu process, and the metrics the process asks for."""

    metrics: frozenset[str]
    cases: tuple[str, ...]


@dataclass
class PassCounts:
    """Replay passes per metric set, as ncu reported them, kept in a JSON file between runs."""

    known: dict[str, int] = field(default_factory=dict)
    path: Path | None = None

    @classmethod
    def load(cls, path: Path | None) -> PassCounts:
        if path is None or not path.is_file():
            return cls(path=path)
        try:
            known = json.loads(path.read_text())
        except (OSError, ValueError):
            return cls(path=path)  # a damaged file only costs a guess
        return cls({str(k): int(v) for k, v in known.items()} if isinstance(known, dict) else {}, path)

    def remember(self, metrics: frozenset[str], passes: int) -> None:
        self.known[_key(metrics)] = passes

    def save(self) -> None:
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text(json.dumps(self.known, indent=1, sort_keys=True))

    def passes(self, metrics: frozenset[str]) -> int:
        """What ncu reported for this set, else a guess: one pass, plus one per three counters."""
        if _key(metrics) in self.known:
            return self.known[_key(metrics)]
        counters = [m for m in metrics if not m.startswith(_FREE_PREFIXES)]
        return 1 + math.ceil(len(counters) / 3)


def _key(metrics: frozenset[str]) -> str:
    return ",".join(sorted(metrics))


def groups(cases: Sequence[ProfiledCase], passes: PassCounts) -> list[Group]:
    """The cases in groups, one ncu process each; cases keep their order within a group."""
    by_metrics: dict[frozenset[str], list[ProfiledCase]] = {}
    for case in cases:
        by_metrics.setdefault(case.metrics, []).append(case)
    clusters = list(by_metrics.values())
    while (best := _best_merge(clusters, passes)) is not None:
        i, j = best
        clusters[i] = clusters[i] + clusters[j]
        del clusters[j]
    order = {case.name: index for index, case in enumerate(cases)}
    return [
        Group(_union(cluster), tuple(sorted((c.name for c in cluster), key=order.__getitem__)))
        for cluster in sorted(clusters, key=lambda cluster: min(order[c.name] for c in cluster))
    ]


def _best_merge(clusters: list[list[ProfiledCase]], passes: PassCounts) -> tuple[int, int] | None:
    """The two groups whose merge saves the most time, if any merge saves time."""
    saving, i, j = max(
        (
            (_merge_saving(a, b, passes), i, j)
            for i, a in enumerate(clusters)
            for j, b in enumerate(clusters)
            if i < j and _may_merge(a, b)
        ),
        default=(0.0, 0, 0),
    )
    return (i, j) if saving > 0 else None


def _may_merge(a: list[ProfiledCase], b: list[ProfiledCase]) -> bool:
    """Whether two groups may share a process: a pinned case's group must not gain metrics."""
    union = _union(a + b)
    return all(union == _union(cluster) for cluster in (a, b) if any(case.pinned for case in cluster))


def _union(cluster: Sequence[ProfiledCase]) -> frozenset[str]:
    return frozenset().union(*(case.metrics for case in cluster))


def _cost(cluster: Sequence[ProfiledCase], passes: PassCounts) -> float:
    launches = sum(case.launches for case in cluster)
    return START_S + launches * passes.passes(_union(cluster)) * PASS_S


def _merge_saving(a: list[ProfiledCase], b: list[ProfiledCase], passes: PassCounts) -> float:
    return _cost(a, passes) + _cost(b, passes) - _cost(a + b, passes)


@dataclass(frozen=True)
class Unit:
    """One ncu process: a group's cases that one GPU profiles."""

    gpu: int
    metrics: frozenset[str]
    cases: tuple[str, ...]


def spread(
    plan: Sequence[Group], cases: Sequence[ProfiledCase], gpus: Sequence[int], passes: PassCounts
) -> list[Unit]:
    """Each group's cases over the GPUs, the costliest first to the least loaded GPU (a case that opens
    a group on a GPU also pays that process's start). One GPU gets every group whole."""
    launches = {case.name: case.launches for case in cases}
    load = dict.fromkeys(gpus, 0.0)
    members: dict[tuple[int, int], list[str]] = {}
    for index, group in enumerate(plan):
        per_launch = passes.passes(group.metrics) * PASS_S
        for name in sorted(group.cases, key=lambda n: -launches[n]):
            gpu = min(gpus, key=lambda g: load[g] + (0 if (g, index) in members else START_S))
            load[gpu] += launches[name] * per_launch + (0 if (gpu, index) in members else START_S)
            members.setdefault((gpu, index), []).append(name)
    return [
        Unit(gpu, plan[index].metrics, tuple(n for n in plan[index].cases if n in members[gpu, index]))
        for gpu in gpus
        for index in range(len(plan))
        if (gpu, index) in members
    ]
