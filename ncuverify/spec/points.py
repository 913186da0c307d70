"""Where a sweep's cases and claims stand: the values of the sweep's variables at each, kept as data
when a sweep is expanded, so that no one reads them back from a name (`time__n_4096`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

# The values of a sweep's variables at one of its points, in the sweep's order: (("n", 4096),).
Point = tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class SweepPoints:
    """Where each case and claim that a sweep made stands: its sweep's variables' values (the cases
    and claims written plain have none)."""

    cases: Mapping[str, Point] = field(default_factory=dict)
    claims: Mapping[str, Point] = field(default_factory=dict)
