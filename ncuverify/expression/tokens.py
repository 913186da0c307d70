"""The tokens of a metric expression: one regular-expression match each, in one pass."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ncuverify.expression.nodes import ExpressionError

# Ids (kernels, cases, claims, buffers): what `name@case` can name, so that the case read is the one written.
ID = r"[A-Za-z_][A-Za-z0-9_]*"

_TOKEN = re.compile(
    r"(?P<space>\s+)"
    r"|(?P<number>\d[\d_]*(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_.]*)"
    r"|(?P<string>'[^']*'|\"[^\"]*\")"
    r"|(?P<op>[-+*/()@#])"  # `#`: a launch of a case, `@add#2`
    r"|(?P<quote>['\"])",  # a quote that is never closed
    re.ASCII,
)


@dataclass(frozen=True)
class Token:
    kind: str
    text: str
    column: int


def tokenize(text: str) -> list[Token]:
    tokens: list[Token] = []
    position = 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None:
            raise ExpressionError(
                f"unexpected character {text[position]!r} at column {position + 1} in {text!r}"
            )
        kind = match.lastgroup or "op"
        if kind == "quote":
            raise ExpressionError(f"the quote at column {position + 1} is never closed in {text!r}")
        if kind != "space":
            tokens.append(Token(kind, match.group(), position + 1))
        position = match.end()
    return tokens
