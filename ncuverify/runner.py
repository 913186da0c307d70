"""The program that Nsight Compute profiles: `python -m ncuverify.runner PLAN.json`.

It loads the cubins through cuda-python, allocates and fills each case's buffers, launches the case's
kernel once, synchronizes and checks every call. It prints nothing on stdout (ncu's report is read from
its own log file, but a quiet runner keeps any console clean) and records each case's outcome in the
plan's status file, rewritten after every case so that a crash loses nothing already launched.
"""

from __future__ import annotations

import json
import sys
import time
import traceback
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

# Which case is running, and since when: lets the caller stop a case that never ends.
PROGRESS_FILE = "progress.json"
# Random integer fills stay small so that index buffers and sums are well defined in any integer type.
RANDOM_INT_LIMIT = 2**15
# Launches may use this much dynamic shared memory without opting in.
DEFAULT_DYNAMIC_SHARED_LIMIT = 48 * 1024
# Every buffer starts on this boundary (cudaMalloc guarantees 256 B); `offset` moves the pointer from it.
BUFFER_ALIGNMENT = 512


@dataclass(frozen=True)
class PlannedCase:
    name: str
    cubin: str
    symbol: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared_bytes: int
    args: list[dict[str, Any]]
    repeat: int = 1


@dataclass
class Plan:
    """What the runner launches, written as JSON by the profile stage."""

    device: int
    status_path: str
    cases: list[PlannedCase] = field(default_factory=list)

    def write(self, path: Path) -> None:
        path.write_text(json.dumps(asdict(self), indent=1))

    @classmethod
    def read(cls, path: Path) -> Plan:
        data = json.loads(path.read_text())
        cases = [
            PlannedCase(**{**c, "grid": tuple(c["grid"]), "block": tuple(c["block"])}) for c in data["cases"]
        ]
        return cls(device=data["device"], status_path=data["status_path"], cases=cases)


def host_contents(arg: dict[str, Any]) -> np.ndarray | None:
    """The initial contents of a buffer as the kernel sees them; None for zeros (memset on the device)."""
    dtype = np.dtype(arg["buffer"])
    count = arg["count"]
    fill = arg.get("fill", "zeros")
    if fill == "zeros":
        return None
    if fill == "constant":
        return np.full(count, arg["value"], dtype=dtype)
    if fill == "iota":
        return np.arange(count, dtype=np.int64).astype(dtype)
    generator = np.random.default_rng(arg.get("seed", 0))
    if dtype.kind == "f":
        return generator.random(count, dtype=np.float32 if dtype.itemsize <= 4 else np.float64).astype(dtype)
    high = min(RANDOM_INT_LIMIT, int(np.iinfo(dtype).max) + 1)
    return generator.integers(0, high, size=count, dtype=np.int64).astype(dtype)


SCALAR_DTYPES = {
    "int32": np.int32,
    "uint32": np.uint32,
    "int64": np.int64,
    "uint64": np.uint64,
    "float32": np.float32,
    "float64": np.float64,
}


