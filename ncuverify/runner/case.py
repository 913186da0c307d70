"""One case on a launcher: its arguments placed on the device, its launches, and what its named buffers
held after each launch (the median over the launches).

The launcher is what this needs of CUDA, and all of it (Launcher): the one over cuda.core in launch.py,
or a stand-in that plays a GPU.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Protocol

import numpy as np

from ncuverify.names import BUFFER_PREFIX
from ncuverify.npy_files import BFLOAT16, storage_dtype
from ncuverify.runner.ahead import Contents, made_here
from ncuverify.runner.fills import SCALAR_DTYPES, bfloat16_values, scalar_bytes, struct_bytes
from ncuverify.runner.plan import PlannedBuffer, PlannedCase, PlannedScalar, PlannedStruct, PlannedUse


@dataclass(frozen=True)
class Allocation:
    """Device memory allocated for one buffer: base is where the buffer starts (aligned), owner what
    the launcher frees."""

    base: int
    owner: object


@dataclass(frozen=True)
class BufferView:
    """A buffer as its kernel argument sees it: size bytes from address (its offset applied)."""

    address: int
    size: int


@dataclass(frozen=True)
class ParameterBytes:
    """A parameter numpy has no type for, as the bytes the kernel reads: a bfloat16, or a struct with
    its pointers patched in."""

    data: bytes


# What a kernel is given: a buffer, a scalar of its type, or a parameter's bytes.
Argument = BufferView | np.generic | ParameterBytes


class Launcher(Protocol):
    """What running the cases of a plan asks of CUDA."""

    def kernel(self, cubin: str, symbol: str, shared_bytes: int) -> object:
        """The kernel symbol of the cubin, allowed shared_bytes of dynamic shared memory."""
        ...

    def allocate(self, size: int) -> Allocation:
        """Device memory for a buffer of size bytes."""
        ...

    def fill(self, address: int, size: int, offset: int, contents: np.ndarray | None) -> None:
        """Zero size bytes from address, then copy contents (if any) in at offset bytes from it."""
        ...

    def launch(self, kernel: object, case: PlannedCase, args: Sequence[Argument]) -> None:
        """Launch the kernel once with the case's grid, block and dynamic shared memory."""
        ...

    def synchronize(self) -> None:
        """Wait for all the work given so far; raise its error."""
        ...

    def read_back(self, address: int, count: int, dtype: np.dtype) -> np.ndarray:
        """count values of dtype from address, copied to the host."""
        ...

    def free(self, allocation: Allocation) -> None: ...

    def usable(self) -> bool:
        """Whether the context survived the last error (an illegal address or a trap poisons it)."""
        ...


@dataclass(frozen=True)
class _Readback:
    """A named buffer, copied back to the host after each launch."""

    name: str
    address: int
    count: int
    dtype: np.dtype
    bfloat16: bool = False  # held as bit patterns (dtype uint16): read back as the values they stand for

    def statistics(self, launcher: Launcher) -> dict[str, float]:
        data = launcher.read_back(self.address, self.count, self.dtype)
        values = (bfloat16_values(data) if self.bfloat16 else data).astype(np.float64)
        prefix = f"{BUFFER_PREFIX}{self.name}."
        return {
            prefix + "first": values[0],
            prefix + "sum": values.sum(),
            prefix + "mean": values.mean(),
            prefix + "min": values.min(),
            prefix + "max": values.max(),
            prefix + "median": float(np.median(values)),
        }


@dataclass
class SequenceBuffers:
    """The buffers of a launch sequence's steps so far, kept on the device until the sequence ends:
    a later step passes one again by its name ({"use": NAME})."""

    sequence: str = ""
    named: dict[str, tuple[BufferView, _Readback]] = field(default_factory=dict)
    allocations: list[Allocation] = field(default_factory=list)
    failed: bool = False  # a step failed: the steps after it do not run

    def release(self, launcher: Launcher) -> None:
        allocations, self.allocations, self.named = self.allocations, [], {}
        for allocation in allocations:
            launcher.free(allocation)


