"""Where a live profile's figures come from: the GPU and its driver, ncu and NVRTC, ncu's settings and
command, and a digest of every profiled kernel's source and of what every case launched with."""

from __future__ import annotations

from ncuverify import __version__, profile
from ncuverify.build import nvrtc_version
from ncuverify.environment import Gpu
from ncuverify.profile import plan, recording
from ncuverify.provenance import Provenance
from ncuverify.spec.digests import case_digests


def live_provenance(
    gpu: Gpu,
    ncu: profile.NcuOptions,
    ncu_version: str | None,
    command: list[str],
    files: list[plan.FileCases],
) -> Provenance:
    """ncu_version is what ncu said it is when the run began: it is not asked again after the run,
    which would cost about a second, or the run's measurements where that ncu no longer answers."""
    major, minor = nvrtc_version()
    return Provenance(
        recorded_at=recording.now(),
        gpu=gpu.name,
        arch=gpu.arch,
        nvidia_driver=recording.nvidia_driver_version(),
        cuda_driver=gpu.driver_version,
        ncu_version=ncu_version,
        nvrtc_version=f"{major}.{minor}",
        ncuverify_version=__version__,
        clock_control=ncu.clock_control,
        cache_control=ncu.cache_control,
        ncu_command=command,
        kernels={
            plan.qualified(file.key, name): build.source_digest
            for file in files
            for name, build in file.builds.items()
        },
        cases={
            plan.qualified(file.key, name): digest
            for file in files
            for name, digest in case_digests(file.spec).items()
        },
    )
