"""Reading an untrusted file: only a regular file, through a link only where allowed, within its bound."""

from __future__ import annotations

import errno
import hashlib
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ncuverify.files import (
    CannotRead,
    NotRegular,
    SymbolicLink,
    TooLarge,
    Unreadable,
    open_plain,
    parse_json,
    read_plain,
    repeated_keys,
    sha256_of,
)


def _open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_a_regular_file_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "f.json"
    path.write_bytes(b'{"a": 1}\n')
    assert read_plain(path, 9) == b'{"a": 1}\n'


def test_a_file_of_exactly_the_bound_is_read(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x" * 100)
    assert read_plain(path, 100) == b"x" * 100


def test_a_file_one_byte_over_the_bound_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x" * 101)
    with pytest.raises(TooLarge) as caught:
        read_plain(path, 100)
    assert str(caught.value) == "larger than 100 bytes"
    assert caught.value.max_bytes == 100


def test_a_sparse_file_claiming_a_terabyte_is_refused_without_reading_it(tmp_path: Path) -> None:
    path = tmp_path / "huge.json"
    with path.open("wb") as file:
        file.truncate(2**40)
    with pytest.raises(TooLarge):
        read_plain(path, 4 * 2**20)


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "entry.json"
    os.mkfifo(fifo)
    with pytest.raises(NotRegular) as caught:
        read_plain(fifo, 4096)
    assert str(caught.value) == "not a regular file"


def test_a_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(NotRegular):
        read_plain(tmp_path, 4096)


def test_a_device_is_refused() -> None:
    with pytest.raises(NotRegular):
        read_plain(Path("/dev/zero"), 4096)


def test_a_symbolic_link_is_refused_where_links_are_not_followed(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_bytes(b"private key")
    link = tmp_path / "entry.json"
    link.symlink_to(secret)
    with pytest.raises(SymbolicLink) as caught:
        read_plain(link, 4096, follow_links=False)
    assert str(caught.value) == "a symbolic link"
    assert caught.value.error.errno == errno.ELOOP


def test_a_dangling_symbolic_link_is_still_a_symbolic_link(tmp_path: Path) -> None:
    link = tmp_path / "entry.json"
    link.symlink_to(tmp_path / "nowhere")
    with pytest.raises(SymbolicLink):
        read_plain(link, 4096, follow_links=False)


def test_a_symbolic_link_is_followed_by_default(tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.write_bytes(b"text")
    link = tmp_path / "link"
    link.symlink_to(target)
    assert read_plain(link, 4096) == b"text"


def test_a_link_to_a_fifo_is_refused_as_not_regular_when_followed(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    link = tmp_path / "link"
    link.symlink_to(fifo)
    with pytest.raises(NotRegular):
        read_plain(link, 4096)


def test_a_missing_file_says_what_the_os_said(tmp_path: Path) -> None:
    with pytest.raises(CannotRead) as caught:
        read_plain(tmp_path / "absent", 4096)
    assert isinstance(caught.value.error, FileNotFoundError)
    assert str(caught.value) == "No such file or directory"


def test_a_missing_file_is_not_called_a_symbolic_link(tmp_path: Path) -> None:
    with pytest.raises(CannotRead) as caught:
        read_plain(tmp_path / "absent", 4096, follow_links=False)
    assert not isinstance(caught.value, SymbolicLink)


def test_a_loop_of_links_is_an_os_error_when_links_are_followed(tmp_path: Path) -> None:
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    with pytest.raises(CannotRead) as caught:
        read_plain(loop, 4096)
    assert not isinstance(caught.value, SymbolicLink)
    assert caught.value.error.errno == errno.ELOOP


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_a_file_without_read_permission_says_what_the_os_said(tmp_path: Path) -> None:
    path = tmp_path / "locked"
    path.write_bytes(b"x")
    path.chmod(0)
    with pytest.raises(CannotRead) as caught:
        read_plain(path, 4096)
    assert str(caught.value) == "Permission denied"


def test_every_refusal_is_one_type(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    large = tmp_path / "large"
    large.write_bytes(b"xx")
    link = tmp_path / "link"
    link.symlink_to(large)
    for path, follow in ((fifo, True), (large, True), (link, False), (tmp_path / "absent", True)):
        with pytest.raises(Unreadable):
            read_plain(path, 1, follow_links=follow)


def test_no_descriptor_is_left_open_by_a_refusal(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    large = tmp_path / "large"
    large.write_bytes(b"xx")
    before = _open_descriptors()
    for path in (fifo, tmp_path, large):
        with pytest.raises(Unreadable):
            read_plain(path, 1)
    assert _open_descriptors() == before


def test_open_plain_streams_a_regular_file_and_refuses_a_fifo(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"abc")
    with open_plain(path) as stream:
        assert stream.read() == b"abc"
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(NotRegular):
        open_plain(fifo)


def test_sha256_of_digests_a_file_larger_than_one_chunk_and_refuses_a_fifo(tmp_path: Path) -> None:
    path = tmp_path / "f"
    content = bytes(range(256)) * 5000  # over 1 MiB: read in two chunks
    path.write_bytes(content)
    assert sha256_of(path) == hashlib.sha256(content).hexdigest()
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(NotRegular):
        sha256_of(fifo)


@settings(max_examples=60, deadline=None)
@given(content=st.binary(max_size=300), bound=st.integers(min_value=0, max_value=300))
def test_a_regular_file_is_read_exactly_or_refused_as_too_large(content: bytes, bound: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "f"
        path.write_bytes(content)
        if len(content) <= bound:
            assert read_plain(path, bound, follow_links=False) == content
        else:
            with pytest.raises(TooLarge):
                read_plain(path, bound, follow_links=False)


def test_keys_given_twice_are_kept_where_asked() -> None:
    value = parse_json('{"a": 1, "b": {"c": 1, "c": 2}, "a": 3}', keep_repeats=True)
    assert value == {"a": 3, "b": {"c": 2}}  # the last, as Python's reader keeps it
    assert repeated_keys(value) == ("a",) and repeated_keys(value["b"]) == ("c",)
    assert repeated_keys(parse_json('{"a": 1, "a": 2}')) == ()  # not asked: plain dicts
