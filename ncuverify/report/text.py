"""Untrusted text as rich Text: ids, names, figures, notes, paths and messages come from files a pull
request can write, and from ncu; each reaches rich only as a Text (a plain string would be read as
markup: `a[i]` would vanish, `[bold red]` would style the output), with control characters and escape
sequences made visible; and text broken into lines at its spaces, never within a word."""

from __future__ import annotations

import re

from rich.console import Console
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


def packed(items: list[str], width: int, separator: str = ", ") -> list[str]:
    """Items joined by separator into lines of at most width characters, breaking only between items
    (an item wider than that stands on a line of its own); a line's separator stays at its end."""
    lines: list[str] = []
    line = ""
    for item in items:
        if line and len(line) + len(separator.rstrip()) + len(item) + 1 > width:
            lines.append(line + separator.rstrip())
            line = item
        else:
            line = f"{line}{separator}{item}" if line else item
    return [*lines, line] if line or not lines else lines


# Further lines of a wrapped sentence are indented this much, so that a reader sees where it began.
HANGING_INDENT = 2


def prose_lines(text: object, width: int, style: str = "") -> list[Text]:
    """Untrusted text as one sentence broken at its spaces to the width, its further lines indented:
    ids, names and paths stay whole (one longer than the width stands alone)."""
    flat = one_line(str(text))
    body = flat.lstrip(" ")
    lead = flat[: len(flat) - len(body)]  # the sentence's own indent, kept on each of its lines
    first, *rest = wrapped(body, width - len(lead))
    margin = lead + " " * HANGING_INDENT
    rest = wrapped(" ".join(rest), width - len(margin)) if rest else []
    return [Text(lead + first, style), *(Text(margin + line, style) for line in rest)]


def print_prose(console: Console, text: object, style: str = "") -> None:
    """Untrusted text printed as prose_lines at the console's width (never cut, never folded by rich)."""
    for line in prose_lines(text, console.width, style):
        console.print(line, soft_wrap=True)
