"""What a build may read, how long it may take, and whether it disassembles."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class BuildLimits:
    """What a build may read and how long it may take, set from the command line, never from an
    expectation file, which may come from the pull request under test; and whether it disassembles."""

    allowed_roots: tuple[Path, ...] = ()  # folders outside the project that kernels may include
    timeout_s: float = 120.0  # one NVRTC program, preprocessing included
    # Whether each cubin's SASS is read (nvdisasm takes most of a small program's build time): for
    # claims on SASS, and for `ncuverify build`. Without, the facts hold no SASS.
    sass: bool = False
