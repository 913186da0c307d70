"""Untrusted text as rich Text: ids, names, figures, notes, paths and messages come from files a pull
request can write, and from ncu; each reaches rich only as a Text (a plain string would be read as
markup: `a[i]` would vanish, `[bold red]` would style the output), with control characters and escape
sequences made visible; and text broken into lines at its spaces, never within a word."""

from __future__ import annotations

import re

from rich.text import Text

from ncuverify.text import one_line, printable


def line_text(text: object, style: str = "") -> Text:
    """Untrusted text as one line of rich Text: never markup, control characters and newlines escaped
    or flattened."""
    return Text(one_line(str(text)), style=style)


def block_text(text: object, style: str = "") -> Text:
    """Untrusted text of several lines (a compiler log, a list of problems) as rich Text: never markup,
    control characters escaped, newlines kept."""
    return Text(printable(str(text)), style=style)


def wrapped(text: str, width: int) -> list[str]:
    """Text broken at runs of spaces (kept as written within a line) into lines of at most width
    characters, but for a word longer than that."""
    lines: list[str] = []
    line = ""
    for gap, word in re.findall(r"( *)([^ ]+)", text):
        if line and len(line) + len(gap) + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line}{gap}{word}" if line else word
    return [*lines, line]
