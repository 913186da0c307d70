"""Where a live profile's figures come from: the GPU and its driver, ncu and NVRTC, ncu's settings and
command, and a digest of every profiled kernel's source and of what every case launched with."""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

from ncuverify import __version__, profile
from ncuverify.build import nvrtc_version
from ncuverify.environment import Gpu, ncu_version
from ncuverify.errors import EnvironmentProblem
from ncuverify.profile import plan, recording
from ncuverify.provenance import Provenance
from ncuverify.spec.digests import case_digests


@dataclass(frozen=True)
class MachineFacts:
    """What the tools say of themselves: nvidia-smi the driver's version, ncu its own, NVRTC its own."""

    nvidia_driver: str | None
    ncu_version: str | None
    nvrtc_version: str


def machine_facts(ncu: profile.NcuOptions) -> MachineFacts:
    """Asked of nvidia-smi and ncu, each a process of its own (some tenths of a second together). An ncu
    that no longer answers leaves its version unknown: the run's measurements are kept."""
    major, minor = nvrtc_version()
    try:
        version = ncu_version(ncu.executable)
    except EnvironmentProblem:
        version = None
    return MachineFacts(recording.nvidia_driver_version(), version, f"{major}.{minor}")


def machine_facts_meanwhile(ncu: profile.NcuOptions) -> Future[MachineFacts]:
    """machine_facts on a thread of its own, asked while ncu profiles (nothing in them depends on it)."""
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ncuverify-facts")
    try:
        return pool.submit(machine_facts, ncu)
    finally:
        pool.shutdown(wait=False)


def live_provenance(
    gpu: Gpu,
    ncu: profile.NcuOptions,
    command: list[str],
    files: list[plan.FileCases],
    facts: MachineFacts,
) -> Provenance:
    return Provenance(
        recorded_at=recording.now(),
        gpu=gpu.name,
        arch=gpu.arch,
        nvidia_driver=facts.nvidia_driver,
        cuda_driver=gpu.driver_version,
        ncu_version=facts.ncu_version,
        nvrtc_version=facts.nvrtc_version,
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
