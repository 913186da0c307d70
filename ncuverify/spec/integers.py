"""Integer expressions over a case's variables: `n // 256`, `ceil_div(n, 128) * 4`, `2**20`.

A small language of its own, parsed and computed here (never Python's eval): integer literals (with
`_`), the case's variables, + - * // % ** (Python's meaning: // and % round towards minus infinity),
parentheses, and the calls min(a, ...), max(a, ...) and ceil_div(a, b). What an expression may cost is
bounded: its length, its nesting, its exponents and every value it reaches.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ncuverify.spec.problems import suggest

MAX_EXPRESSION_LENGTH = 256
MAX_NESTING = 32
MAX_VALUE = 2**63  # no value of any step may be larger in magnitude
MAX_EXPONENT = 63


class IntegerExpressionError(ValueError):
    """An expression that cannot be read or computed; the message names the expression and why."""


def _ceil_div(values: list[int]) -> int:
    if values[1] == 0:
        raise ZeroDivisionError
    return -(-values[0] // values[1])


# Each call: how many arguments it takes (least, most) and what it computes.
_CALLS: dict[str, tuple[int, int, Callable[[list[int]], int]]] = {
    "min": (1, 16, min),
    "max": (1, 16, max),
    "ceil_div": (2, 2, _ceil_div),
}
FUNCTIONS = tuple(_CALLS)

_TOKEN = re.compile(
    r"(?P<space>\s+)|(?P<number>\d+(?:_\d+)*)|(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<op>\*\*|//|[-+*%(),])",
    re.ASCII,
)


@dataclass(frozen=True)
class _Token:
    kind: str
    text: str


def _tokens(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    position = 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None:
            raise IntegerExpressionError(f"unexpected character {text[position]!r} at column {position + 1}")
        if match.lastgroup != "space":
            tokens.append(_Token(match.lastgroup or "op", match.group()))
        position = match.end()
    return tokens


def _bounded(value: int) -> int:
    if abs(value) > MAX_VALUE:
        raise IntegerExpressionError("a value larger than 2**63")
    return value


@dataclass
class _Parser:
    """Recursive descent that computes as it reads; nesting is bounded, so the recursion is too."""

    tokens: list[_Token]
    names: Mapping[str, int]
    position: int = 0
    depth: int = 0

    def peek(self) -> str | None:
        return self.tokens[self.position].text if self.position < len(self.tokens) else None

    def take(self) -> _Token:
        if self.position >= len(self.tokens):
            raise IntegerExpressionError("it ends too early")
        token = self.tokens[self.position]
        self.position += 1
        return token

    def expect(self, text: str) -> None:
        token = self.take()
        if token.text != text:
            raise IntegerExpressionError(f"expected {text!r}, found {token.text!r}")

    def sum(self) -> int:
        value = self.product()
        while self.peek() in ("+", "-"):
            op = self.take().text
            right = self.product()
            value = _bounded(value + right if op == "+" else value - right)
        return value

    def product(self) -> int:
        value = self.unary()
        while self.peek() in ("*", "//", "%"):
            op = self.take().text
            right = self.unary()
            if op == "*":
                value = _bounded(value * right)
            elif right == 0:
                raise IntegerExpressionError("division by zero")
            else:
                value = value // right if op == "//" else value % right
        return value

    def unary(self) -> int:
        if self.peek() in ("-", "+"):
            sign = -1 if self.take().text == "-" else 1
            return sign * self.nested(self.unary)
        return self.power()

    def power(self) -> int:
        base = self.atom()
        if self.peek() != "**":
            return base
        self.take()
        exponent = self.nested(self.unary)  # right to left, as in Python: 2**3**2 is 2**9
        if exponent < 0:
            raise IntegerExpressionError(f"a negative exponent ({exponent}) makes no integer")
        if abs(base) > 1 and exponent > MAX_EXPONENT:
            raise IntegerExpressionError(f"an exponent of {exponent} is larger than {MAX_EXPONENT}")
        return _bounded(base**exponent)

    def nested(self, read: Callable[[], int]) -> int:
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise IntegerExpressionError(f"it nests deeper than {MAX_NESTING} levels")
        try:
            return read()
        finally:
            self.depth -= 1

    def atom(self) -> int:
        token = self.take()
        if token.kind == "number":
            return _bounded(int(token.text.replace("_", "")))
        if token.text == "(":
            value = self.nested(self.sum)
            self.expect(")")
            return value
        if token.kind != "name":
            raise IntegerExpressionError(f"unexpected {token.text!r}")
        if token.text in _CALLS:
            return self.call(token.text)
        if token.text not in self.names:
            known = [*self.names, *FUNCTIONS]
            raise IntegerExpressionError(f"unknown name {token.text!r}{suggest(token.text, known)}")
        return self.names[token.text]

    def call(self, name: str) -> int:
        least, most, compute = _CALLS[name]
        self.expect("(")
        values = [self.nested(self.sum)]
        while self.peek() == ",":
            self.take()
            values.append(self.nested(self.sum))
        self.expect(")")
        if not least <= len(values) <= most:
            wanted = f"{least}" if least == most else f"{least} to {most}"
            raise IntegerExpressionError(f"{name}() takes {wanted} arguments, not {len(values)}")
        try:
            return compute(values)
        except ZeroDivisionError:
            raise IntegerExpressionError("division by zero") from None


def evaluate(text: str, names: Mapping[str, int]) -> int:
    """The value of an integer expression over names; IntegerExpressionError says `TEXT: why`."""
    try:
        if len(text) > MAX_EXPRESSION_LENGTH:
            raise IntegerExpressionError(f"longer than {MAX_EXPRESSION_LENGTH} characters")
        parser = _Parser(_tokens(text), names)
        if not parser.tokens:
            raise IntegerExpressionError("an empty expression")
        value = parser.sum()
        if parser.position < len(parser.tokens):
            raise IntegerExpressionError(f"unexpected {parser.tokens[parser.position].text!r}")
        return value
    except IntegerExpressionError as error:
        shown = text if len(text) <= 80 else text[:77] + "..."
        raise IntegerExpressionError(f"{shown}: {error}") from None
