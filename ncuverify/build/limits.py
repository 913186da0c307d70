"""What a build may read, how long it may take, and whether it disassembles; and the bounds on what a
cubin or a built artifact may make ncuverify read, which no file can change."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

MIB = 1024 * 1024
# One cubin, however it comes (nvcc's output, or one a built artifact holds). The largest measured are a
# few MiB: 6 MiB for a cubin of 4000 kernels, 1.8 MiB for the largest of libcurand's.
MAX_CUBIN_BYTES = 256 * MIB
# All the cubins (and PTX) of one artifact, unpacked: what cuobjdump may write and ncuverify hold. The
# CUDA wheels' libcurand, 1933 fatbin entries in all, unpacks to 150 MiB.
MAX_UNPACKED_BYTES = 1024 * MIB
# How long reading one artifact's fatbin headers, or its cubins' ELF tables, may take (cuobjdump's run
# and the copy aside: they have their own limits). Reading libcurand's 93 cubins and its 1760 fatbins
# takes well under a second; a crafted table is refused by the bounds on its size long before this.
READ_TIME_LIMIT_S = 20.0


@dataclass(frozen=True)
class BuildLimits:
    """What a build may read and how long it may take, set from the command line, never from an
    expectation file, which may come from the pull request under test; and whether it disassembles."""

    allowed_roots: tuple[Path, ...] = ()  # folders outside the project that kernels may include
    timeout_s: float = 120.0  # one NVRTC program, preprocessing included
    # Whether each cubin's SASS is read (nvdisasm takes most of a small program's build time): for
    # claims on SASS, and for `ncuverify build`. Without, the facts hold no SASS.
    sass: bool = False
    # The CUDA toolkit whose nvcc compiles `compiler: nvcc` kernels (--cuda-home); None: the file's
    # `toolkit:`, else CUDA_HOME, CUDA_PATH, the CUDA wheels, the PATH (ncuverify.build.host).
    cuda_home: Path | None = None


class Deadline:
    """The moment by which reading one artifact must end, checked in the loops over its tables: what
    their bounds let through still cannot add up across thousands of cubins."""

    def __init__(self, seconds: float = READ_TIME_LIMIT_S) -> None:
        self.seconds = seconds
        self._end = time.monotonic() + seconds

    def passed(self) -> bool:
        return time.monotonic() > self._end


def in_mib(size: int) -> str:
    """A size as a message says it: in MiB, or in bytes below one."""
    return f"{size / MIB:,.0f} MiB" if size >= MIB else f"{size:,} bytes"
