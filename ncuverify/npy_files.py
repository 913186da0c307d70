""".npy files read as a buffer's contents: without pickles, within bounds, a plain numeric array of
the buffer's dtype. numpy and the standard library only: the runner reads the file again with it, and
the runner imports nothing of the expectation file's model."""

from __future__ import annotations

import hashlib
import io
import math
from pathlib import Path
from typing import TYPE_CHECKING

from ncuverify.errors import InputError
from ncuverify.files import CannotRead, NotRegular, TooLarge, read_plain

if TYPE_CHECKING:
    import numpy as np

MAX_NPY_BYTES = 2**30  # a buffer's file; also bounded by the buffer's own size
MAX_HEADER_BYTES = 10000  # numpy's own default bound on a header
_MAGIC = b"\x93NUMPY"
_PLAIN_KINDS = "biuf"  # booleans, integers, floats: no objects, texts, records, dates


# The buffer element type numpy has no dtype for, held on the host as its 16-bit patterns.
BFLOAT16 = "bfloat16"


def storage_dtype(buffer: str) -> np.dtype:
    """The numpy dtype a buffer of this element type is held in on the host: its own, or for bfloat16
    (which numpy lacks) uint16, the value's bit pattern."""
    import numpy as np

    return np.dtype(np.uint16 if buffer == BFLOAT16 else buffer)


def read_npy(path: Path, dtype_of: str | np.dtype, count: int) -> tuple[np.ndarray, str]:
    """The file's values (flat, in C order) and the sha256 of its bytes; InputError saying what is
    wrong where the file is not a plain array of the dtype (or the dtype named) with at most count
    values. A bfloat16 buffer's file holds uint16 bit patterns."""
    import numpy as np  # here: loading a file that has no .npy fill needs no numpy

    dtype = storage_dtype(dtype_of) if isinstance(dtype_of, str) else np.dtype(dtype_of)
    data = _read(path, MAX_HEADER_BYTES + 16 + count * dtype.itemsize)
    stream = io.BytesIO(data)
    shape, fortran_order, found = _header(stream)
    if found != dtype:
        held = " as uint16 bit patterns" if dtype_of == BFLOAT16 else ""
        raise InputError(f"holds {found.str} values, but the buffer is {dtype_of}{held} ({dtype.str})")
    values = math.prod(shape)
    if values > count:
        raise InputError(f"holds {values} values (shape {list(shape)}), more than the buffer's count {count}")
    body = data[stream.tell() :]
    if len(body) != values * dtype.itemsize:
        raise InputError(
            f"its shape {list(shape)} needs {values * dtype.itemsize} bytes of data, but it has {len(body)}"
            " (a truncated or damaged file)"
        )
    array = np.frombuffer(body, dtype=dtype)
    if fortran_order and len(shape) > 1:
        array = array.reshape(shape[::-1]).transpose().ravel()
    return array, hashlib.sha256(data).hexdigest()


def _read(path: Path, limit: int) -> bytes:
    limit = min(limit, MAX_NPY_BYTES)
    try:
        return read_plain(path, limit, follow_links=False)
    except CannotRead as problem:
        raise InputError(f"cannot be read ({problem.reason})") from None
    except NotRegular:
        raise InputError("not a regular file") from None
    except TooLarge:
        raise InputError(
            f"larger than {limit} bytes, more than its buffer can hold; refusing to read it"
        ) from None


def _header(stream: io.BytesIO) -> tuple[tuple[int, ...], bool, np.dtype]:
    """The shape, order and dtype a .npy header declares, parsed without evaluating code."""
    import numpy as np

    if stream.read(len(_MAGIC)) != _MAGIC:
        raise InputError("not a .npy file (no \\x93NUMPY magic at its start)")
    version = stream.read(2)
    readers = {
        b"\x01\x00": np.lib.format.read_array_header_1_0,
        b"\x02\x00": np.lib.format.read_array_header_2_0,
    }
    if version not in readers:
        raise InputError(
            f"a .npy format version ncuverify does not read ({list(version)}); save with numpy.save"
        )
    try:
        shape, fortran_order, dtype = readers[version](stream, max_header_size=MAX_HEADER_BYTES)
    # numpy's header reader fails in many ways on hostile bytes (ValueError, SyntaxError, tokenize's
    # TokenError, RecursionError, ...), none of them documented: each is this file's damage.
    except Exception as error:
        reason = str(error).splitlines()[0][:200] if str(error) else type(error).__name__
        if "malformed node" in reason:  # numpy names the node by its address: not the same twice
            reason = "it holds more than literals"
        raise InputError(f"a damaged .npy header: {reason}") from None
    if dtype.kind not in _PLAIN_KINDS or dtype.fields is not None or dtype.subdtype is not None:
        raise InputError(f"holds {dtype.str} values; only plain numbers (bool, integers, floats) are read")
    if any(n < 0 for n in shape):
        raise InputError(f"a damaged .npy header: shape {list(shape)}")
    return tuple(int(n) for n in shape), bool(fortran_order), dtype
