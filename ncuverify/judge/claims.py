"""Stage 4: give every claim one verdict from the measurements."""

from __future__ import annotations

import math
from dataclasses import replace

from ncuverify import expression
from ncuverify.measurements import Measurements
from ncuverify.results import ClaimResult, Verdict
from ncuverify.spec import Claim, Expectation

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


def judge_claim(claim: Claim, measured: Measurements, arch: str | None = None) -> ClaimResult:
    """Evaluate a claim's metric, compare it with the expectation, and try its control."""
    return as_expected(claim, _assess(claim, measured), arch)


def value_of(claim: Claim, case: str | None, measured: Measurements) -> tuple[float | None, str | None]:
    """The claim's expression with unqualified metrics read from case: the value, or why there is none."""

    def lookup(ref: expression.MetricRef) -> float:
        source = ref.case or case
        assert source is not None  # spec validation refuses unqualified names without a case
        return measured.value(source, ref.name)

    try:
        return expression.evaluate(claim.expression, lookup), None
    except KeyError as error:
        return None, str(error.args[0])
    except expression.ExpressionError as error:
        return None, str(error)


def _assess(claim: Claim, measured: Measurements) -> ClaimResult:
    value, problem = value_of(claim, claim.case, measured)
    if value is None:
        return ClaimResult(claim, Verdict.ERROR, reason=problem)
    if not holds(claim.expect, value):
        reason = f"measured {format_number(value)}, expected {describe(claim.expect)}"
        return ClaimResult(claim, Verdict.FAILED, value, reason)
    if claim.control is None:
        return ClaimResult(claim, Verdict.PASSED, value)
    control, problem = value_of(claim, claim.control, measured)
    if control is None:
        return ClaimResult(claim, Verdict.ERROR, value, f"control {claim.control}: {problem}")
    if holds(claim.expect, control):
        reason = (
            f"the control {claim.control} gives {format_number(control)}, which satisfies "
            f"{describe(claim.expect)} too: the check cannot tell {claim.case} from {claim.control}"
        )
        return ClaimResult(claim, Verdict.FAILED, value, reason, control)
    return ClaimResult(claim, Verdict.PASSED, value, control_measured=control)


def as_expected(claim: Claim, result: ClaimResult, arch: str | None) -> ClaimResult:
    """Turn a failure the claim expects here into xfailed, and a pass it does not expect into xpassed."""
    xfail = claim.xfail
    if xfail is None or (xfail.arch is not None and arch not in xfail.arch):
        return result
    if result.verdict is Verdict.FAILED:
        return replace(
            result, verdict=Verdict.XFAILED, reason=f"expected to fail: {xfail.reason} ({result.reason})"
        )
    if result.verdict is Verdict.PASSED:
        return replace(
            result, verdict=Verdict.XPASSED, reason=f"expected to fail ({xfail.reason}), but it holds"
        )
    return result


def judge(claims: list[Claim], measured: Measurements, arch: str | None = None) -> list[ClaimResult]:
    return [judge_claim(claim, measured, arch) for claim in claims]


def skip_all(claims: list[Claim], reason: str) -> list[ClaimResult]:
    return [ClaimResult(claim, Verdict.SKIPPED, reason=reason) for claim in claims]


def applies_to(claim: Claim, arch: str | None) -> bool:
    return claim.arch is None or arch in claim.arch


def other_arch(claims: list[Claim], arch: str | None) -> list[ClaimResult]:
    return [
        ClaimResult(
            claim, Verdict.OTHER_ARCH, reason=f"about {', '.join(claim.arch or [])}; this run is for {arch}"
        )
        for claim in claims
    ]
