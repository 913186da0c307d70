"""Writing a starter file: all at once, never over an existing file without force."""

import os

import pytest

from ncuverify.errors import InputError
from ncuverify.init import write_new
from ncuverify.init.writing import writing_problem


def test_a_new_file_is_written_and_nothing_else_is_left(tmp_path):
    write_new(tmp_path / "ops.yaml", "arch: sm_90\n", force=False)
    assert (tmp_path / "ops.yaml").read_text() == "arch: sm_90\n"
    assert os.listdir(tmp_path) == ["ops.yaml"]


def test_an_existing_file_is_kept_without_force_and_replaced_with_it(tmp_path):
    out = tmp_path / "ops.yaml"
    out.write_text("mine\n")
    with pytest.raises(InputError, match=r"ops.yaml: exists; pass --force to overwrite it$"):
        write_new(out, "new\n", force=False)
    assert out.read_text() == "mine\n" and os.listdir(tmp_path) == ["ops.yaml"]
    write_new(out, "new\n", force=True)
    assert out.read_text() == "new\n" and os.listdir(tmp_path) == ["ops.yaml"]


def test_a_link_in_the_files_place_is_replaced_never_written_through(tmp_path):
    target = tmp_path / "target.txt"
    target.write_text("keep\n")
    link = tmp_path / "ops.yaml"
    link.symlink_to(target)
    with pytest.raises(InputError, match="exists"):
        write_new(link, "new\n", force=False)
    write_new(link, "new\n", force=True)
    assert target.read_text() == "keep\n"
    assert not link.is_symlink() and link.read_text() == "new\n"


def test_a_dangling_link_counts_as_an_existing_file(tmp_path):
    (tmp_path / "ops.yaml").symlink_to(tmp_path / "nowhere")
    assert writing_problem(tmp_path / "ops.yaml", force=False) is not None
    assert not (tmp_path / "nowhere").exists()


def test_a_folder_that_does_not_exist_or_a_folder_in_the_files_place_is_refused(tmp_path):
    with pytest.raises(InputError, match="no such folder"):
        write_new(tmp_path / "absent" / "ops.yaml", "x\n", force=False)
    (tmp_path / "ops.yaml").mkdir()
    with pytest.raises(InputError, match="is a folder"):
        write_new(tmp_path / "ops.yaml", "x\n", force=True)


def test_without_hard_links_the_file_is_still_written_once(tmp_path, monkeypatch):
    import errno

    def no_links(*args, **kwargs):
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    write_new(tmp_path / "ops.yaml", "x\n", force=False)
    assert (tmp_path / "ops.yaml").read_text() == "x\n" and os.listdir(tmp_path) == ["ops.yaml"]
    with pytest.raises(InputError, match="exists"):
        write_new(tmp_path / "ops.yaml", "y\n", force=False)
    assert (tmp_path / "ops.yaml").read_text() == "x\n" and os.listdir(tmp_path) == ["ops.yaml"]


def test_a_file_read_is_never_written_over_even_with_force(tmp_path):
    source = tmp_path / "ops.cu"
    source.write_text("__global__ void k() {}\n")
    (tmp_path / "linked.cu").hardlink_to(source)
    for name in ("ops.cu", "linked.cu", "sub/../ops.cu"):
        (tmp_path / "sub").mkdir(exist_ok=True)
        with pytest.raises(
            InputError, match=r"which init reads; refusing to overwrite it, even with --force$"
        ):
            write_new(tmp_path / name, "kernels: {}\n", force=True, read=[source])
    assert source.read_text() == "__global__ void k() {}\n"
    write_new(tmp_path / "ops.yaml", "kernels: {}\n", force=True, read=[source])  # any other file
    assert (tmp_path / "ops.yaml").read_text() == "kernels: {}\n"
