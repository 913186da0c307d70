"""Scalar arguments of 1 and 2 bytes (int8, uint8, int16, uint16, float16): read from YAML within their
ranges, checked against the cubin's parameter sizes, and packed by the runner in exactly their bytes."""

import numpy as np
import pytest
import yaml
from pydantic import TypeAdapter, ValidationError

from ncuverify.build.params import SCALAR_BYTES
from ncuverify.errors import ExitCode
from ncuverify.results import exit_code
from ncuverify.runner.fills import SCALAR_DTYPES, scalar_bytes
from ncuverify.spec.arguments import Argument
from ncuverify.spec.fields import SCALAR_TYPES

ARGUMENT = TypeAdapter(Argument)
SMALL = {"int8": (-128, 127), "uint8": (0, 255), "int16": (-32768, 32767), "uint16": (0, 65535)}


@pytest.mark.parametrize(("kind", "bounds"), SMALL.items())
def test_small_integers_take_their_range_and_refuse_beyond_it(kind, bounds):
    low, high = bounds
    assert getattr(ARGUMENT.validate_python({kind: low}), kind) == low
    assert getattr(ARGUMENT.validate_python({kind: high}), kind) == high
    for outside in (low - 1, high + 1):
        with pytest.raises(ValidationError):
            ARGUMENT.validate_python({kind: outside})


def test_a_half_is_a_finite_half_precision_value():
    assert ARGUMENT.validate_python({"float16": -65504.0}).float16 == -65504.0
    for outside in (65520.0, float("inf"), float("nan")):
        with pytest.raises(ValidationError):
            ARGUMENT.validate_python({"float16": outside})


def test_every_scalar_kind_has_its_size_and_packs_in_exactly_those_bytes():
    assert set(SCALAR_TYPES) == set(SCALAR_BYTES) == {*SCALAR_DTYPES, "bfloat16"}  # no numpy bfloat16
    for kind, size in SCALAR_BYTES.items():
        assert len(scalar_bytes(kind, 1)) == size, kind
    assert SCALAR_DTYPES["float16"](1.5).tobytes() == b"\x00\x3e"
    assert SCALAR_DTYPES["int16"](-2).tobytes() == b"\xfe\xff"


def test_cuda_core_packs_the_small_scalars_it_is_given():
    holder = pytest.importorskip("cuda.core._kernel_arg_handler", reason="cuda.core is not installed")
    import ctypes

    values = [np.int8(-3), np.uint8(200), np.int16(-300), np.uint16(60000), np.float16(1.5)]
    packed = holder.ParamHolder(values)
    pointers = (ctypes.c_void_p * len(values)).from_address(packed.ptr)
    for value, pointer in zip(values, pointers, strict=True):
        assert ctypes.string_at(pointer, value.nbytes) == value.tobytes()


SOURCE = """
#include <cuda_fp16.h>
__global__ void small(short s, __half h, signed char c, bool b, unsigned short u, float* out) {
    out[threadIdx.x] = (float)s + __half2float(h) + (float)c + (b ? 1.0f : 0.0f) + (float)u;
}
"""


@pytest.mark.gpu
def test_a_kernel_gets_its_small_scalars_on_the_gpu(gpu_environment, tmp_path):
    from ncuverify.options import CheckOptions
    from ncuverify.pipeline import check_file

    content = {
        "arch": "sm_90",
        "kernels": {"small": {"source": SOURCE, "entry": "small"}},
        "cases": {
            "small": {
                "kernel": "small",
                "grid": 1,
                "block": 32,
                "args": [
                    {"int16": -300},
                    {"float16": 1.5},
                    {"int8": -7},
                    {"uint8": 1},
                    {"uint16": 60000},
                    {"buffer": "float32", "count": 32, "name": "got"},
                ],
            }
        },
        "claims": [
            {
                "id": "every_byte_arrives",
                "case": "small",
                "metric": "buffer__got.first",
                "expect": {"equals": -300 + 1.5 - 7 + 1 + 60000},
                "cite": {"document": "arguments", "section": "1", "figure": "each scalar in its bytes"},
            }
        ],
    }
    path = tmp_path / "small.yaml"
    path.write_text(yaml.safe_dump(content))
    result = check_file(path, CheckOptions(), gpu_environment)
    assert exit_code([result]) == ExitCode.OK, [(c.verdict, c.measured, c.reason) for c in result.claims]


@pytest.mark.parametrize("kind", ["float16", "bfloat16"])
def test_half_and_bfloat16_buffers_are_element_types(kind):
    buffer = ARGUMENT.validate_python({"buffer": kind, "count": 8, "fill": "constant", "value": 1.5})
    assert buffer.buffer == kind
    with pytest.raises(ValidationError):
        ARGUMENT.validate_python({"buffer": "bfloat17", "count": 8})
