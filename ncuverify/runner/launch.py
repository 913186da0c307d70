"""The launcher over cuda.core: the CUDA context, stream and modules of one run, and each case's
buffers, launches and readbacks on the device."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ncuverify.runner.fills import SCALAR_DTYPES, host_contents
from ncuverify.runner.plan import PlannedCase
from ncuverify.runner.status import READBACK_PREFIX

# Launches may use this much dynamic shared memory without opting in.
DEFAULT_DYNAMIC_SHARED_LIMIT = 48 * 1024
# Every buffer starts on this boundary (cudaMalloc guarantees 256 B); `offset` moves the pointer from it.
BUFFER_ALIGNMENT = 512


class CudaLauncher:
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
        prefix = f"{READBACK_PREFIX}{self.name}."
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
