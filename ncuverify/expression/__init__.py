r"""Metric expressions: a claim's metric is a metric name or arithmetic over metric names.

A metric without ``@case`` is read from the claim's own case; ``gpu__time_duration.sum@contiguous``
reads it from another case of the same file. ``sass('LDG\.E\.128')`` counts the SASS instructions of
the case's kernel whose mnemonic matches the regular expression (see ncuverify.build.static). Patterns are
RE2's: matched in time linear in the text, so no pattern can make a check hang.
"""

from ncuverify.expression.folds import evaluate, map_refs, references, render
from ncuverify.expression.nodes import (
    BinaryOp,
    CaseMetric,
    Expr,
    ExpressionError,
    MetricRef,
    Negate,
    Number,
)
from ncuverify.expression.parser import MAX_LENGTH, MAX_NESTING, parse
from ncuverify.expression.sass import sass_regex
from ncuverify.expression.tokens import ID

__all__ = [
    "ID",
    "MAX_LENGTH",
    "MAX_NESTING",
    "BinaryOp",
    "CaseMetric",
    "Expr",
    "ExpressionError",
    "MetricRef",
    "Negate",
    "Number",
    "evaluate",
    "map_refs",
    "parse",
    "references",
    "render",
    "sass_regex",
]
