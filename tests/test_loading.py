"""Loading an expectation file: what is not a readable file of bounded size is refused unread."""

from expectation_edits import problems


def test_missing_file(tmp_path):
    assert "no such expectation file" in problems(tmp_path / "absent.yaml")


def test_a_file_larger_than_4_mib_is_refused_unread(tmp_path):
    path = tmp_path / "huge.yaml"
    path.write_text("# " + "x" * (4 * 1024 * 1024) + "\n")
    assert problems(path) == f"{path}: larger than 4194304 bytes (4 MiB); refusing to read it"


def test_what_is_no_regular_file_is_refused(tmp_path):
    import os

    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)  # opening it for reading would wait for a writer, for ever
    assert problems(fifo) == f"{fifo}: not a regular file"
    folder = tmp_path / "folder.yaml"
    folder.mkdir()
    assert problems(folder) == f"{folder}: not a regular file"
