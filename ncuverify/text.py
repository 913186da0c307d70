"""Untrusted text made safe to show: in a terminal, JUnit XML, Markdown or HTML.

Names, figures, notes and messages come from expectation files, kernel sources, recordings and ncu's
output, any of which a pull request can write. Control characters and escape sequences could move the
cursor, clear the screen, retitle the terminal or hide text (bidirectional overrides), and most of
them are not even allowed in XML; each becomes a visible escape such as \\x1b instead.
"""

from __future__ import annotations

import re

# C0 controls but tab and newline, DEL, C1 controls, the Unicode line and paragraph separators (a line
# break to some readers: they would split a table row), bidirectional embeddings, overrides and
# isolates, lone surrogates, and the two noncharacters XML forbids.
_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff\ufffe\uffff]"
)


def printable(text: str) -> str:
    """text with every unsafe character written as a visible escape (\\x1b, \\u202e); tab and newline
    are kept."""
    return _UNSAFE.sub(_escape, text)


def one_line(text: str) -> str:
    """printable(text), with newlines and tabs as spaces: for a table cell or an XML attribute."""
    return printable(text).replace("\n", " ").replace("\t", " ")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """`1 kernel`, `2 kernels`: a count with its noun (plural where it is not the noun and an s:
    `counted(2, "pass", "passes")`)."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"
