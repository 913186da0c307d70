"""The launcher over cuda.core: the CUDA context, stream and modules of one run, and each buffer's
memory, fill, launches and copies back on the device."""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ncuverify.runner.case import Allocation, Argument, BufferView, ParameterBytes
from ncuverify.runner.occupancy import DRIVER_DEVICE_ATTRIBUTES, FunctionAttributes
from ncuverify.runner.plan import PlannedCase

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

    def kernel(self, cubin: str, symbol: str, shared_bytes: int) -> object:
        from cuda.core import ObjectCode

        if cubin not in self.modules:
            self.modules[cubin] = ObjectCode.from_cubin(Path(cubin).read_bytes())
        kernel = self.modules[cubin].get_kernel(symbol)
        if shared_bytes > DEFAULT_DYNAMIC_SHARED_LIMIT:
            self._allow_dynamic_shared(kernel, shared_bytes)
        return kernel

    def _allow_dynamic_shared(self, kernel: Any, size: int) -> None:
        """Above 48 KB a kernel must opt in to dynamic shared memory."""
        from cuda.bindings import driver

        attribute = driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
        device = _value(driver.cuDeviceGet(self.device.device_id))
        _checked(driver.cuKernelSetAttribute(attribute, size, kernel.handle, device))

    def allocate(self, size: int) -> Allocation:
        owner = self.device.allocate(size + BUFFER_ALIGNMENT, stream=self.stream)
        # Sector counts depend on where a buffer starts: align it ourselves, whatever the allocator gives.
        return Allocation(-(-int(owner.handle) // BUFFER_ALIGNMENT) * BUFFER_ALIGNMENT, owner)

    def fill(self, address: int, size: int, offset: int, contents: np.ndarray | None) -> None:
        from cuda.bindings import driver

        _checked(driver.cuMemsetD8Async(address, 0, size, self.stream.handle))
        if contents is not None:
            self.stream.sync()
            _checked(driver.cuMemcpyHtoD(address + offset, contents.ctypes.data, contents.nbytes))

    def launch(self, kernel: object, case: PlannedCase, args: Sequence[Argument]) -> None:
        """Through the driver, which takes every parameter as a pointer to its bytes: cuda.core cannot
        pass a struct by value."""
        from cuda.bindings import driver

        function = _function(kernel)  # a cuda.core Kernel, from kernel(): its handle is a CUkernel
        held = [ctypes.create_string_buffer(data, len(data)) for data in map(parameter_bytes, args)]
        pointers = (ctypes.c_void_p * max(1, len(held)))(*(ctypes.addressof(h) for h in held))
        grid, block = case.grid, case.block
        _checked(
            driver.cuLaunchKernel(
                function, *grid, *block, case.shared_bytes, self.stream.handle, ctypes.addressof(pointers), 0
            )
        )

    def synchronize(self) -> None:
        self.stream.sync()

    def read_back(self, address: int, count: int, dtype: np.dtype) -> np.ndarray:
        from cuda.bindings import driver

        values = np.empty(count, dtype=dtype)
        _checked(driver.cuMemcpyDtoH(values.ctypes.data, address, values.nbytes))
        return values

    def free(self, allocation: Allocation) -> None:
        buffer: Any = allocation.owner  # a cuda.core Buffer, from allocate
        buffer.close(self.stream)

    def device_attributes(self) -> dict[str, int]:
        """The attributes the launch facts are worked out from, as the driver gives them."""
        from cuda.bindings import driver

        device = _value(driver.cuDeviceGet(self.device.device_id))
        named = driver.CUdevice_attribute
        return {
            name: int(
                _value(
                    driver.cuDeviceGetAttribute(getattr(named, f"CU_DEVICE_ATTRIBUTE_{name.upper()}"), device)
                )
            )
            for name in DRIVER_DEVICE_ATTRIBUTES
        }

    def function_attributes(self, kernel: object) -> FunctionAttributes:
        from cuda.bindings import driver

        function = _function(kernel)
        named = driver.CUfunction_attribute
        registers = _value(driver.cuFuncGetAttribute(named.CU_FUNC_ATTRIBUTE_NUM_REGS, function))
        static = _value(driver.cuFuncGetAttribute(named.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, function))
        return FunctionAttributes.of_driver(int(registers), int(static))

    def active_blocks(self, kernel: object, block_threads: int, dynamic_shared: int) -> int:
        from cuda.bindings import driver

        occupancy = driver.cuOccupancyMaxActiveBlocksPerMultiprocessor
        return int(_value(occupancy(_function(kernel), block_threads, dynamic_shared)))


def _function(kernel: object) -> Any:
    """The CUfunction of a cuda.core Kernel (from CudaLauncher.kernel), in the current context."""
    from cuda.bindings import driver

    loaded: Any = kernel
    return _value(driver.cuKernelGetFunction(loaded.handle))


def parameter_bytes(arg: Argument) -> bytes:
    """What the kernel's parameter space receives for an argument: a buffer's device address, a
    scalar's or a struct's bytes."""
    if isinstance(arg, BufferView):
        return arg.address.to_bytes(8, "little")
    if isinstance(arg, ParameterBytes):
        return arg.data
    return arg.tobytes()


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
