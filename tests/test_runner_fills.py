"""The initial contents of a case's buffers (fills)."""

import hashlib

import numpy as np
import pytest
from planned_arguments import planned_buffer

from ncuverify.runner.fills import RANDOM_INT_LIMIT, MadeFills, host_contents


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


def test_half_and_bfloat16_buffers_are_filled_as_the_kernel_reads_them():
    from ncuverify.runner.fills import bfloat16_bits, bfloat16_values

    half = host_contents(planned_buffer({"buffer": "float16", "count": 1000, "fill": "random", "seed": 3}))
    assert half.dtype == np.float16 and half.min() >= 0 and half.max() <= 1
    constant = host_contents(
        planned_buffer({"buffer": "bfloat16", "count": 3, "fill": "constant", "value": 1.5})
    )
    assert constant.dtype == np.uint16 and constant.tolist() == [0x3FC0] * 3
    iota = host_contents(planned_buffer({"buffer": "bfloat16", "count": 300, "fill": "iota"}))
    assert bfloat16_values(iota).tolist()[:4] == [0.0, 1.0, 2.0, 3.0]
    # Above 256 a bfloat16 steps by 2: 257 and 259 lie halfway and round to the even neighbour.
    assert bfloat16_values(iota)[257] == 256.0 and bfloat16_values(iota)[259] == 260.0
    drawn = planned_buffer({"buffer": "bfloat16", "count": 1000, "fill": "random", "seed": 3})
    bits = host_contents(drawn)
    again = host_contents(drawn)
    assert bits.dtype == np.uint16 and np.array_equal(bits, again)
    floats = np.random.default_rng(3).random(1000, dtype=np.float32)
    assert bits.tolist() == [bfloat16_bits(float(value)) for value in floats]
    assert np.abs(bfloat16_values(bits) - floats).max() <= 2**-8  # within half a bfloat16 step of [0, 1)


def test_bfloat16_bit_patterns_read_back_as_their_values():
    from ncuverify.runner.fills import bfloat16_array, bfloat16_values

    values = np.array([1.0, -2.0, 0.5, 3.3895313892515355e38, np.inf], dtype=np.float32)
    assert bfloat16_values(bfloat16_array(values)).tolist() == values.tolist()
    assert np.isnan(bfloat16_values(bfloat16_array(np.array([np.nan], dtype=np.float32))))[0]


def test_a_named_bfloat16_buffer_is_read_back_as_values():
    from ncuverify.runner.case import _Readback
    from ncuverify.runner.fills import bfloat16_array

    class Launcher:
        def read_back(self, address, count, dtype):
            assert dtype == np.uint16
            return bfloat16_array(np.array([1.0, 2.0, 4.5, 0.5], dtype=np.float32))

    said = _Readback("out", 0, 4, np.dtype(np.uint16), bfloat16=True).statistics(Launcher())
    assert said["buffer__out.sum"] == 8.0 and said["buffer__out.max"] == 4.5


def test_a_bfloat16_buffers_npy_file_holds_its_bit_patterns(tmp_path):
    from ncuverify.errors import InputError
    from ncuverify.npy_files import read_npy, storage_dtype

    assert storage_dtype("bfloat16") == np.uint16 and storage_dtype("float16") == np.float16
    np.save(tmp_path / "bits.npy", np.array([0x3F80, 0x4000], dtype=np.uint16))
    values, _ = read_npy(tmp_path / "bits.npy", "bfloat16", 4)
    assert values.tolist() == [0x3F80, 0x4000]
    np.save(tmp_path / "floats.npy", np.array([1.0], dtype=np.float32))
    try:
        read_npy(tmp_path / "floats.npy", "bfloat16", 4)
    except InputError as error:
        assert str(error) == "holds <f4 values, but the buffer is bfloat16 as uint16 bit patterns (<u2)"
    else:
        raise AssertionError("a float32 file was taken for a bfloat16 buffer")


# Each recipe's bytes as the runner has always made them (sha256): the recordings' figures of some claims
# (sums, checksums read back) depend on them, so making them once must not change them.
SAME_BYTES = [
    ({"buffer": "float32", "count": 1048576, "fill": "random", "seed": 1}, "d6c60834c697d0de23f2313a7ec3086c1ad59cb030df55c5be3852f76f64d889"),
    ({"buffer": "float64", "count": 1000, "fill": "random", "seed": 3}, "c6ea18cb08cb3437c54ae7be33f57b3217f26613998694052385eb7115146260"),
    ({"buffer": "float16", "count": 1000, "fill": "random", "seed": 0}, "95eb12ebca8759c1ced5c8f31bce613f3b4391b5c378d16440a4a3711283c962"),
    ({"buffer": "int32", "count": 4096, "fill": "random", "seed": 5}, "235519c9700276f4dfcaf41abee2e44354c18acd616dd487b67895ad09e3931a"),
    ({"buffer": "uint8", "count": 4096, "fill": "random", "seed": 2}, "c8d001aec89e9aa7313f37bb471871c979450df0d10390eaa87f74a6c7cedce3"),
    ({"buffer": "int64", "count": 4096, "fill": "constant", "value": 131072}, "89e6c0077467ed3f4a0f0a4656840b1a5090672fdea1b742321ef26e7fe4ba78"),
    ({"buffer": "float32", "count": 1000003, "fill": "iota"}, "a8f9a481467c608e71893da9498ae997dcc70ead668595684ec6b6502e287501"),
    ({"buffer": "float32", "count": 1000003, "fill": "constant", "value": 1.0}, "a1028298474c2dd2455c317b5d14b255d693cbe22a0948511b3c4fba90c26534"),
]  # fmt: skip


@pytest.mark.parametrize(("recipe", "digest"), SAME_BYTES)
def test_a_fill_s_bytes_are_those_of_its_recipe_made_once_or_again(recipe, digest):
    first = host_contents(planned_buffer(recipe))
    again = host_contents(planned_buffer({**recipe, "name": "another"}))  # another buffer, filled alike
    assert hashlib.sha256(first.tobytes()).hexdigest() == digest
    assert again is first and not first.flags.writeable  # made once, and no case may change it


def test_fills_alike_only_in_part_are_made_apart():
    base = {"buffer": "float32", "count": 64, "fill": "random", "seed": 1}
    made = host_contents(planned_buffer(base))
    for other in ({"seed": 2}, {"count": 65}, {"buffer": "float64"}, {"fill": "iota"}):
        assert host_contents(planned_buffer({**base, **other})) is not made, other


def test_the_fills_kept_are_bounded_the_oldest_leaving_first():
    made = MadeFills(limit_bytes=2 * 400)
    arrays = [made.get(("r", n), lambda n=n: np.full(100, n, dtype=np.float32)) for n in range(3)]
    assert made.get(("r", 2), lambda: np.zeros(1)) is arrays[2]  # kept
    assert made.get(("r", 0), lambda: np.zeros(1)) is not arrays[0]  # left for the later ones
    large = made.get(("large",), lambda: np.zeros(1000))  # more than the bound: made, not kept
    assert made.get(("large",), lambda: np.ones(1000)) is not large
