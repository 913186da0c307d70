r"""Parsing a metric expression.

Grammar (parsed by hand, never by Python's eval, because expectation files are untrusted input):

    expr   := term (("+" | "-") term)*
    term   := factor (("*" | "/") factor)*
    factor := ("+" | "-") factor | NUMBER | METRIC ["@" CASE ["#" LAUNCH]] | "sass(" STRING ")" ["@" CASE]
            | "(" expr ")"

An expression is read in one pass, one regular-expression match per token, and is at most
MAX_LENGTH characters long and MAX_NESTING parentheses and signs deep, so that reading it takes
linear time and bounded recursion.
"""

from __future__ import annotations

import re

from ncuverify.expression.nodes import BinaryOp, Expr, ExpressionError, MetricRef, Negate, Number
from ncuverify.expression.sass import sass_regex
from ncuverify.expression.tokens import ID, Token, tokenize
from ncuverify.names import SASS_PREFIX, QualifiedCase

MAX_LENGTH = 4096
MAX_NESTING = 64
_CASE_NAME = re.compile(ID, re.ASCII)


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = tokenize(text)
        self.index = 0
        self.nesting = 0

    def _peek(self) -> Token | None:
        return self.tokens[self.index] if self.index < len(self.tokens) else None

    def _take(self) -> Token:
        token = self._peek()
        if token is None:
            raise ExpressionError(f"expression {self.text!r} ends too early")
        self.index += 1
        return token

    def _fail(self, token: Token, expected: str) -> ExpressionError:
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

    def _nested(self, token: Token) -> Expr:
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

    def _number(self, token: Token) -> Number:
        value = float(token.text.replace("_", ""))
        if value == float("inf"):
            raise ExpressionError(f"the number {token.text} at column {token.column} is too large")
        return Number(value)

    def _metric(self, token: Token) -> MetricRef:
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
        following = self._peek()
        if following is None or following.text != "#":
            return MetricRef(name, case.text)
        self._take()  # `@add#2`: the second launch of a program case that profiles each launch
        launch = self._take()
        if launch.kind != "number" or not launch.text.isdigit() or int(launch.text) < 1:
            raise self._fail(launch, "a launch number after '#' (1, 2, ...)")
        return MetricRef(name, str(QualifiedCase(None, case.text, int(launch.text))))

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


def parse(text: str) -> Expr:
    """Parse a metric expression; raise ExpressionError with the column of the mistake."""
    if len(text) > MAX_LENGTH:
        raise ExpressionError(f"the metric expression is {len(text)} characters long: at most {MAX_LENGTH}")
    return _Parser(text).parse()
