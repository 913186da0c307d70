"""Expectation files with vars and sweeps for the spec tests, written beside a kernel of their own."""

from pathlib import Path

import pytest

from ncuverify.errors import InputError
from ncuverify.spec import Spec, load

KERNEL = """extern "C" __global__ void copy(const float* in, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = in[i];
    }
}
"""

HEAD = """kernels:
  copy: {file: copy.cu, entry: copy}
cases:
"""

CLAIM = """  - id: {id}
    case: {case}
    metric: {metric}
    expect: {{equals: 4}}
    cite: {{document: d, section: s, figure: f}}
"""


def claim(id: str, case: str, metric: str = "global_ld_sectors_per_request", extra: str = "") -> str:
    return CLAIM.format(id=id, case=case, metric=metric) + extra


def sweep_file(tmp_path: Path, cases: str, claims: str) -> Path:
    (tmp_path / "copy.cu").write_text(KERNEL)
    path = tmp_path / "sweep.yaml"
    path.write_text(HEAD + cases + "claims:\n" + claims)
    return path


def loaded(tmp_path: Path, cases: str, claims: str) -> Spec:
    return load(sweep_file(tmp_path, cases, claims))


def refused(tmp_path: Path, cases: str, claims: str) -> str:
    """The message of the file's input error, its path left out."""
    path = sweep_file(tmp_path, cases, claims)
    with pytest.raises(InputError) as error:
        load(path)
    return str(error.value).replace(str(path), "FILE")


SWEPT_COPY = """  copy:
    kernel: copy
    sweep: {n: [1024, "2**12"]}
    grid: "n // 256"
    block: 256
    args:
      - {buffer: float32, count: n}
      - {buffer: float32, count: "n + 32"}
      - {int32: n}
"""
