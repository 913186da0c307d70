""".npy fills: found inside the project, read without pickles, checked against their buffer, and a
damaged or hostile file refused with one line and exit 2."""

import struct
from pathlib import Path

import numpy as np
import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ncuverify.errors import InputError
from ncuverify.npy_files import MAX_HEADER_BYTES, read_npy
from ncuverify.profile.plan import planned_arguments
from ncuverify.runner.plan import (
    NpyContents,
    PlannedBuffer,
)
from ncuverify.spec import load

KERNEL = 'extern "C" __global__ void k(const float* x) {}'


def project(tmp_path: Path, fill: dict, buffer: str = "float32", count: int = 8) -> Path:
    (tmp_path / ".ncuverify-root").write_text("")
    args = [{"buffer": buffer, "count": count, "fill": fill}]
    content = {
        "kernels": {"k": {"source": KERNEL, "entry": "k"}},
        "cases": {"c": {"kernel": "k", "grid": 1, "block": 1, "args": args}},
        "claims": [
            {
                "id": "launches",
                "case": "c",
                "metric": "launch__grid_size",
                "expect": {"equals": 1},
                "cite": {"document": "d", "section": "1", "figure": "f"},
            }
        ],
    }
    path = tmp_path / "e.yaml"
    path.write_text(yaml.safe_dump(content))
    return path


def refusal(path: Path) -> str:
    with pytest.raises(InputError) as refused:
        load(path)
    return str(refused.value)


def test_a_npy_file_is_read_in_c_order_and_named_to_the_runner_by_path_and_digest(tmp_path: Path):
    (tmp_path / "data").mkdir()
    np.save(tmp_path / "data" / "x.npy", np.array([[1, 2], [3, 4]], dtype=np.float32, order="F"))
    spec = load(project(tmp_path, {"npy": "data/x.npy"}))
    values, digest = read_npy(tmp_path / "data" / "x.npy", np.dtype("float32"), 8)
    assert values.tolist() == [1, 2, 3, 4]
    [planned] = planned_arguments(spec.content.cases["c"].args, tmp_path)
    assert isinstance(planned, PlannedBuffer)
    assert planned.fill == NpyContents(str(tmp_path / "data" / "x.npy"), digest)
    from ncuverify.runner.fills import host_contents

    assert host_contents(planned).tolist() == [1, 2, 3, 4, 0, 0, 0, 0]  # zeros beyond the file
    np.save(tmp_path / "data" / "x.npy", np.zeros(2, dtype=np.float32))  # changed after the check
    with pytest.raises(RuntimeError, match="changed since it was checked"):
        host_contents(planned)


def test_a_file_outside_the_project_or_missing_or_a_link_out_is_refused(tmp_path: Path):
    inside = tmp_path / "p"
    inside.mkdir()
    np.save(tmp_path / "out.npy", np.zeros(2, dtype=np.float32))
    assert "lies outside the project" in refusal(project(inside, {"npy": "../out.npy"}))
    (inside / "link.npy").symlink_to(tmp_path / "out.npy")
    assert "lies outside the project" in refusal(project(inside, {"npy": "link.npy"}))
    assert "no such file: gone.npy" in refusal(project(inside, {"npy": "gone.npy"}))


def test_another_dtype_or_too_many_values_is_refused_naming_the_file(tmp_path: Path):
    np.save(tmp_path / "x.npy", np.zeros(3, dtype=np.float64))
    message = refusal(project(tmp_path, {"npy": "x.npy"}))
    assert "x.npy: holds <f8 values, but the buffer is float32 (<f4)" in message
    np.save(tmp_path / "x.npy", np.zeros((3, 3), dtype=np.float32))
    assert "x.npy: holds 9 values (shape [3, 3]), more than the buffer's count 8" in refusal(
        project(tmp_path, {"npy": "x.npy"})
    )


def header(text: str, version: bytes = b"\x01\x00") -> bytes:
    encoded = text.encode("latin1")
    size = struct.pack("<H" if version == b"\x01\x00" else "<I", len(encoded))
    return b"\x93NUMPY" + version + size + encoded


HOSTILE = {
    "wrong_magic": b"PK\x03\x04" + b"\0" * 60,
    "empty": b"",
    "cut_in_the_header": header("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }")[:20],
    "object_dtype": header("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }") + b"\0" * 16,
    "structured": header("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }") + b"\0" * 8,
    "code_in_header": header(
        "{'descr': __import__('os').system('true'), 'fortran_order': False, 'shape': (2,)}"
    ),
    "huge_header": header("{" + " " * (MAX_HEADER_BYTES + 100) + "}", b"\x02\x00"),
    "overflowing_shape": header(
        "{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776, 1099511627776), }"
    ),
    "negative_shape": header("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }"),
    "short_data": header("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }") + b"\0" * 15,
    "unknown_version": b"\x93NUMPY\x09\x00" + b"\0" * 40,
}


@pytest.mark.parametrize("data", HOSTILE.values(), ids=HOSTILE.keys())
def test_a_damaged_or_hostile_file_is_one_line_of_input_error(tmp_path: Path, data: bytes):
    (tmp_path / "x.npy").write_bytes(data)
    message = refusal(project(tmp_path, {"npy": "x.npy"}))
    assert message.count("\n") == 0 and "x.npy: " in message


def test_a_fifo_or_a_folder_is_not_read(tmp_path: Path):
    (tmp_path / "folder.npy").mkdir()
    assert "not a regular file" in refusal(project(tmp_path, {"npy": "folder.npy"}))


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=300), st.integers(0, 200))
@example(b"\x00" * 7 + b"[", 120)  # a header cut inside its dict: numpy's tokenizer raises TokenError
def test_any_bytes_are_values_or_an_input_error(tmp_path_factory, noise: bytes, cut: int):
    folder = tmp_path_factory.mktemp("npy")
    good = folder / "good.npy"
    np.save(good, np.arange(4, dtype=np.float32))
    for data in (noise, good.read_bytes()[:cut] + noise):
        (folder / "x.npy").write_bytes(data)
        try:
            values, _ = read_npy(folder / "x.npy", np.dtype("float32"), 8)
        except InputError as error:
            assert "\n" not in str(error)
        else:
            assert values.dtype == np.float32 and values.size <= 8


def test_a_pointer_field_must_name_a_buffer_of_its_case(tmp_path: Path):
    path = project(tmp_path, "zeros")
    content = yaml.safe_load(path.read_text())
    content["cases"]["c"]["args"].append({"struct": [{"pointer": "ot"}]})
    content["cases"]["c"]["args"][0]["name"] = "out"
    path.write_text(yaml.safe_dump(content))
    assert (
        "a pointer field names 'ot', but case c has no buffer of that name (did you mean 'out'?)"
        in refusal(path)
    )


def test_a_buffer_that_is_not_passed_must_be_named_by_a_pointer_field(tmp_path: Path):
    path = project(tmp_path, "zeros")
    content = yaml.safe_load(path.read_text())
    content["cases"]["c"]["args"][0].update({"name": "out", "passed": False})
    path.write_text(yaml.safe_dump(content))
    assert (
        "buffer 'out' is not passed and no struct's pointer field names it: the kernel could not reach it"
        in refusal(path)
    )
    content["cases"]["c"]["args"].append({"struct": [{"pointer": "out"}]})
    path.write_text(yaml.safe_dump(content))
    assert load(path).content.cases["c"].args[0].passed is False
