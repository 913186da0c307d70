"""Where a live profile's figures come from: the GPU and its driver, ncu and NVRTC, ncu's settings and
command, and a digest of every profiled kernel's source, of what every case launched with and of the
files every program case's command names; and every case's measurement key, which `check --reuse`
compares."""

from __future__ import annotations

from dataclasses import replace

from ncuverify import __version__, profile
from ncuverify.build import nvrtc_version
from ncuverify.environment import Gpu, ncu_version
from ncuverify.errors import EnvironmentProblem
from ncuverify.names import QualifiedCase
from ncuverify.profile import plan, recording
from ncuverify.profile.measurement_keys import gpu_identity, measurement_keys
from ncuverify.provenance import Provenance
from ncuverify.spec.digests import case_digests, program_file_digests


def live_provenance(
    gpu: Gpu, ncu: profile.NcuOptions, command: list[str], files: list[plan.FileCases]
) -> Provenance:
    major, minor = nvrtc_version()
    provenance = Provenance(
        recorded_at=recording.now(),
        gpu=gpu.name,
        arch=gpu.arch,
        nvidia_driver=recording.nvidia_driver_version(),
        cuda_driver=gpu.driver_version,
        ncu_version=_ncu_version(ncu),
        nvrtc_version=f"{major}.{minor}",
        ncuverify_version=__version__,
        clock_control=ncu.clock_control,
        cache_control=ncu.cache_control,
        ncu_command=command,
        kernels={
            str(QualifiedCase.of(file.key, name)): build.source_digest
            for file in files
            for name, build in file.builds.items()
        },
        cases={
            str(QualifiedCase.of(file.key, name)): digest
            for file in files
            for name, digest in case_digests(file.spec).items()
        },
        nvcc={
            str(QualifiedCase.of(file.key, name)): build.nvcc
            for file in files
            for name, build in file.builds.items()
            if build.nvcc is not None
        },
        program_files={
            str(QualifiedCase.of(file.key, name)): digests
            for file in files
            for name, digests in program_file_digests(file.spec).items()
        },
    )
    return replace(provenance, measurement_keys=measurement_keys(files, gpu_identity(provenance)))


def _ncu_version(ncu: profile.NcuOptions) -> str | None:
    """ncu's version, asked before the run profiles (the measurement keys hold it): an ncu that does
    not answer leaves it unknown (and the run reuses nothing) rather than the run's measurements lost."""
    try:
        return ncu_version(ncu.executable)
    except EnvironmentProblem:
        return None
