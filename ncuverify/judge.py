"""Stage 4: give every claim one verdict from the measurements."""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum

from ncuverify import expression
from ncuverify.profile import Measurements
from ncuverify.spec import Claim, Expectation


class Verdict(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"  # could not be evaluated: the case failed, a metric is missing, a division by zero
    SKIPPED = "skipped"  # this environment cannot measure it


@dataclass(frozen=True)
class ClaimResult:
    claim: Claim
    verdict: Verdict
    measured: float | None = None
    reason: str | None = None


# Equality is exact up to float rounding: ratios of counters are exact integers when a claim holds.
_EQUAL_REL_TOL = 1e-9


def holds(expect: Expectation, value: float) -> bool:
    """Whether a measured value satisfies the expectation."""
    if expect.equals is not None:
        return math.isclose(value, expect.equals, rel_tol=_EQUAL_REL_TOL, abs_tol=1e-12)
    if expect.at_least is not None:
        return value >= expect.at_least
    if expect.at_most is not None:
        return value <= expect.at_most
    if expect.between is not None:
        low, high = expect.between
        return low <= value <= high
    assert expect.approx is not None  # the schema guarantees exactly one assertion
    allowed = expect.abs if expect.abs is not None else abs(expect.approx) * (expect.rel or 0.0)
    return abs(value - expect.approx) <= allowed


def describe(expect: Expectation) -> str:
    """The expectation as a short formula: `== 4`, `>= 2.5`, `in [4, 9]`, `≈ 16 ± 10%`."""
    if expect.equals is not None:
        return f"== {format_number(expect.equals)}"
    if expect.at_least is not None:
        return f">= {format_number(expect.at_least)}"
    if expect.at_most is not None:
        return f"<= {format_number(expect.at_most)}"
    if expect.between is not None:
        return f"in [{format_number(expect.between[0])}, {format_number(expect.between[1])}]"
    assert expect.approx is not None
    tolerance = f"{expect.rel * 100:g}%" if expect.rel is not None else format_number(expect.abs or 0.0)
    return f"≈ {format_number(expect.approx)} ± {tolerance}"


def format_number(value: float) -> str:
    """Whole numbers with separators; others with four significant digits."""
    if math.isnan(value):
        return "n/a"
    if float(value).is_integer() and abs(value) < 1e15:
        return f"{int(value):,}"
    if abs(value) >= 1000:
        return f"{value:,.1f}"
    return f"{value:.4g}"


def judge_claim(claim: Claim, measured: Measurements) -> ClaimResult:
    """Evaluate a claim's metric on the measurements and compare it with the expectation."""

    def lookup(ref: expression.MetricRef) -> float:
        case = ref.case or claim.case
        assert case is not None  # spec validation refuses unqualified names without a case
        return measured.value(case, ref.name)

    try:
        value = expression.evaluate(claim.expression, lookup)
    except KeyError as error:
        return ClaimResult(claim, Verdict.ERROR, reason=str(error.args[0]))
    except expression.ExpressionError as error:
        return ClaimResult(claim, Verdict.ERROR, reason=str(error))
    if holds(claim.expect, value):
        return ClaimResult(claim, Verdict.PASSED, value)
    return ClaimResult(
        claim, Verdict.FAILED, value, f"measured {format_number(value)}, expected {describe(claim.expect)}"
    )


def judge(claims: list[Claim], measured: Measurements) -> list[ClaimResult]:
    return [judge_claim(claim, measured) for claim in claims]


def skip_all(claims: list[Claim], reason: str) -> list[ClaimResult]:
    return [ClaimResult(claim, Verdict.SKIPPED, reason=reason) for claim in claims]
