"""The initial contents of a case's buffers (fills)."""

import numpy as np
from planned_arguments import planned_buffer

from ncuverify.runner.fills import RANDOM_INT_LIMIT, host_contents


def test_fills():
    assert (
        host_contents(planned_buffer({"buffer": "float32", "count": 4})) is None
    )  # zeros: a memset on the device
    assert host_contents(planned_buffer({"buffer": "int32", "count": 4, "fill": "iota"})).tolist() == [
        0,
        1,
        2,
        3,
    ]
    constant = host_contents(
        planned_buffer({"buffer": "float16", "count": 3, "fill": "constant", "value": 2.5})
    )
    assert constant.dtype == np.float16 and constant.tolist() == [2.5, 2.5, 2.5]


def test_random_fills_are_seeded_and_bounded():
    first = host_contents(planned_buffer({"buffer": "float32", "count": 1000, "fill": "random", "seed": 7}))
    again = host_contents(planned_buffer({"buffer": "float32", "count": 1000, "fill": "random", "seed": 7}))
    other = host_contents(planned_buffer({"buffer": "float32", "count": 1000, "fill": "random", "seed": 8}))
    assert np.array_equal(first, again) and not np.array_equal(first, other)
    assert first.min() >= 0 and first.max() < 1
    integers = host_contents(planned_buffer({"buffer": "uint8", "count": 10000, "fill": "random"}))
    assert integers.dtype == np.uint8 and integers.max() < 256
    wide = host_contents(planned_buffer({"buffer": "int64", "count": 10000, "fill": "random"}))
    assert wide.min() >= 0 and wide.max() < RANDOM_INT_LIMIT


def test_bfloat16_rounds_float32_to_nearest_even():
    from ncuverify.runner.fills import bfloat16_bits

    assert bfloat16_bits(1.0) == 0x3F80
    assert bfloat16_bits(1.5) == 0x3FC0
    assert bfloat16_bits(-2.0) == 0xC000
    assert bfloat16_bits(1.00390625) == 0x3F80  # halfway, the lower is even: down
    assert bfloat16_bits(1.01171875) == 0x3F82  # halfway, the upper is even: up
    above = float(np.nextafter(np.float32(1.00390625), np.float32(2)))
    assert bfloat16_bits(above) == 0x3F81  # the next float32 above halfway: up
    assert bfloat16_bits(3.3895313892515355e38) == 0x7F7F  # the largest finite
    assert bfloat16_bits(float("nan")) == 0x7FC0
    assert bfloat16_bits(1e-40) == 0x0001  # a float32 subnormal keeps its top bits


def test_a_struct_packs_its_scalars_at_their_offsets_and_its_pointers_patched():
    from pydantic import TypeAdapter

    from ncuverify.runner.fills import scalar_bytes, struct_bytes
    from ncuverify.spec.arguments import Argument, struct_layout

    given = {"struct": [{"int8": -1}, {"pointer": "out"}, {"struct": [{"bool": True}, {"bfloat16": 1.5}]}]}
    packed = struct_bytes(struct_layout(TypeAdapter(Argument).validate_python(given)), {"out": 0x1122334455})
    assert (
        packed == b"\xff" + b"\0" * 7 + (0x1122334455).to_bytes(8, "little") + b"\x01\0\xc0\x3f" + b"\0" * 4
    )
    assert scalar_bytes("bool", False) == b"\0" and scalar_bytes("bfloat16", -2.0) == b"\x00\xc0"
