"""A bug in ncuverify, said in one line: what was raised, and a new file that holds its traceback; and a
step run so that its bug becomes that line, given to the file (or files) the step was for."""

from __future__ import annotations

import os
import platform
import tempfile
import traceback
from collections.abc import Callable
from typing import TypeVar

from ncuverify import __version__
from ncuverify.text import one_line, printable

# How much of an unexpected exception's message its one line shows; the traceback file has it all.
_MAX_INTERNAL_MESSAGE = 300

T = TypeVar("T")


def isolated(
    step: Callable[[], T], on_bug: Callable[[str], T], expected: tuple[type[Exception], ...] = ()
) -> T:
    """step's value; where it raises an exception it does not expect (a bug in ncuverify, not the
    input's fault), on_bug's value for that bug's internal-error line. The expected exceptions, and
    Ctrl-C, pass through."""
    try:
        return step()
    except expected:
        raise
    except Exception as error:
        return on_bug(internal_error_line(error))


def internal_error_line(error: BaseException) -> str:
    """The one line that stands for a bug in ncuverify: what was raised, made printable and short, and
    a new file that holds its traceback, to report it with."""
    try:
        message = one_line(str(error))
    except Exception:  # an exception that cannot even say what it is
        message = "(its message cannot be shown)"
    if len(message) > _MAX_INTERNAL_MESSAGE:
        message = message[:_MAX_INTERNAL_MESSAGE] + "..."
    what = one_line(type(error).__name__) + (f": {message}" if message else "")
    try:
        saved = _save_traceback(error)
    except OSError as problem:
        return (
            f"internal error: {what}, please report it (its traceback could not be saved: {problem.strerror})"
        )
    return f"internal error: {what}, please report it with {saved}"


def _save_traceback(error: BaseException) -> str:
    """A new file (readable by its owner only) holding the traceback of error; its path."""
    handle, name = tempfile.mkstemp(prefix="ncuverify-internal-", suffix=".txt")
    with os.fdopen(handle, "w", encoding="utf-8", errors="backslashreplace") as file:
        file.write(f"ncuverify {__version__}, Python {platform.python_version()}\n")
        file.write(printable("".join(traceback.format_exception(error))))
    return name
