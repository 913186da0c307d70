"""Stage 2, the build: each kernel's include graph checked, its flags checked, its program compiled
with NVRTC in a worker process, and its static facts read."""

from ncuverify.build.built import KernelBuild
from ncuverify.build.compile import build_spec
from ncuverify.build.limits import BuildLimits
from ncuverify.build.static import (
    BUILD_COLUMNS,
    STATIC_METRICS,
    StaticFacts,
    StaticMetric,
    measurement_rows,
    reads_sass,
)
from ncuverify.build.toolkit import cuda_include_dirs, nvrtc_version

__all__ = [
    "BUILD_COLUMNS",
    "STATIC_METRICS",
    "BuildLimits",
    "KernelBuild",
    "StaticFacts",
    "StaticMetric",
    "build_spec",
    "cuda_include_dirs",
    "measurement_rows",
    "nvrtc_version",
    "reads_sass",
]
