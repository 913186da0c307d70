r"""Metric expressions: a claim's metric is a metric name or arithmetic over metric names.

Grammar (parsed by hand, never by Python's eval, because expectation files are untrusted input):

    expr   := term (("+" | "-") term)*
    term   := factor (("*" | "/") factor)*
    factor := ("+" | "-") factor | NUMBER | METRIC ["@" CASE] | "sass(" STRING ")" ["@" CASE]
            | "(" expr ")"

A metric without ``@case`` is read from the claim's own case; ``gpu__time_duration.sum@contiguous``
reads it from another case of the same file. ``sass('LDG\.E\.128')`` counts the SASS instructions of
the case's kernel whose mnemonic matches the regular expression (see ncuverify.build.static). Patterns are
RE2's: matched in time linear in the text, so no pattern can make a check hang.

An expression is read in one pass, one regular-expression match per token, and is at most
MAX_LENGTH characters long and MAX_NESTING parentheses and signs deep, so that reading it takes
linear time and bounded recursion. What reads a parsed expression afterwards (references, map_refs,
evaluate, render) does not recurse at all: a + b + c + ... is as deep as it is long.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar

import re2

from ncuverify.text import one_line

# Ids (kernels, cases, claims, buffers): what `name@case` can name, so that the case read is the one written.
ID = r"[A-Za-z_][A-Za-z0-9_]*"
MAX_LENGTH = 4096
MAX_NESTING = 64

_TOKEN = re.compile(
    r"(?P<space>\s+)"
    r"|(?P<number>\d[\d_]*(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_.]*)"
    r"|(?P<string>'[^']*'|\"[^\"]*\")"
    r"|(?P<op>[-+*/()@])"
    r"|(?P<quote>['\"])",  # a quote that is never closed
    re.ASCII,
)
_CASE_NAME = re.compile(ID, re.ASCII)


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
        if pattern is not None:
            quote = '"' if "'" in pattern else "'"  # a pattern read from "..." may hold a '
            name = f"sass({quote}{pattern}{quote})"
        else:
            name = self.name
        return f"{name}@{self.case}" if self.case else name


@dataclass(frozen=True)
class CaseMetric(MetricRef):
    """A metric of a claim, its case made explicit (the claim's own where the expression names none)."""

    case: str


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
        match = _TOKEN.match(text, position)
        if match is None:
            raise ExpressionError(
                f"unexpected character {text[position]!r} at column {position + 1} in {text!r}"
            )
        kind = match.lastgroup or "op"
        if kind == "quote":
            raise ExpressionError(f"the quote at column {position + 1} is never closed in {text!r}")
        if kind != "space":
            tokens.append(_Token(kind, match.group(), position + 1))
        position = match.end()
    return tokens


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokenize(text)
        self.index = 0
        self.nesting = 0

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
        if token.kind == "op" and token.text in "+-(":
            return self._nested(token)
        if token.kind == "number":
            return self._number(token)
        if token.kind == "name":
            return self._metric(token)
        raise self._fail(token, "a metric name, a number or '('")

    def _nested(self, token: _Token) -> Expr:
        """A sign or a parenthesis: one level deeper, and the parser recurses once more for it."""
        self.nesting += 1
        if self.nesting > MAX_NESTING:
            raise ExpressionError(
                f"expression {self.text!r} nests deeper than {MAX_NESTING} parentheses and signs "
                f"at column {token.column}"
            )
        if token.text == "(":
            inner = self._expr()
            closing = self._take()
            if closing.text != ")":
                raise self._fail(closing, "')'")
        else:
            operand = self._factor()
            inner = Negate(operand) if token.text == "-" else operand
        self.nesting -= 1
        return inner

    def _number(self, token: _Token) -> Number:
        value = float(token.text.replace("_", ""))
        if value == float("inf"):
            raise ExpressionError(f"the number {token.text} at column {token.column} is too large")
        return Number(value)

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
            raise self._fail(case, "a case name after '@' (letters, digits and _, not first a digit)")
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
    if len(text) > MAX_LENGTH:
        raise ExpressionError(f"the metric expression is {len(text)} characters long: at most {MAX_LENGTH}")
    return _Parser(text).parse()


def references(expr: Expr) -> Iterator[MetricRef]:
    """Every metric the expression reads, in order of appearance."""
    pending = [expr]
    while pending:
        node = pending.pop()
        if isinstance(node, MetricRef):
            yield node
        elif isinstance(node, Negate):
            pending.append(node.operand)
        elif isinstance(node, BinaryOp):
            pending += [node.right, node.left]


T = TypeVar("T")


def _fold(
    expr: Expr,
    leaf: Callable[[Number | MetricRef], T],
    negate: Callable[[Negate, T], T],
    binary: Callable[[BinaryOp, T, T], T],
) -> T:
    """Combine the expression bottom-up, left before right, with a stack of its own instead of recursion."""
    done: list[T] = []
    pending: list[tuple[Expr, bool]] = [(expr, False)]
    while pending:
        node, operands_done = pending.pop()
        if isinstance(node, Negate):
            if operands_done:
                done.append(negate(node, done.pop()))
            else:
                pending += [(node, True), (node.operand, False)]
        elif isinstance(node, BinaryOp):
            if operands_done:
                right = done.pop()
                done.append(binary(node, done.pop(), right))
            else:
                pending += [(node, True), (node.right, False), (node.left, False)]
        else:
            done.append(leaf(node))
    return done[0]


def map_refs(expr: Expr, replace: Callable[[MetricRef], Expr]) -> Expr:
    """The expression with every metric reference replaced by what replace returns for it."""
    return _fold(
        expr,
        lambda leaf: replace(leaf) if isinstance(leaf, MetricRef) else leaf,
        lambda _, operand: Negate(operand),
        lambda node, left, right: BinaryOp(node.op, left, right),
    )


def evaluate(expr: Expr, lookup: Callable[[MetricRef], float]) -> float:
    """Compute the expression, reading each metric through lookup."""
    return _fold(
        expr,
        lambda leaf: leaf.value if isinstance(leaf, Number) else lookup(leaf),
        lambda _, operand: -operand,
        _arithmetic,
    )


def _arithmetic(node: BinaryOp, left: float, right: float) -> float:
    if node.op == "+":
        return left + right
    if node.op == "-":
        return left - right
    if node.op == "*":
        return left * right
    if right == 0:
        raise ExpressionError(f"division by zero: {render(node.right)} is 0")
    return left / right


_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2}


def render(expr: Expr) -> str:
    """The expression as text, with the parentheses its grouping needs: parse(render(e)) is e again."""
    return _fold(expr, _leaf_text, _negation_text, _binary_text)


def _leaf_text(leaf: Number | MetricRef) -> str:
    if isinstance(leaf, MetricRef):
        return str(leaf)
    short = f"{leaf.value:g}"
    return short if float(short) == leaf.value else repr(leaf.value)


def _negation_text(node: Negate, operand: str) -> str:
    return f"-({operand})" if isinstance(node.operand, BinaryOp) else f"-{operand}"


def _binary_text(node: BinaryOp, left: str, right: str) -> str:
    """Operators group from the left: a - (b - c) needs its parentheses, (a - b) - c does not."""
    precedence = _PRECEDENCE[node.op]
    if isinstance(node.left, BinaryOp) and _PRECEDENCE[node.left.op] < precedence:
        left = f"({left})"
    if isinstance(node.right, BinaryOp) and _PRECEDENCE[node.right.op] <= precedence:
        right = f"({right})"
    return f"{left} {node.op} {right}"
