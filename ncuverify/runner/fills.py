"""The host side of a case's arguments: the initial contents of its buffers, its scalars' types, and the
bytes of what has no numpy type (bfloat16, structs)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np

from ncuverify.layout import PointerAt, StructLayout
from ncuverify.npy_files import BFLOAT16, read_npy, storage_dtype
from ncuverify.runner.plan import NpyContents, PlannedBuffer

# Random integer fills stay small so that index buffers and sums are well defined in any integer type.
RANDOM_INT_LIMIT = 2**15


def host_contents(arg: PlannedBuffer) -> np.ndarray | None:
    """The initial contents of a buffer as the kernel sees them; None for zeros (memset on the device).
    A bfloat16 buffer's are its bit patterns (uint16), each rounded from the float32 value. A fill made
    from its recipe alone (constant, iota, random) is made once per runner: a case that fills alike
    later takes the same contents, read-only."""
    dtype = storage_dtype(arg.buffer)
    count, fill = arg.count, arg.fill
    if isinstance(fill, NpyContents):
        return _npy_contents(fill, dtype, count)  # a bfloat16 buffer's file holds its bit patterns
    if fill == "zeros":
        return None
    recipe = (
        fill,
        arg.buffer,  # not its storage: a bfloat16 buffer is stored as uint16, and filled otherwise
        count,
        arg.value if fill == "constant" else None,
        arg.seed if fill == "random" else None,
    )
    return MADE.get(recipe, lambda: _made(fill, dtype, count, arg))


def _made(fill: str, dtype: np.dtype, count: int, arg: PlannedBuffer) -> np.ndarray:
    if arg.buffer == BFLOAT16:
        return bfloat16_array(_float32_contents(arg))
    if fill == "constant":
        return np.full(count, arg.value, dtype=dtype)
    if fill == "iota":
        return np.arange(count, dtype=np.int64).astype(dtype, copy=False)
    generator = np.random.default_rng(arg.seed)
    if dtype.kind == "f":
        values = generator.random(count, dtype=np.float32 if dtype.itemsize <= 4 else np.float64)
        return np.asarray(values).astype(dtype, copy=False)
    high = min(RANDOM_INT_LIMIT, int(np.iinfo(dtype).max) + 1)
    return generator.integers(0, high, size=count, dtype=np.int64).astype(dtype, copy=False)


# What a runner keeps of the fills it made: the cases of one ncu process often fill alike (a file's cases
# share their inputs, and a random fill of some hundred megabytes takes a few tenths of a second to draw).
MADE_BYTES = 2**31


class MadeFills:
    """Fills by their recipe, the latest used last; the oldest leave once they hold more than limit
    bytes. Safe from several threads (the runner makes the next case's contents on one of its own):
    two that make one recipe at once both make it, and one is kept."""

    def __init__(self, limit_bytes: int = MADE_BYTES) -> None:
        self._limit = limit_bytes
        self._held: OrderedDict[tuple[object, ...], np.ndarray] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, recipe: tuple[object, ...], make: Callable[[], np.ndarray]) -> np.ndarray:
        with self._lock:
            if recipe in self._held:
                self._held.move_to_end(recipe)
                return self._held[recipe]
        made = make()
        made.flags.writeable = False  # shared by every case that fills alike: none may change it
        with self._lock:
            if made.nbytes <= self._limit and recipe not in self._held:
                self._held[recipe] = made
                self._bytes += made.nbytes
                while self._bytes > self._limit:
                    _, oldest = self._held.popitem(last=False)
                    self._bytes -= oldest.nbytes
        return made


MADE = MadeFills()


SCALAR_DTYPES: dict[str, type[np.generic]] = {
    "int32": np.int32,
    "uint32": np.uint32,
    "int64": np.int64,
    "uint64": np.uint64,
    "float32": np.float32,
    "float64": np.float64,
    "int8": np.int8,
    "uint8": np.uint8,
    "int16": np.int16,
    "uint16": np.uint16,
    "float16": np.float16,
    "bool": np.bool_,
}


def _npy_contents(fill: NpyContents, dtype: np.dtype, count: int) -> np.ndarray:
    """A .npy file's values, then zeros up to count; the file must still be the one the check read."""
    values, digest = read_npy(Path(fill.npy), dtype, count)
    if digest != fill.sha256:
        raise RuntimeError(f"{fill.npy}: changed since it was checked")
    contents = np.zeros(count, dtype=dtype)
    contents[: values.size] = values
    return contents


def _float32_contents(arg: PlannedBuffer) -> np.ndarray:
    """A buffer's constant, iota or random fill as float32 values, before rounding to bfloat16."""
    if arg.fill == "constant":
        return np.full(arg.count, arg.value, dtype=np.float32)
    if arg.fill == "iota":
        return np.arange(arg.count, dtype=np.int64).astype(np.float32)
    return np.random.default_rng(arg.seed).random(arg.count, dtype=np.float32)


def bfloat16_array(values: np.ndarray) -> np.ndarray:
    """The bfloat16 nearest each value's float32 (ties to even), as 16-bit patterns: the float32's top
    half, rounded on the half below; a NaN stays a quiet NaN of its sign."""
    bits = np.asarray(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + (bits >> 16 & 1)) >> 16).astype(np.uint16)
    nan = (bits & 0x7FFFFFFF) > 0x7F800000
    quiet = (0x7FC0 | (bits >> 16 & 0x8000)).astype(np.uint16)
    return np.where(nan, quiet, rounded)


def bfloat16_values(bits: np.ndarray) -> np.ndarray:
    """bfloat16 bit patterns (uint16) as the float32 values they stand for, exactly."""
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def bfloat16_bits(value: float) -> int:
    """The bfloat16 nearest the value's float32 (ties to even), as its 16 bits."""
    return int(bfloat16_array(np.array([value], dtype=np.float32))[0])


def scalar_bytes(kind: str, value: int | float | bool) -> bytes:
    """A scalar's bytes as the kernel reads them (little-endian)."""
    if kind == "bfloat16":
        return bfloat16_bits(float(value)).to_bytes(2, "little")
    return SCALAR_DTYPES[kind](value).tobytes()


def struct_bytes(layout: StructLayout, addresses: Mapping[str, int]) -> bytes:
    """A struct's bytes: each scalar at its offset, each pointer the address of the buffer it names,
    padding zero."""
    packed = bytearray(layout.size)
    for leaf in layout.leaves:
        if isinstance(leaf, PointerAt):
            data = addresses[leaf.buffer].to_bytes(8, "little")
        else:
            data = scalar_bytes(leaf.kind, leaf.value)
        packed[leaf.offset : leaf.offset + len(data)] = data
    return bytes(packed)
