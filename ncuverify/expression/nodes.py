"""A parsed metric expression: its nodes, and the error reading or evaluating one raises."""

from __future__ import annotations

from dataclasses import dataclass

from ncuverify.names import SASS_PREFIX


class ExpressionError(ValueError):
    """A metric expression that cannot be parsed or evaluated."""


@dataclass(frozen=True)
class Number:
    value: float


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
