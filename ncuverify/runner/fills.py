"""The host side of a case's arguments: the initial contents of its buffers, and its scalars' types."""

from __future__ import annotations

from typing import Any

import numpy as np

# Random integer fills stay small so that index buffers and sums are well defined in any integer type.
RANDOM_INT_LIMIT = 2**15


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
        values = generator.random(count, dtype=np.float32 if dtype.itemsize <= 4 else np.float64)
        return np.asarray(values).astype(dtype)
    high = min(RANDOM_INT_LIMIT, int(np.iinfo(dtype).max) + 1)
    return generator.integers(0, high, size=count, dtype=np.int64).astype(dtype)


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
}