class _Launcher:
    """Holds the CUDA context, stream and loaded modules for one run."""

    def __init__(self, device_index: int) -> None:
        from cuda.core import Device

        self.device = Device(device_index)
        self.device.set_current()
        self.stream = self.device.create_stream()
        self.modules: dict[str, Any] = {}

    def usable(self) -> bool:
        """Whether the context survived the last error (an illegal address or a trap poisons it)."""
        from cuda.bindings import driver

        try:
            (result,) = driver.cuCtxSynchronize()
        except Exception:
            return False
        return result == driver.CUresult.CUDA_SUCCESS

    def kernel(self, cubin: str, symbol: str) -> Any:
        from cuda.core import ObjectCode

        if cubin not in self.modules:
            self.modules[cubin] = ObjectCode.from_cubin(Path(cubin).read_bytes())
        return self.modules[cubin].get_kernel(symbol)

    def run(self, case: PlannedCase) -> dict[str, float]:
        """Launch the case; return what its named buffers held afterwards (median over launches)."""
        from cuda.core import LaunchConfig, launch

        kernel = self.kernel(case.cubin, case.symbol)
        if case.shared_bytes > DEFAULT_DYNAMIC_SHARED_LIMIT:
            self._allow_dynamic_shared(kernel, case.shared_bytes)
        allocations: list[Any] = []
        readbacks: list[_Readback] = []
        try:
            args = [self._argument(arg, allocations, readbacks) for arg in case.args]
            self.stream.sync()  # fills are complete before the profiled launches
            config = LaunchConfig(grid=case.grid, block=case.block, shmem_size=case.shared_bytes)
            per_launch: list[dict[str, float]] = []
            for _ in range(case.repeat):
                launch(self.stream, config, kernel, *args)
                self.stream.sync()
                per_launch.append({k: v for r in readbacks for k, v in r.statistics().items()})
        finally:
            for buffer in allocations:
                buffer.close(self.stream)
        return {key: float(np.median([values[key] for values in per_launch])) for key in per_launch[0]}

    def _allow_dynamic_shared(self, kernel: Any, size: int) -> None:
        """Above 48 KB a kernel must opt in to dynamic shared memory."""
        from cuda.bindings import driver

        attribute = driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
        device = _value(driver.cuDeviceGet(self.device.device_id))
        _checked(driver.cuKernelSetAttribute(attribute, size, kernel.handle, device))

    def _argument(self, arg: dict[str, Any], allocations: list[Any], readbacks: list[_Readback]) -> Any:
        if "buffer" not in arg:
            (kind, value), *_ = arg.items()
            return SCALAR_DTYPES[kind](value)
        from cuda.bindings import driver
        from cuda.core import Buffer

        dtype = np.dtype(arg["buffer"])
        offset_bytes = arg.get("offset", 0) * dtype.itemsize
        size = offset_bytes + arg["count"] * dtype.itemsize
        owner = self.device.allocate(size + BUFFER_ALIGNMENT, stream=self.stream)
        allocations.append(owner)
        # Sector counts depend on where a buffer starts: align it ourselves, whatever the allocator gives.
        base = -(-int(owner.handle) // BUFFER_ALIGNMENT) * BUFFER_ALIGNMENT
        _checked(driver.cuMemsetD8Async(base, 0, size, self.stream.handle))
        contents = host_contents(arg)
        if contents is not None:
            self.stream.sync()
            _checked(driver.cuMemcpyHtoD(base + offset_bytes, contents.ctypes.data, contents.nbytes))
        if "name" in arg:
            readbacks.append(_Readback(arg["name"], base + offset_bytes, arg["count"], dtype))
        return Buffer.from_handle(base + offset_bytes, size - offset_bytes)


@dataclass(frozen=True)
class _Readback:
    """A named buffer, copied back to the host after each launch."""

    name: str
    address: int
    count: int
    dtype: np.dtype

    def statistics(self) -> dict[str, float]:
        from cuda.bindings import driver

        values = np.empty(self.count, dtype=self.dtype)
        _checked(driver.cuMemcpyDtoH(values.ctypes.data, self.address, values.nbytes))
        values = values.astype(np.float64)
        prefix = f"buffer__{self.name}."
        return {
            prefix + "first": values[0],
            prefix + "sum": values.sum(),
            prefix + "mean": values.mean(),
            prefix + "min": values.min(),
            prefix + "max": values.max(),
            prefix + "median": float(np.median(values)),
        }


def _value(result: Any) -> Any:
    """The value of a (error, value) result, raising on the error."""
    _checked(result)
    return result[1]


def _checked(result: Any) -> None:
    from cuda.bindings import driver

    error = result[0] if isinstance(result, tuple) else result
    if error != driver.CUresult.CUDA_SUCCESS:
        _, name = driver.cuGetErrorName(error)
        _, text = driver.cuGetErrorString(error)
        raise RuntimeError(f"{name.decode()}: {text.decode()}")


def run_plan(plan: Plan) -> list[dict[str, Any]]:
    """Launch every case in order; record each outcome as it ends, and which case is running.

    A fault that leaves the CUDA context unusable (an illegal address, a trap) ends the run after
    recording it: the cases after it are not tried here, and the caller runs them again in a fresh
    process.
    """
    status: list[dict[str, Any]] = []
    status_path = Path(plan.status_path)
    progress_path = status_path.with_name(PROGRESS_FILE)
    try:
        launcher = _Launcher(plan.device)
    except Exception as error:
        status = [
            {"case": c.name, "kernel": c.symbol, "ok": False, "error": f"CUDA could not start: {error}"}
            for c in plan.cases
        ]
        status_path.write_text(json.dumps(status))
        return status
    for case in plan.cases:
        progress_path.write_text(json.dumps({"case": case.name, "started": time.time()}))
        try:
            values = launcher.run(case)
            status.append(
                {
                    "case": case.name,
                    "kernel": case.symbol,
                    "ok": True,
                    "error": None,
                    "launches": case.repeat,
                    "values": values,
                }
            )
        except Exception as error:
            status.append({"case": case.name, "kernel": case.symbol, "ok": False, "error": _one_line(error)})
            if not launcher.usable():
                later = plan.cases[plan.cases.index(case) + 1 :]
                status[-1].update(context_lost=True, not_run=[c.name for c in later])
                status_path.write_text(json.dumps(status))
                break
        status_path.write_text(json.dumps(status))
    progress_path.unlink(missing_ok=True)
    return status


def _one_line(error: Exception) -> str:
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m ncuverify.runner PLAN.json", file=sys.stderr)
        return 2
    try:
        run_plan(Plan.read(Path(argv[0])))
    except Exception:
        traceback.print_exc(file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
