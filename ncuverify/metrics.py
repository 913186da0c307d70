"""Which metric names Nsight Compute knows, per chip, so that a misspelt metric is an input error
found before profiling (with a "did you mean"), not a profiler error after it.

The lists ship with the package (data/metrics-<chip>.txt, from `ncu --query-metrics --chip <chip>`).
Launch statistics and device attributes are not in those lists; ncu itself judges those names.
"""

from __future__ import annotations

import difflib
from functools import cache
from importlib import resources

# The chip a build target runs on, where the package carries that chip's metric list.
CHIPS = {"sm_90": "gh100", "sm_90a": "gh100"}
_UNLISTED_PREFIXES = ("launch__", "device__attribute_", "profiler__")
# Accepted by ncu (they are in recordings made with it), absent from its own list.
_UNLISTED = {"sm__maximum_warps_per_active_cycle_pct", "sm__maximum_warps_avg_per_active_cycle"}


@cache
def known_bases(chip: str) -> frozenset[str]:
    text = resources.files("ncuverify").joinpath(f"data/metrics-{chip}.txt").read_text()
    return frozenset(line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#"))


def unknown(names: set[str], arch: str) -> dict[str, str]:
    """The names ncu does not know on arch's chip, each with a suggestion ('' if none); {} where the
    package has no list for that chip."""
    chip = CHIPS.get(arch)
    if chip is None:
        return {}
    bases = known_bases(chip)
    problems = {}
    for name in sorted(names):
        base = name.split(".", 1)[0]
        if base in bases or name in _UNLISTED or name.startswith(_UNLISTED_PREFIXES):
            continue
        close = difflib.get_close_matches(base, bases, n=1, cutoff=0.8)
        problems[name] = close[0] + name[len(base) :] if close else ""
    return problems
