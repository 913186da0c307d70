"""A launcher that plays a GPU on the host, for the runner's tests: device memory is host memory, and a
kernel adds its case's own number (case_number) to every element of every buffer it is given, so that
what a case reads back differs from case to case and from launch to launch.

Errors are played where CUDA raises them: a launch that CUDA refuses raises at once and leaves the
context usable; a kernel that faults raises at the next synchronize and poisons the context.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ncuverify.runner.case import Allocation, Argument, BufferView
from ncuverify.runner.launch import BUFFER_ALIGNMENT
from ncuverify.runner.plan import PlannedBuffer, PlannedCase, PlannedUse

ILLEGAL_ADDRESS = "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered"
TOO_MANY_RESOURCES = "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: too many resources requested for launch"


class CUDAError(RuntimeError):
    """As cuda.core names the errors it raises."""


def case_number(name: str) -> int:
    """A number of the case's own (the same on every run)."""
    return zlib.crc32(name.encode()) % 997 + 1


@dataclass(frozen=True)
class FakeKernel:
    cubin: str
    symbol: str
    shared_bytes: int


@dataclass
class FakeLauncher:
    """refused: cases whose launch CUDA refuses; faults: cases whose kernel faults; unreadable: cases
    whose buffers cannot be copied back. What it was asked is kept in the lists below."""

    device: int
    refused: frozenset[str] = frozenset()
    faults: frozenset[str] = frozenset()
    unreadable: frozenset[str] = frozenset()
    memory: dict[int, np.ndarray] = field(default_factory=dict)  # base -> its bytes
    kernels: list[FakeKernel] = field(default_factory=list)
    launches: list[str] = field(default_factory=list)  # the case of each launch
    freed: list[int] = field(default_factory=list)
    lost: bool = False
    pending_fault: bool = False
    named: dict[str, PlannedBuffer] = field(default_factory=dict)  # the named buffers, by name

    def kernel(self, cubin: str, symbol: str, shared_bytes: int) -> object:
        self._healthy()
        loaded = FakeKernel(cubin, symbol, shared_bytes)
        self.kernels.append(loaded)
        return loaded

    def allocate(self, size: int) -> Allocation:
        self._healthy()
        base = (1 + len(self.memory)) * 64 * BUFFER_ALIGNMENT
        self.memory[base] = np.full(size, 0xAB, dtype=np.uint8)  # what a fresh allocation may hold
        return Allocation(base, f"allocation at {base:#x}")

    def fill(self, address: int, size: int, offset: int, contents: np.ndarray | None) -> None:
        self._healthy()
        buffer = self.memory[address]
        buffer[:size] = 0
        if contents is not None:
            buffer[offset : offset + contents.nbytes] = contents.view(np.uint8)

    def launch(self, kernel: object, case: PlannedCase, args: Sequence[Argument]) -> None:
        self._healthy()
        assert isinstance(kernel, FakeKernel) and kernel.symbol == case.symbol, "the case's own kernel"
        if case.name in self.refused:
            raise CUDAError(TOO_MANY_RESOURCES)
        self.launches.append(case.name)
        if case.name in self.faults:
            self.pending_fault = True
            return
        self.named.update(
            {a.name: a for a in case.args if isinstance(a, PlannedBuffer) and a.name is not None}
        )
        # a step's {use: NAME} is the buffer an earlier step made, of that step's type and count
        buffers = [
            self.named[arg.use] if isinstance(arg, PlannedUse) else arg
            for arg in case.args
            if isinstance(arg, PlannedBuffer | PlannedUse) and arg.passed
        ]
        views = [arg for arg in args if isinstance(arg, BufferView)]
        assert len(buffers) == len(views), "every buffer given as a buffer"
        for spec, view in zip(buffers, views, strict=True):
            values = self._view(view.address, spec.count, np.dtype(spec.buffer))
            values += np.asarray(case_number(case.name)).astype(values.dtype)

    def synchronize(self) -> None:
        if self.pending_fault:
            self.pending_fault, self.lost = False, True
            raise CUDAError(ILLEGAL_ADDRESS)
        self._healthy()

    def read_back(self, address: int, count: int, dtype: np.dtype) -> np.ndarray:
        self._healthy()
        if self.launches and self.launches[-1] in self.unreadable:
            raise RuntimeError("CUDA_ERROR_INVALID_VALUE: invalid argument")
        return self._view(address, count, dtype).copy()

    def free(self, allocation: Allocation) -> None:
        self.freed.append(allocation.base)

    def usable(self) -> bool:
        return not self.lost

    def _view(self, address: int, count: int, dtype: np.dtype) -> np.ndarray:
        """count values of dtype at address, in the allocation that holds it."""
        base = max(b for b in self.memory if b <= address)
        start = address - base
        return self.memory[base][start : start + count * dtype.itemsize].view(dtype)

    def _healthy(self) -> None:
        """A poisoned context fails every later call with the error that poisoned it."""
        if self.lost:
            raise CUDAError(ILLEGAL_ADDRESS)