def run_case(
    launcher: Launcher,
    case: PlannedCase,
    shared: SequenceBuffers | None = None,
    contents: Contents = made_here,
) -> dict[str, float]:
    """Launch the case; return what its named buffers held afterwards (median over launches). A step
    of a sequence takes the sequence's buffers (shared) and leaves its own there. contents gives each
    buffer's initial contents by its argument's position (made ahead); by default they are made here."""
    kernel = launcher.kernel(case.cubin, case.symbol, case.shared_bytes)
    pool = shared if case.sequence else None  # a step's buffers stay with its sequence
    allocations: list[Allocation] = pool.allocations if pool is not None else []
    readbacks: list[_Readback] = []
    try:
        # Buffers first: a struct before its buffer in the list holds that buffer's address.
        buffers: dict[int, BufferView] = {}
        addresses: dict[str, int] = {}
        for i, arg in enumerate(case.args):
            if isinstance(arg, PlannedBuffer):
                buffers[i] = _buffer(launcher, arg, partial(contents, i, arg), allocations, readbacks)
                if pool is not None and arg.name is not None:
                    pool.named[arg.name] = (buffers[i], readbacks[-1])
            elif isinstance(arg, PlannedUse):
                buffers[i] = _used(arg.use, pool, readbacks)
            if isinstance(arg, PlannedBuffer | PlannedUse) and arg.name is not None:
                addresses[arg.name] = buffers[i].address
        args = [
            buffers[i] if isinstance(arg, PlannedBuffer | PlannedUse) else _parameter(arg, addresses)
            for i, arg in enumerate(case.args)
            if arg.passed
        ]
        launcher.synchronize()  # fills are complete before the profiled launches
        per_launch: list[dict[str, float]] = []
        for _ in range(case.repeat):
            launcher.launch(kernel, case, args)
            launcher.synchronize()
            per_launch.append({k: v for r in readbacks for k, v in r.statistics(launcher).items()})
    finally:
        if pool is None:
            for allocation in allocations:
                launcher.free(allocation)
    return {key: float(np.median([values[key] for values in per_launch])) for key in per_launch[0]}


def _used(name: str, shared: SequenceBuffers | None, readbacks: list[_Readback]) -> BufferView:
    """A buffer an earlier step of the sequence made, read back after this step too."""
    if shared is None or name not in shared.named:
        raise RuntimeError(f"buffer {name!r}: the earlier step that makes it did not run before this one")
    view, readback = shared.named[name]
    readbacks.append(readback)
    return view


def _parameter(arg: PlannedScalar | PlannedStruct, addresses: dict[str, int]) -> np.generic | ParameterBytes:
    if isinstance(arg, PlannedStruct):
        return ParameterBytes(struct_bytes(arg.layout, addresses))
    if arg.kind not in SCALAR_DTYPES:
        return ParameterBytes(scalar_bytes(arg.kind, arg.value))
    return SCALAR_DTYPES[arg.kind](arg.value)


def _buffer(
    launcher: Launcher,
    arg: PlannedBuffer,
    contents: Callable[[], np.ndarray | None],
    allocations: list[Allocation],
    readbacks: list[_Readback],
) -> BufferView:
    dtype = storage_dtype(arg.buffer)
    offset_bytes = arg.offset * dtype.itemsize
    size = offset_bytes + arg.count * dtype.itemsize
    allocation = launcher.allocate(size)
    allocations.append(allocation)
    launcher.fill(allocation.base, size, offset_bytes, contents())
    if arg.name is not None:
        bfloat16 = arg.buffer == BFLOAT16
        readbacks.append(_Readback(arg.name, allocation.base + offset_bytes, arg.count, dtype, bfloat16))
    return BufferView(allocation.base + offset_bytes, size - offset_bytes)
