"""`ncuverify build --diff OLD NEW`: what changed between two builds, kernel by kernel (matched by
symbol and architecture): each static fact before and after, the opcodes whose counts moved, and the
kernels added and removed."""

from __future__ import annotations

from dataclasses import dataclass

from ncuverify.build.artifacts_listing import ListedKernel
from ncuverify.build.static import BUILD_COLUMNS


@dataclass(frozen=True)
class KernelChange:
    """One kernel in both builds that changed."""

    name: str
    arch: str
    facts: tuple[tuple[str, float, float], ...]  # (metric, before, after)
    opcodes: tuple[tuple[str, int, int], ...]  # (opcode, before, after)

    @property
    def grew(self) -> bool:
        """Whether a fact grew (a register, a byte of stack, an instruction more)."""
        return any(after > before for _, before, after in self.facts)


@dataclass(frozen=True)
class BuildDiff:
    changed: tuple[KernelChange, ...]
    added: tuple[ListedKernel, ...]
    removed: tuple[ListedKernel, ...]
    unchanged: int

    @property
    def grew(self) -> bool:
        return any(change.grew for change in self.changed)


def diff(old: list[ListedKernel], new: list[ListedKernel]) -> BuildDiff:
    """The changes from old to new. A kernel listed twice on one side with the same facts and opcodes
    (two copies of a library) is compared once; one listed twice with others is refused first (see
    listed_again)."""
    before = {kernel.key: kernel for kernel in reversed(old)}
    after = {kernel.key: kernel for kernel in reversed(new)}
    changed, unchanged = [], 0
    for key in sorted(before.keys() & after.keys(), key=lambda k: (before[k].name, k)):
        change = _change(before[key], after[key])
        if change is None:
            unchanged += 1
        else:
            changed.append(change)
    added = tuple(sorted((after[k] for k in after.keys() - before.keys()), key=_order))
    removed = tuple(sorted((before[k] for k in before.keys() - after.keys()), key=_order))
    return BuildDiff(tuple(changed), added, removed, unchanged)


def listed_again(kernels: list[ListedKernel]) -> tuple[int, int] | None:
    """The first kernel listed again (same symbol and architecture) with other facts or opcodes, and
    the earlier listing: (its index, the earlier one's). Which of the two to compare cannot be told,
    and comparing either would let the other grow unseen."""
    first: dict[tuple[str, str], int] = {}
    for index, kernel in enumerate(kernels):
        earlier = first.setdefault(kernel.key, index)
        listed = kernels[earlier]
        if (listed.facts, listed.mix) != (kernel.facts, kernel.mix):
            return index, earlier
    return None


def _order(kernel: ListedKernel) -> tuple[str, str, str]:
    return (kernel.name, kernel.symbol, kernel.arch)


def _change(old: ListedKernel, new: ListedKernel) -> KernelChange | None:
    # Facts that one side does not carry (an artifact has no spill counts) are not a change of the
    # kernel; they are left out. The rest in `build`'s column order.
    names = [metric.name for metric in BUILD_COLUMNS if metric.name in old.facts and metric.name in new.facts]
    facts = tuple(
        (name, old.facts[name], new.facts[name]) for name in names if old.facts[name] != new.facts[name]
    )
    opcodes = tuple(
        (op, old.mix.get(op, 0), new.mix.get(op, 0))
        for op in sorted(old.mix.keys() | new.mix.keys())
        if old.mix.get(op, 0) != new.mix.get(op, 0)
    )
    if not facts and not opcodes:
        return None
    return KernelChange(new.name, new.arch, facts, opcodes)
