"""The topics of failed claims that a second ncu pass explains: global memory (coalescing) and shared
memory (bank conflicts), each with the per-line metrics of the source page and the ncu rules about it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType


@dataclass(frozen=True)
class Topic:
    """What explains one kind of claim: a per-line metric of the source page and the ncu rules."""

    name: str
    excess_metric: str  # source-page column: what this line did beyond the ideal
    total_metric: str  # source-page column: what this line did in all, to put the excess in proportion
    rules: tuple[str, ...]  # ncu rule names that speak about this topic
    unit: str  # what the metrics count, for the report


# Read-only so that no caller can change what another one sees.
TOPICS: Mapping[str, Topic] = MappingProxyType(
    {
        "global": Topic(
            name="global",
            excess_metric="L2 Theoretical Sectors Global Excessive",
            total_metric="L2 Theoretical Sectors Global",
            rules=("UncoalescedGlobalAccess", "MemoryCacheAccessPattern"),
            unit="sectors",
        ),
        "shared": Topic(
            name="shared",
            excess_metric="L1 Wavefronts Shared Excessive",
            total_metric="L1 Wavefronts Shared",
            rules=("SharedMemoryConflicts", "UncoalescedSharedAccess"),
            unit="wavefronts",
        ),
    }
)


def topic_of(metric_names: Iterable[str]) -> str | None:
    """The topic of a claim, from the ncu metric names it reads; None when no topic fits.

    Shared memory wins over global memory: a claim that reads both is about the shared-memory side,
    since the global side of such kernels is usually only the loads that feed the tile.
    """
    names = [name.lower() for name in metric_names]
    if any("shared" in name or "bank_conflicts" in name for name in names):
        return "shared"
    if any(_concerns_global(name) for name in names):
        return "global"
    return None


def _concerns_global(name: str) -> bool:
    return (
        "global" in name
        or name.startswith(("dram__", "lts__"))
        or name.startswith("smsp__sass_average_data_bytes_per_sector")
    )
