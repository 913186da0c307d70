"""The initial contents of a case's buffers (fills)."""

import numpy as np

from ncuverify.runner.fills import RANDOM_INT_LIMIT, host_contents


def test_fills():
    assert host_contents({"buffer": "float32", "count": 4}) is None  # zeros: a memset on the device
    assert host_contents({"buffer": "int32", "count": 4, "fill": "iota"}).tolist() == [0, 1, 2, 3]
    constant = host_contents({"buffer": "float16", "count": 3, "fill": "constant", "value": 2.5})
    assert constant.dtype == np.float16 and constant.tolist() == [2.5, 2.5, 2.5]


def test_random_fills_are_seeded_and_bounded():
    first = host_contents({"buffer": "float32", "count": 1000, "fill": "random", "seed": 7})
    again = host_contents({"buffer": "float32", "count": 1000, "fill": "random", "seed": 7})
    other = host_contents({"buffer": "float32", "count": 1000, "fill": "random", "seed": 8})
    assert np.array_equal(first, again) and not np.array_equal(first, other)
    assert first.min() >= 0 and first.max() < 1
    integers = host_contents({"buffer": "uint8", "count": 10000, "fill": "random"})
    assert integers.dtype == np.uint8 and integers.max() < 256
    wide = host_contents({"buffer": "int64", "count": 10000, "fill": "random"})
    assert wide.min() >= 0 and wide.max() < RANDOM_INT_LIMIT
