"""Which ncu process profiles which case: the fewest processes and replays for a whole run.

ncu asks every kernel of a process for every metric on its command line, and collecting more metrics
takes more replay passes of each kernel. A process costs a start (ncu, then the runner's Python and
CUDA under ncu: about 2.2 s on an H200 machine; with two processes in flight on a GPU most of it
hides behind the one before, and what a further process adds to a run is about 0.75-1 s: the
schedule counts 1 s);
a pass costs each kernel a save and restore of its memory, the caches flushed and a replay (about
0.045 s for the suite's kernels, from 0.03 to 0.07). So cases that need the same metrics share a
process, and two such groups are merged when the passes the merge adds cost less than the start it
saves. With several GPUs, each group's cases are spread over the GPUs, one process per GPU and group.

A case whose kernel times itself (reads the clock) and writes what the runner reads back is pinned:
what it reads back comes from ncu's last replay, and a pass that patches the kernel's SASS (the
`sass` metrics count instructions by patching them) slows every instruction. So it only shares a
process whose metrics beyond its own are hardware counters, read without changing the code.

How many passes a set of metrics takes is what ncu reported for it in an earlier run (the raw page's
`profiler__replayer_passes`), which `PassCounts` remembers, else what the pass model predicts
(ncuverify.profile.passes), from the first run on.

A case whose claims read only launch facts that the driver gives (`runner.occupancy.DRIVER_METRICS`), or
only buffers the runner reads back, needs no ncu: such cases share one process of the runner alone, on
one GPU (`units`), which costs no replay pass.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ncuverify.build.cache import prepare_folder
from ncuverify.files import read_json
from ncuverify.names import is_patched
from ncuverify.profile.passes import PassModel, counters
from ncuverify.runner.occupancy import DRIVER_METRICS
from ncuverify.text import one_line

START_S = 1.0  # what one more ncu process adds to a run whose processes start while others profile
PASS_S = 0.045  # one replay pass of one launch, memory save and restore included


@dataclass(frozen=True)
class ProfiledCase:
    """A case that ncu must profile: its name, how many times it launches, and the metrics it needs."""

    name: str
    launches: int
    metrics: frozenset[str]
    pinned: bool = False  # reads results back from the kernel: no metrics beyond its own
    # The cases it stands for, run in this order in one process: a launch sequence's steps (the first
    # its name); () for a case of its own.
    steps: tuple[str, ...] = ()

    @property
    def cases(self) -> tuple[str, ...]:
        return self.steps or (self.name,)


@dataclass(frozen=True)
class Group:
    """The cases of one ncu process, and the metrics the process asks for."""

    metrics: frozenset[str]
    cases: tuple[str, ...]


# What a file of remembered pass counts may hold. ncu takes a few passes for a few metrics and some tens
# for a full section; a suite has some tens of metric sets, each named by its metrics (a few KB). Beyond
# these the file was not written by ncuverify, and trusting it would shape the schedule.
MAX_PASSES = 1000
MAX_METRIC_SETS = 512
MAX_KEY_CHARS = 16384
MAX_PASSES_FILE_BYTES = 16 * 2**20  # more than MAX_METRIC_SETS keys of MAX_KEY_CHARS
# The model's predictions kept beside them: the schedule weighs every pair of groups it may merge, some
# hundreds of unions for a suite of a hundred cases, each a question to perfworks (about 2.5 ms, and
# loading it about 0.8 s) that the next run would ask again.
MAX_PREDICTED_SETS = 4096
MAX_PREDICTED_FILE_BYTES = 64 * 2**20


@dataclass
class PassCounts:
    """Replay passes per metric set, as ncu reported them, kept in a JSON file between runs; the model
    predicts those of other sets, and what perfworks predicted is kept too (in `predicted-<name>`
    beside it, by chip and counters), so that a run asks perfworks only about sets no run asked about
    before. A damaged or implausible file is ignored as a whole, which only costs predictions;
    warnings says so."""

    known: dict[str, int] = field(default_factory=dict)
    path: Path | None = None
    warnings: tuple[str, ...] = ()
    model: PassModel = field(default_factory=PassModel, compare=False)
    predicted: dict[str, int] = field(default_factory=dict, compare=False)
    _counter_sets: dict[frozenset[str], int] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    @classmethod
    def load(cls, path: Path | None) -> PassCounts:
        """The counts remembered in path, and the predictions beside it; never raises: an absent file
        is a first run, anything else that is not a file of pass counts is ignored with a warning."""
        if path is None:
            return cls()
        known, warnings = _load_counts(path, MAX_METRIC_SETS, MAX_PASSES_FILE_BYTES)
        predicted, more = _load_counts(_predicted_file(path), MAX_PREDICTED_SETS, MAX_PREDICTED_FILE_BYTES)
        return cls(known, path, warnings + more, predicted=predicted)

    def remember(self, metrics: frozenset[str], passes: int) -> None:
        """Keep what ncu reported for a set, the latest last; counts ncu could not have meant, and sets
        too long to keep, are not kept. The oldest set makes room beyond MAX_METRIC_SETS."""
        key = _key(metrics)
        if isinstance(passes, bool) or not isinstance(passes, int) or not 1 <= passes <= MAX_PASSES:
            return
        if len(key) > MAX_KEY_CHARS:
            return
        self.known.pop(key, None)
        self.known[key] = passes
        self._counter_sets = None
        while len(self.known) > MAX_METRIC_SETS:
            del self.known[next(iter(self.known))]

    def save(self) -> str | None:
        """Write the counts (to a new file, then renamed over the old: a run reading them never sees
        half a file) into a folder marked as ncuverify's cache. A warning line where that fails."""
        if self.path is None:
            return None
        try:
            _write_counts(self.path, self.known)
            if self.predicted:
                _write_counts(_predicted_file(self.path), self.predicted)
        except OSError as error:
            return f"{one_line(str(self.path))}: the replay passes could not be remembered ({error.strerror or error})"
        return None

    def passes(self, metrics: frozenset[str]) -> int:
        """What ncu reported for this set, or for a set of the same counters (the free metrics take no
        pass: a merge that adds none of its counters is seen to cost no pass); else the model's
        prediction."""
        if _key(metrics) in self.known:
            return self.known[_key(metrics)]
        same = self._by_counters().get(counters(metrics))
        return same if same is not None else self._predicted(metrics)

    def _predicted(self, metrics: frozenset[str]) -> int:
        """The model's passes for a set: as predicted before for this chip and these counters, or now
        (kept where perfworks answered: the table needs no keeping)."""
        if self.model.chip is None:
            return self.model.passes(metrics)
        key = f"{self.model.chip}:{_key(counters(metrics))}"
        if key in self.predicted:
            return self.predicted[key]
        passes = self.model.passes(metrics)
        if self.model.source == "perfworks" and len(key) <= MAX_KEY_CHARS:
            self.predicted[key] = passes
            while len(self.predicted) > MAX_PREDICTED_SETS:
                del self.predicted[next(iter(self.predicted))]
        return passes

    def _by_counters(self) -> dict[frozenset[str], int]:
        """The known sets by their counters (the latest report of each): made again after remember."""
        if self._counter_sets is None:
            self._counter_sets = {counters(key.split(",")): p for key, p in self.known.items()}
        return self._counter_sets


