"""A suite split into N shares by its independent groups of cases (`spec.case_groups`), balanced by
what each group costs to profile: each case's launches times the replay passes its metrics take, as
the schedule guesses them (`schedule.PassCounts` with nothing remembered: the passes a machine's own
cache remembers would split the suite differently on two machines, and a case would be profiled twice
or never). A group of cases that no profiler claim reads costs nothing, and goes where the fewest
groups are. Every case, claim and kernel of the suite is in exactly one share; which share depends only
on the files' keys and contents, never on paths, dict order or the machine."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ncuverify.names import is_static
from ncuverify.profile.plan import claim_needs
from ncuverify.profile.schedule import PassCounts
from ncuverify.spec import Spec
from ncuverify.spec.case_groups import CaseGroup, case_groups
from ncuverify.spec.shares import Part, narrowed


@dataclass(frozen=True)
class Placed:
    """A group of one file, what profiling it costs, and the share (1-based) it went to."""

    key: str  # the file's key in the run
    group: CaseGroup
    cost: float  # launches times passes, summed over its profiled cases
    share: int


def group_cost(spec: Spec, group: CaseGroup, passes: PassCounts | None = None) -> float:
    """Launches times replay passes over the group's profiled cases (a program case: its launches)."""
    content = spec.content
    kept = set(group.claims)
    profiler = [
        c for c in content.claims if c.id in kept and not all(is_static(r.name) for r in c.metric_refs())
    ]
    passes = passes or PassCounts()
    cost = 0.0
    for name, metrics in claim_needs(profiler).items():
        if name in content.cases:
            launches = content.cases[name].repeat
        elif name in content.programs:
            launches = content.programs[name].launch_count
        else:
            launches = 1  # a program case's launch (`add#2`)
        cost += launches * passes.passes(frozenset(metrics))
    return cost


def placed(files: Sequence[tuple[str, Spec]], n: int) -> list[Placed]:
    """Every group of every file in its share: the costliest first, each to the share that costs least
    so far (of equal cost, the one with the fewest groups, then the first); of equal cost, groups go in
    the order of their file's key and their name."""
    groups = [
        (key, group, group_cost(spec, group)) for key, spec in files for group in case_groups(spec.content)
    ]
    groups.sort(key=lambda item: (-item[2], item[0], item[1].name))
    load = [0.0] * n
    count = [0] * n
    result = []
    for key, group, cost in groups:
        share = min(range(n), key=lambda s: (load[s], count[s], s))
        load[share] += cost
        count[share] += 1
        result.append(Placed(key, group, cost, share + 1))
    return result


def parts(files: Sequence[tuple[str, Spec]], k: int, n: int) -> dict[str, Part]:
    """What the k-th of n shares takes of each file (by key): every file has a part, empty or not."""
    taken = {key: Part() for key, _ in files}
    for each in placed(files, n):
        if each.share == k:
            taken[each.key] = taken[each.key].with_group(each.group)
    return taken


def share_of(spec: Spec, k: int, n: int) -> Spec:
    """The file as the k-th of n shares has it, where it is the whole suite (its key its stem)."""
    return narrowed(spec, parts([(spec.path.stem, spec)], k, n)[spec.path.stem])
