r"""Metric expressions: a claim's metric is a metric name or arithmetic over metric names.

Grammar (parsed by hand, never by Python's eval, because expectation files are untrusted input):

    expr   := term (("+" | "-") term)*
    term   := factor (("*" | "/") factor)*
    factor := ("+" | "-") factor | NUMBER | METRIC ["@" CASE] | "sass(" STRING ")" ["@" CASE]
            | "(" expr ")"

A metric without ``@case`` is read from the claim's own case; ``gpu__time_duration.sum@contiguous``
reads it from another case of the same file. ``sass('LDG\.E\.128')`` counts the SASS instructions of
the case's kernel whose mnemonic matches the regular expression (see ncuverify.static). Patterns are
RE2's: matched in time linear in the text, so no pattern can make a check hang.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import re2

from ncuverify.text import one_line

_TOKEN = re.compile(
    r"\s*(?:(?P<number>\d[\d_]*(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_.]*)"
    r"|(?P<string>'[^']*'|\"[^\"]*\")"
    r"|(?P<op>[-+*/()@]))"
)
_CASE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


class ExpressionError(ValueError):
    """A metric expression that cannot be parsed or evaluated."""


@dataclass(frozen=True)
class Number:
    value: float


# SASS counts are metrics whose name carries the pattern: `sass:LDG\.E\.128`.
SASS_PREFIX = "sass:"


@dataclass(frozen=True)
class MetricRef:
    name: str
    case: str | None = None

    @property
    def sass_pattern(self) -> str | None:
        return self.name.removeprefix(SASS_PREFIX) if self.name.startswith(SASS_PREFIX) else None

    def __str__(self) -> str:
        pattern = self.sass_pattern
        name = f"sass('{pattern}')" if pattern is not None else self.name
        return f"{name}@{self.case}" if self.case else name


@dataclass(frozen=True)
class Negate:
    operand: Expr


@dataclass(frozen=True)
class BinaryOp:
    op: str
    left: Expr
    right: Expr


Expr = Number | MetricRef | Negate | BinaryOp


@dataclass(frozen=True)
class _Token:
    kind: str
    text: str
    column: int


def _tokenize(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    position = 0
    while position < len(text):
        if text[position:].strip() == "":
            break
        match = _TOKEN.match(text, position)
        if match is None or match.end() == position:
            column = position + len(text[position:]) - len(text[position:].lstrip())
            raise ExpressionError(f"unexpected character {text[column]!r} at column {column + 1} in {text!r}")
        kind = match.lastgroup or "op"
        tokens.append(_Token(kind, match.group(kind), match.start(kind) + 1))
        position = match.end()
    return tokens


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokenize(text)
        self.index = 0

    def _peek(self) -> _Token | None:
        return self.tokens[self.index] if self.index < len(self.tokens) else None

    def _take(self) -> _Token:
        token = self._peek()
        if token is None:
            raise ExpressionError(f"expression {self.text!r} ends too early")
        self.index += 1
        return token

    def _fail(self, token: _Token, expected: str) -> ExpressionError:
        return ExpressionError(
            f"expected {expected} at column {token.column} in {self.text!r}, found {token.text!r}"
        )

    def parse(self) -> Expr:
        if not self.tokens:
            raise ExpressionError("the metric expression is empty")
        expr = self._expr()
        leftover = self._peek()
        if leftover is not None:
            raise self._fail(leftover, "an operator")
        return expr

    def _expr(self) -> Expr:
        left = self._term()
        while (token := self._peek()) is not None and token.text in "+-" and token.kind == "op":
            self._take()
            left = BinaryOp(token.text, left, self._term())
        return left

    def _term(self) -> Expr:
        left = self._factor()
        while (token := self._peek()) is not None and token.text in "*/" and token.kind == "op":
            self._take()
            left = BinaryOp(token.text, left, self._factor())
        return left

    def _factor(self) -> Expr:
        token = self._take()
        if token.kind == "op" and token.text in "+-":
            operand = self._factor()
            return Negate(operand) if token.text == "-" else operand
        if token.kind == "number":
            return Number(float(token.text.replace("_", "")))
        if token.kind == "name":
            return self._metric(token)
        if token.text == "(":
            inner = self._expr()
            closing = self._take()
            if closing.text != ")":
                raise self._fail(closing, "')'")
            return inner
        raise self._fail(token, "a metric name, a number or '('")

    def _metric(self, token: _Token) -> MetricRef:
        following = self._peek()
        name = token.text
        if name == "sass" and following is not None and following.text == "(":
            name = SASS_PREFIX + self._sass_pattern()
            following = self._peek()
        if following is None or following.text != "@":
            return MetricRef(name)
        self._take()
        case = self._take()
        if case.kind != "name" or not _CASE_NAME.fullmatch(case.text):
            raise self._fail(case, "a case name after '@'")
        return MetricRef(name, case.text)

    def _sass_pattern(self) -> str:
        self._take()  # "("
        pattern = self._take()
        if pattern.kind != "string":
            raise self._fail(pattern, "a quoted pattern, as in sass('LDG\\.E\\.128')")
        closing = self._take()
        if closing.text != ")":
            raise self._fail(closing, "')'")
        text = pattern.text[1:-1]
        sass_regex(text)
        return text


MAX_SASS_PATTERN = 256

# RE2's reasons for the constructs a backtracking engine has and a linear-time one cannot have.
_BACKTRACKING_ONLY = re.compile(
    r"invalid escape sequence: \\[1-9]|invalid perl operator: \(\?(?:=|!|<=|<!|P)"
)


@functools.lru_cache(maxsize=1024)
def sass_regex(pattern: str) -> re2._Regexp:
    """A sass() pattern compiled by RE2; ExpressionError says why one cannot be."""
    if len(pattern) > MAX_SASS_PATTERN:
        raise ExpressionError(
            f"sass pattern of {len(pattern)} characters is too long: at most {MAX_SASS_PATTERN}"
        )
    options = re2.Options()
    options.log_errors = False  # RE2 would print every refused pattern on stderr
    options.never_capture = True  # a count needs no groups
    try:
        return re2.compile(pattern, options)
    except re2.error as error:
        raise ExpressionError(_refusal(pattern, error)) from None


def _refusal(pattern: str, error: re2.error) -> str:
    reason = error.args[0].decode("utf-8", "replace") if isinstance(error.args[0], bytes) else str(error)
    shown = f"sass pattern '{one_line(pattern)}'"
    engine = "ncuverify matches SASS with a linear-time engine (RE2)"
    if _BACKTRACKING_ONLY.match(reason):
        return f"{shown} is not supported: {engine}, which has no backreferences or lookaround"
    try:
        re.compile(pattern)
    except (re.error, OverflowError, RecursionError):
        return f"{shown} is not a regular expression: {one_line(reason)}"
    return f"{shown} is not supported: {engine}, which refuses it: {one_line(reason)}"


def parse(text: str) -> Expr:
    """Parse a metric expression; raise ExpressionError with the column of the mistake."""
    return _Parser(text).parse()


def references(expr: Expr) -> Iterator[MetricRef]:
    """Every metric the expression reads, in order of appearance."""
    if isinstance(expr, MetricRef):
        yield expr
    elif isinstance(expr, Negate):
        yield from references(expr.operand)
    elif isinstance(expr, BinaryOp):
        yield from references(expr.left)
        yield from references(expr.right)


def map_refs(expr: Expr, replace: Callable[[MetricRef], Expr]) -> Expr:
    """The expression with every metric reference replaced by what replace returns for it."""
    if isinstance(expr, MetricRef):
        return replace(expr)
    if isinstance(expr, Negate):
        return Negate(map_refs(expr.operand, replace))
    if isinstance(expr, BinaryOp):
        return BinaryOp(expr.op, map_refs(expr.left, replace), map_refs(expr.right, replace))
    return expr


def evaluate(expr: Expr, lookup: Callable[[MetricRef], float]) -> float:
    """Compute the expression, reading each metric through lookup."""
    if isinstance(expr, Number):
        return expr.value
    if isinstance(expr, MetricRef):
        return lookup(expr)
    if isinstance(expr, Negate):
        return -evaluate(expr.operand, lookup)
    left = evaluate(expr.left, lookup)
    right = evaluate(expr.right, lookup)
    if expr.op == "+":
        return left + right
    if expr.op == "-":
        return left - right
    if expr.op == "*":
        return left * right
    if right == 0:
        raise ExpressionError(f"division by zero: {render(expr.right)} is 0")
    return left / right


def render(expr: Expr) -> str:
    """The expression as text, parenthesised where needed."""
    if isinstance(expr, Number):
        return f"{expr.value:g}"
    if isinstance(expr, MetricRef):
        return str(expr)
    if isinstance(expr, Negate):
        return f"-{_wrapped(expr.operand)}"
    return f"{_wrapped(expr.left)} {expr.op} {_wrapped(expr.right)}"


def _wrapped(expr: Expr) -> str:
    return f"({render(expr)})" if isinstance(expr, BinaryOp) else render(expr)
