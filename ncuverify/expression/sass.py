"""sass() patterns, and the patterns that select kernels by name: compiled by RE2, which matches in time
linear in the text."""

from __future__ import annotations

import functools
import re

import re2

from ncuverify.expression.nodes import ExpressionError
from ncuverify.text import one_line

MAX_SASS_PATTERN = 256

# RE2's reasons for the constructs a backtracking engine has and a linear-time one cannot have.
_BACKTRACKING_ONLY = re.compile(
    r"invalid escape sequence: \\[1-9]|invalid perl operator: \(\?(?:=|!|<=|<!|P)"
)


def sass_regex(pattern: str) -> re2._Regexp:
    """A sass() pattern compiled by RE2; ExpressionError says why one cannot be."""
    return linear_regex(pattern, "sass pattern", "SASS")


@functools.lru_cache(maxsize=1024)
def linear_regex(pattern: str, what: str, matched: str) -> re2._Regexp:
    """A pattern compiled by RE2; ExpressionError says why one cannot be, naming it as `what` (sass
    pattern) and what it matches."""
    if len(pattern) > MAX_SASS_PATTERN:
        raise ExpressionError(f"{what} of {len(pattern)} characters is too long: at most {MAX_SASS_PATTERN}")
    options = re2.Options()
    options.log_errors = False  # RE2 would print every refused pattern on stderr
    options.never_capture = True  # a match needs no groups
    try:
        return re2.compile(pattern, options)
    except re2.error as error:
        raise ExpressionError(_refusal(pattern, error, what, matched)) from None


def _refusal(pattern: str, error: re2.error, what: str, matched: str) -> str:
    reason = error.args[0].decode("utf-8", "replace") if isinstance(error.args[0], bytes) else str(error)
    shown = f"{what} '{one_line(pattern)}'"
    engine = f"ncuverify matches {matched} with a linear-time engine (RE2)"
    if _BACKTRACKING_ONLY.match(reason):
        return f"{shown} is not supported: {engine}, which has no backreferences or lookaround"
    try:
        re.compile(pattern)
    except (re.error, OverflowError, RecursionError):
        return f"{shown} is not a regular expression: {one_line(reason)}"
    return f"{shown} is not supported: {engine}, which refuses it: {one_line(reason)}"