def _predicted_file(path: Path) -> Path:
    return path.with_name(f"predicted-{path.name}")


def _load_counts(path: Path, most: int, most_bytes: int) -> tuple[dict[str, int], tuple[str, ...]]:
    """The counts in path and no warning; none for an absent file, none and a warning for a damaged one."""
    try:
        return _read_counts(path, most, most_bytes), ()
    except FileNotFoundError:
        return {}, ()
    except (OSError, ValueError) as error:
        problem = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        return {}, (f"{one_line(str(path))}: ignored ({one_line(problem)}); the replay passes are guessed",)


def _write_counts(path: Path, counts: dict[str, int]) -> None:
    """Write counts to a new file, then rename it over path (a run reading them never sees half a
    file), in a folder marked as ncuverify's cache."""
    folder = prepare_folder(path.parent)
    descriptor, partial = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".partial")
    try:
        with os.fdopen(descriptor, "w") as stream:
            stream.write(json.dumps(counts, indent=1))
        os.replace(partial, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(partial)
        raise


def _read_counts(
    path: Path, most: int = MAX_METRIC_SETS, most_bytes: int = MAX_PASSES_FILE_BYTES
) -> dict[str, int]:
    """The counts in a file written by PassCounts.save (at most `most` sets); OSError where it cannot
    be read, ValueError saying what is wrong with it otherwise."""
    known = read_json(path, most_bytes)
    if not isinstance(known, dict):
        raise ValueError("not an object of metric sets and their passes")
    if len(known) > most:
        raise ValueError(f"{len(known)} metric sets; at most {most} are kept")
    for key, passes in known.items():
        shown = repr(key) if len(key) <= 60 else repr(key[:57]) + "..."
        if len(key) > MAX_KEY_CHARS:
            raise ValueError(f"the metric set {shown} is longer than {MAX_KEY_CHARS} characters")
        if isinstance(passes, bool) or not isinstance(passes, int) or not 1 <= passes <= MAX_PASSES:
            value = repr(passes) if len(repr(passes)) <= 30 else repr(passes)[:27] + "..."
            raise ValueError(f"{shown}: {value} is not a number of passes from 1 to {MAX_PASSES}")
    return known


def _key(metrics: frozenset[str]) -> str:
    return ",".join(sorted(metrics))


def groups(cases: Sequence[ProfiledCase], passes: PassCounts) -> list[Group]:
    """The cases in groups, one ncu process each; cases keep their order within a group. Greedy: the
    two groups whose merge saves the most time merge, until no merge saves time (of equal savings,
    the pair latest in the list)."""
    by_metrics: dict[frozenset[str], list[ProfiledCase]] = {}
    for case in cases:
        by_metrics.setdefault(case.metrics, []).append(case)
    costs = _Costs(passes)
    clusters = [costs.cluster(tuple(same)) for same in by_metrics.values()]
    while (best := _best_merge(clusters, costs)) is not None:
        i, j = best
        clusters[i] = costs.merged(clusters[i], clusters[j])
        del clusters[j]
    order = {case.name: index for index, case in enumerate(cases)}
    return [
        Group(cluster.metrics, tuple(sorted((c.name for c in cluster.cases), key=order.__getitem__)))
        for cluster in sorted(clusters, key=lambda cluster: min(order[c.name] for c in cluster.cases))
    ]


@dataclass(frozen=True)
class _Cluster:
    """Cases that would share a process: the metrics they ask for together, their launches, whether
    one is pinned, and a number of its own (what the savings of its pairs are remembered by)."""

    serial: int
    cases: tuple[ProfiledCase, ...]
    metrics: frozenset[str]
    launches: int
    pinned: bool
    cost: float


class _Costs:
    """What a cluster costs and what a merge saves, each worked out once: the greedy merge asks again
    for every pair after each merge, and a suite has some hundreds of pairs."""

    def __init__(self, passes: PassCounts) -> None:
        self._passes = passes
        self._per_set: dict[frozenset[str], int] = {}
        self._savings: dict[tuple[int, int], float | None] = {}
        self._serials = 0

    def cluster(self, cases: tuple[ProfiledCase, ...]) -> _Cluster:
        metrics = frozenset().union(*(case.metrics for case in cases))
        launches = sum(case.launches for case in cases)
        self._serials += 1
        pinned = any(case.pinned for case in cases)
        cost = _cost(launches, self._set_passes(metrics))
        return _Cluster(self._serials, cases, metrics, launches, pinned, cost)

    def merged(self, a: _Cluster, b: _Cluster) -> _Cluster:
        return self.cluster(a.cases + b.cases)

    def saving(self, a: _Cluster, b: _Cluster) -> float | None:
        """The time merging a and b saves (negative: it costs); None where they may not share a process."""
        key = (a.serial, b.serial)
        if key not in self._savings:
            union = a.metrics | b.metrics
            together = _cost(a.launches + b.launches, self._set_passes(union))
            self._savings[key] = a.cost + b.cost - together if _may_merge(a, b, union) else None
        return self._savings[key]

    def _set_passes(self, metrics: frozenset[str]) -> int:
        if metrics not in self._per_set:
            self._per_set[metrics] = self._passes.passes(metrics)
        return self._per_set[metrics]


def _cost(launches: int, passes: int) -> float:
    """A process's time: its start, then each launch's passes."""
    return START_S + launches * passes * PASS_S


def _best_merge(clusters: list[_Cluster], costs: _Costs) -> tuple[int, int] | None:
    """The two groups whose merge saves the most time, if any merge saves time."""
    best: tuple[float, int, int] = (0.0, 0, 0)
    for i, a in enumerate(clusters):
        for j in range(i + 1, len(clusters)):
            saving = costs.saving(a, clusters[j])
            if saving is not None and (saving, i, j) > best:
                best = (saving, i, j)
    saving, i, j = best
    return (i, j) if saving > 0 else None


def _may_merge(a: _Cluster, b: _Cluster, union: frozenset[str]) -> bool:
    """Whether two groups may share a process: a pinned case's group must gain no patched metric."""
    return not any(
        is_patched(metric) for cluster in (a, b) if cluster.pinned for metric in union - cluster.metrics
    )


@dataclass(frozen=True)
class Unit:
    """One ncu process: a group's cases that one GPU profiles."""

    gpu: int
    metrics: frozenset[str]
    cases: tuple[str, ...]
    # reads results back from its kernels (in-kernel clocks): profiled with no other process on its GPU
    alone: bool = False
    # False: the runner without ncu, its cases' launch facts from the driver (runner/facts.py)
    ncu: bool = True


def spread(
    plan: Sequence[Group], cases: Sequence[ProfiledCase], gpus: Sequence[int], passes: PassCounts
) -> list[Unit]:
    """Each group's cases over the GPUs, the costliest first to the least loaded GPU (a case that opens
    a group on a GPU also pays that process's start). One GPU gets every group whole. A unit lists
    the cases each profiled case stands for (a sequence's steps, in order)."""
    launches = {case.name: case.launches for case in cases}
    stands_for = {case.name: case.cases for case in cases}
    pinned = {case.name for case in cases if case.pinned}
    load = dict.fromkeys(gpus, 0.0)
    members: dict[tuple[int, int], list[str]] = {}
    for index, group in enumerate(plan):
        per_launch = passes.passes(group.metrics) * PASS_S
        for name in sorted(group.cases, key=lambda n: -launches[n]):
            gpu = min(gpus, key=lambda g: load[g] + (0 if (g, index) in members else START_S))
            load[gpu] += launches[name] * per_launch + (0 if (gpu, index) in members else START_S)
            members.setdefault((gpu, index), []).append(name)
    return [
        Unit(
            gpu,
            plan[index].metrics,
            tuple(c for n in plan[index].cases if n in members[gpu, index] for c in stands_for[n]),
            any(n in pinned for n in members[gpu, index]),
        )
        for gpu in gpus
        for index in range(len(plan))
        if (gpu, index) in members
    ]


def needs_ncu(case: ProfiledCase) -> bool:
    """Whether ncu must profile the case: it asks for a metric the driver does not give, or it is a
    launch sequence (its steps stay together, in the process of any step that needs ncu)."""
    return bool(case.steps) or not case.metrics <= DRIVER_METRICS


def units(
    cases: Sequence[ProfiledCase], gpus: Sequence[int], passes: PassCounts, driver: bool = False
) -> list[Unit]:
    """Every process of a run: the cases that need ncu grouped and spread over the GPUs, then, with
    driver, one process of the runner alone for the cases that need no ncu, on the GPU with the fewest
    ncu processes (it needs but a start). Without driver, ncu profiles every case."""
    profiled = [case for case in cases if not driver or needs_ncu(case)]
    placed = spread(groups(profiled, passes), profiled, gpus, passes)
    unprofiled = [case for case in cases if driver and not needs_ncu(case)]
    if not unprofiled:
        return placed
    gpu = min(gpus, key=lambda g: sum(unit.gpu == g for unit in placed))
    metrics = frozenset().union(*(case.metrics for case in unprofiled))
    pinned = any(case.pinned for case in unprofiled)
    return [*placed, Unit(gpu, metrics, tuple(case.name for case in unprofiled), pinned, ncu=False)]


def launch_passes(unit: Unit, cases: Sequence[ProfiledCase], passes: PassCounts) -> int:
    """The launch-passes a unit's ncu process is predicted to take: each of its launches times the
    passes of the unit's metrics (ncu asks every launch of a process for all of them; the repeats of a
    case timed in a process of the time alone take one each). A process without ncu takes none."""
    if not unit.ncu:
        return 0
    held = set(unit.cases)
    launches = sum(case.launches for case in cases if case.cases[0] in held)
    return launches * passes.passes(unit.metrics)
