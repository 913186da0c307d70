"""A bug in ncuverify becomes one line naming its traceback file; a step run isolated gives that line to
the file (or files) it was for, and lets what it expects, and Ctrl-C, through."""

from pathlib import Path

import pytest

from ncuverify.errors import InputError
from ncuverify.internal import internal_error_line, isolated


@pytest.fixture(autouse=True)
def traceback_files_in(tmp_path, monkeypatch):
    """Each bug's traceback file is written in the test's own folder."""
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))


def broken() -> str:
    raise ZeroDivisionError("step broke")


def test_a_step_that_works_gives_its_value():
    assert isolated(lambda: "value", lambda line: f"bug: {line}") == "value"


def test_a_bug_in_a_step_gives_the_internal_error_line_that_names_its_traceback(tmp_path):
    line = isolated(broken, lambda line: line)
    assert line.startswith("internal error: ZeroDivisionError: step broke, please report it with ")
    saved = Path(line.rsplit(" ", 1)[1])
    assert saved.parent == tmp_path and "ZeroDivisionError: step broke" in saved.read_text()


def test_what_a_step_expects_and_ctrl_c_pass_through():
    def refused() -> str:
        raise InputError("wrong input")

    def interrupted() -> str:
        raise KeyboardInterrupt

    with pytest.raises(InputError):
        isolated(refused, lambda line: line, (InputError,))
    with pytest.raises(KeyboardInterrupt):
        isolated(interrupted, lambda line: line)
    assert isolated(refused, lambda line: line).startswith("internal error: InputError: wrong input")


def test_an_exception_that_cannot_say_what_it_is_still_has_its_line():
    class Mute(Exception):
        def __str__(self) -> str:
            raise ValueError("no")

    assert internal_error_line(Mute()).startswith("internal error: Mute: (its message cannot be shown), ")
