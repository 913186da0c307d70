"""A bug in ncuverify, said in one line: what was raised, and a new file that holds its traceback."""

from __future__ import annotations

import os
import platform
import tempfile
import traceback

from ncuverify import __version__
from ncuverify.text import one_line, printable

# How much of an unexpected exception's message its one line shows; the traceback file has it all.
_MAX_INTERNAL_MESSAGE = 300


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
