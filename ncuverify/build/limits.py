"""What a build may read and how long it may take."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class BuildLimits:
    """What a build may read and how long it may take. Set from the command line, never from an
    expectation file, which may come from the pull request under test."""

    allowed_roots: tuple[Path, ...] = ()  # folders outside the project that kernels may include
    timeout_s: float = 120.0  # one NVRTC program, preprocessing included
