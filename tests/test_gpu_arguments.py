"""Structs by value, bfloat16 and bool scalars and .npy fills, launched on a real GPU: the kernels check
the bytes they were given and write what they read where a named buffer reads it back. Skipped, with
the reason, where there is no GPU."""

from pathlib import Path

import numpy as np
import pytest
import yaml
from conftest import DATA

from ncuverify.errors import ExitCode
from ncuverify.options import CheckOptions
from ncuverify.pipeline import check_file
from ncuverify.results import Verdict, exit_code

pytestmark = pytest.mark.gpu


def test_a_struct_by_value_and_a_grid_constant_struct_arrive_field_by_field(gpu_environment):
    result = check_file(DATA / "structs.yaml", CheckOptions(), gpu_environment)
    measured = {c.claim.id: (c.verdict, c.measured, c.reason) for c in result.claims}
    assert exit_code([result]) == ExitCode.OK, measured
    # take_params writes 1 only where every field, the nested struct's and the array's included, held
    # the value the case gives it: the pointer field is the named buffer's address, or nothing is read.
    assert measured["every_field_arrives"][:2] == (Verdict.PASSED, 1)
    assert measured["every_field_as_read"][:2] == (Verdict.PASSED, 11.75)
    # align: 16 puts the scalars after the 8-byte pointer and pads the struct to 32 bytes, as __align__.
    assert measured["grid_constant_fields_arrive"][:2] == (Verdict.PASSED, 4321)
    # 1.01171875 lies halfway between bfloat16s 1.0078125 and 1.015625: the even one is taken.
    assert measured["bfloat16_rounds_to_even_and_bool_arrives"][:2] == (Verdict.PASSED, 4323.015625)


SUM_SOURCE = """
extern "C" __global__ void total(const float* in, float* out, int n) {
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        float sum = 0.0f;
        for (int i = 0; i < n; ++i) sum += in[i] * (float)(i + 1);
        out[0] = sum;
    }
}
"""


def test_a_npy_fill_reaches_the_kernel_in_order_and_zero_beyond_the_file(gpu_environment, tmp_path: Path):
    (tmp_path / ".ncuverify-root").write_text("")
    (tmp_path / "data").mkdir()
    np.save(tmp_path / "data" / "x.npy", np.array([[1, 2], [3, 4]], dtype=np.float32, order="F"))
    content = {
        "arch": "sm_90",
        "kernels": {"total": {"source": SUM_SOURCE, "entry": "total"}},
        "cases": {
            "total": {
                "kernel": "total",
                "grid": 1,
                "block": 32,
                "args": [
                    {"buffer": "float32", "count": 6, "fill": {"npy": "data/x.npy"}},
                    {"buffer": "float32", "count": 1, "name": "out"},
                    {"int32": 6},
                ],
            }
        },
        "claims": [
            {
                "id": "weighted_sum",
                "case": "total",
                "metric": "buffer__out.first",
                # C order [1, 2, 3, 4, 0, 0] weighted 1..6; Fortran order would give 1+6+6+16 = 29
                "expect": {"equals": 1 * 1 + 2 * 2 + 3 * 3 + 4 * 4},
                "cite": {"document": "arguments", "section": "npy", "figure": "weighted sum"},
            }
        ],
    }
    path = tmp_path / "npy.yaml"
    path.write_text(yaml.safe_dump(content))
    result = check_file(path, CheckOptions(), gpu_environment)
    assert exit_code([result]) == ExitCode.OK, [(c.verdict, c.measured, c.reason) for c in result.claims]


HALF_SOURCE = """
#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" __global__ void widen(const __nv_bfloat16* b, const __half* h, __nv_bfloat16* twice, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = __bfloat162float(b[i]) + __half2float(h[i]);
        twice[i] = __float2bfloat16(2.0f * __bfloat162float(b[i]));
    }
}
"""


def test_bfloat16_and_half_buffers_are_filled_and_read_back_as_values(gpu_environment, tmp_path: Path):
    (tmp_path / ".ncuverify-root").write_text("")
    content = {
        "arch": "sm_90",
        "kernels": {"widen": {"source": HALF_SOURCE, "entry": "widen"}},
        "cases": {
            "widen": {
                "kernel": "widen",
                "grid": 1,
                "block": 32,
                "args": [
                    {"buffer": "bfloat16", "count": 32, "fill": "iota"},
                    {"buffer": "float16", "count": 32, "fill": "constant", "value": 0.5},
                    {"buffer": "bfloat16", "count": 32, "name": "twice"},
                    {"buffer": "float32", "count": 32, "name": "out"},
                    {"int32": 32},
                ],
            }
        },
        "claims": [
            # iota 0..31 as bfloat16 (exact), plus 0.5 from the half buffer: sum 496 + 16
            {"id": "sum", "case": "widen", "metric": "buffer__out.sum", "expect": {"equals": 512}},
            # a bfloat16 buffer the kernel writes is read back as its values: 2 * 31
            {"id": "bf16_back", "case": "widen", "metric": "buffer__twice.max", "expect": {"equals": 62}},
        ],
    }
    for claim in content["claims"]:
        claim["cite"] = {"document": "arguments", "section": "buffers", "figure": claim["id"]}
    path = tmp_path / "half.yaml"
    path.write_text(yaml.safe_dump(content))
    result = check_file(path, CheckOptions(), gpu_environment)
    assert exit_code([result]) == ExitCode.OK, [(c.verdict, c.measured, c.reason) for c in result.claims]
