"""What this machine offers: an NVIDIA GPU (and its architecture) and Nsight Compute."""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ncuverify.errors import EnvironmentProblem
from ncuverify.processes import TimedOut, run_bounded


@dataclass(frozen=True)
class Gpu:
    index: int
    name: str
    arch: str  # sm_90
    driver_version: str


def detect_gpu(index: int = 0) -> Gpu:
    """The GPU the runner will use; EnvironmentProblem if there is none."""
    try:
        from cuda.bindings import driver

        _ok(driver.cuInit(0))
        count = _ok(driver.cuDeviceGetCount())
    except EnvironmentProblem:
        raise
    except Exception:  # the driver library itself is missing: no NVIDIA driver here
        raise EnvironmentProblem(
            "no NVIDIA GPU: the CUDA driver library (libcuda) cannot be loaded"
        ) from None
    if count <= index:
        raise EnvironmentProblem(f"no NVIDIA GPU: the driver reports {count} device(s)")
    device = _ok(driver.cuDeviceGet(index))
    attribute = driver.CUdevice_attribute
    major = _ok(driver.cuDeviceGetAttribute(attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device))
    minor = _ok(driver.cuDeviceGetAttribute(attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device))
    name = _ok(driver.cuDeviceGetName(64, device)).split(b"\0", 1)[0].decode()
    version = _ok(driver.cuDriverGetVersion())
    return Gpu(index, name, f"sm_{major}{minor}", f"{version // 1000}.{version % 1000 // 10}")


def gpu_count() -> int:
    """How many GPUs the CUDA driver reports (0 where there is no driver)."""
    try:
        from cuda.bindings import driver

        _ok(driver.cuInit(0))
        return int(_ok(driver.cuDeviceGetCount()))
    except Exception:  # no driver library, or no device: no GPU to profile on
        return 0


@dataclass(frozen=True)
class Environment:
    """What the machine can do, probed once per run."""

    gpu: Gpu | None
    ncu: str | None
    problem: str | None  # why profiler claims cannot be measured here
    gpu_count: int = 0

    @classmethod
    def probe(cls, ncu_executable: str) -> Environment:
        try:
            gpu = detect_gpu()
        except EnvironmentProblem as problem:
            return cls(None, None, str(problem))
        try:
            return cls(gpu, find_ncu(ncu_executable), None, gpu_count())
        except EnvironmentProblem as problem:
            return cls(gpu, None, str(problem), gpu_count())


# The oldest Nsight Compute whose command line and CSV ncuverify relies on.
OLDEST_NCU = (2022, 1)
# ncu answers --version in about a second; one that takes longer than this is stuck.
VERSION_TIMEOUT_S = 10.0
# What ncu --version prints: "Version 2025.3.1.0 (build 36398880) (public-release)".
_VERSION_LINE = re.compile(r"Version ([0-9]{1,5}(?:\.[0-9]{1,9}){1,4})(?:\s|$)")


def find_ncu(executable: str) -> str:
    """The path of ncu; EnvironmentProblem if it is not installed or too old."""
    found = shutil.which(executable) or (executable if Path(executable).is_file() else None)
    if found is None:
        raise EnvironmentProblem(
            f"Nsight Compute's ncu is not on the PATH (looked for {executable!r}): install it or pass --ncu PATH"
        )
    version = ncu_version(found)
    if version is None:
        raise EnvironmentProblem(
            f"{found} does not say which Nsight Compute it is (ncu --version): is it ncu?"
        )
    numbers = tuple(int(part) for part in version.split(".")[:2])
    if numbers < OLDEST_NCU:
        oldest = ".".join(str(n) for n in OLDEST_NCU)
        raise EnvironmentProblem(
            f"ncu {version} is too old: ncuverify needs Nsight Compute {oldest} or newer"
        )
    return found


def ncu_version(executable: str) -> str | None:
    """`ncu --version`'s version number, e.g. 2025.3.1.0; None where it names none, or cannot run.
    EnvironmentProblem where it does not answer within VERSION_TIMEOUT_S (its process group is
    killed: nothing it started is left waiting)."""
    try:
        output = run_bounded([executable, "--version"], VERSION_TIMEOUT_S, env={**os.environ, "LC_ALL": "C"})
    except TimedOut:
        raise EnvironmentProblem(
            f"{executable} --version did not answer within {VERSION_TIMEOUT_S:g} s; stopped: is it ncu?"
        ) from None
    except OSError:
        return None
    for line in output.stdout.splitlines():
        found = _VERSION_LINE.match(line)
        if found:
            return found.group(1)
    return None


def _ok(result: tuple[Any, ...]) -> Any:
    from cuda.bindings import driver

    error, *values = result
    if error != driver.CUresult.CUDA_SUCCESS:
        if error == driver.CUresult.CUDA_ERROR_NO_DEVICE:
            raise EnvironmentProblem("no NVIDIA GPU: the driver found no device")
        raise EnvironmentProblem(f"the CUDA driver failed: {error.name}")
    return values[0] if len(values) == 1 else tuple(values)
