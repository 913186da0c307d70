"""The one reader of ncu's own messages in its log: the lines it marks `==ERROR==`."""

from __future__ import annotations

ERROR_MARK = "==ERROR=="


def error_lines(text: str) -> list[str]:
    """What ncu said in each of its error lines, in order, without the mark and the text before it."""
    return [line.split(ERROR_MARK, 1)[1].strip() for line in text.splitlines() if ERROR_MARK in line]
