"""Claims over kernels: each kernel of the claim's set judged on its static facts; the claim fails where
a kernel fails that no allow entry accepts, naming each such kernel with its value."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ncuverify.build.built import BuiltKernel
from ncuverify.build.inventory import selected
from ncuverify.judge.claims import as_expected, describe, format_number, holds, value_of
from ncuverify.judge.kernel_sets import set_case
from ncuverify.measurements import Measurements
from ncuverify.results import ClaimResult, KernelOutcome, KernelVerdict, Verdict
from ncuverify.spec import Claim
from ncuverify.spec.allow import AllowEntry

# How many failing kernels a claim's one-line reason names; every one is in its outcomes.
REASON_KERNELS = 3


def judge_over_kernels(
    claim: Claim,
    kernels: dict[str, BuiltKernel],
    measured: Measurements,
    allow: Sequence[AllowEntry] = (),
    arch: str | None = None,
) -> ClaimResult:
    """The claim judged on each kernel of its set (narrowed by its `match:`), by label."""
    assert claim.kernels is not None  # a claim over kernels
    chosen = narrowed(claim, kernels)
    if not chosen:
        reason = f"match {claim.match!r} selects none of the {len(kernels)} kernels of {claim.kernels}"
        return ClaimResult(claim, Verdict.ERROR, reason=reason)
    outcomes = tuple(_outcome(claim, label, kernel, measured, allow) for label, kernel in chosen.items())
    return as_expected(claim, _verdict(claim, outcomes), arch)


def judge_again(
    claim: Claim, stored: Sequence[KernelOutcome], measured: Measurements, arch: str | None = None
) -> ClaimResult:
    """The claim judged again on the kernels it was judged on, as a file of results (a shard) says:
    each kernel's value read anew from measured. A kernel that fails stays allowed only where it was
    allowed: the allow entries are in the expectation file, which the results do not hold."""
    assert claim.kernels is not None  # a claim over kernels
    if not stored:
        return ClaimResult(claim, Verdict.ERROR, reason=f"no kernel of {claim.kernels} was judged")
    outcomes = tuple(_outcome_again(claim, outcome, measured) for outcome in stored)
    return as_expected(claim, _verdict(claim, outcomes), arch)


def _outcome_again(claim: Claim, stored: KernelOutcome, measured: Measurements) -> KernelOutcome:
    assert claim.kernels is not None
    value, problem = value_of(claim, set_case(claim.kernels, stored.kernel), measured)
    if value is None:
        return KernelOutcome(stored.kernel, None, KernelVerdict.ERROR, problem)
    if holds(claim.expect, value):
        return KernelOutcome(stored.kernel, value, KernelVerdict.PASSED)
    if stored.verdict is KernelVerdict.ALLOWED:
        return replace(stored, value=value)
    return KernelOutcome(stored.kernel, value, KernelVerdict.FAILED)


def narrowed(claim: Claim, kernels: dict[str, BuiltKernel]) -> dict[str, BuiltKernel]:
    """The kernels of the set that the claim's `match:` selects (all without one)."""
    if claim.match is None:
        return kernels
    kept = {kernel.symbol for kernel in selected(kernels.values(), claim.match)}
    return {label: kernel for label, kernel in kernels.items() if kernel.symbol in kept}


def _outcome(
    claim: Claim, label: str, kernel: BuiltKernel, measured: Measurements, allow: Sequence[AllowEntry]
) -> KernelOutcome:
    assert claim.kernels is not None
    value, problem = value_of(claim, set_case(claim.kernels, label), measured)
    if value is None:
        return KernelOutcome(label, None, KernelVerdict.ERROR, problem)
    if holds(claim.expect, value):
        return KernelOutcome(label, value, KernelVerdict.PASSED)
    for index, entry in enumerate(allow):
        if entry.covers_claim(claim) and entry.covers_kernel(label, kernel.signature, kernel.symbol):
            return KernelOutcome(label, value, KernelVerdict.ALLOWED, entry.reason, index)
    return KernelOutcome(label, value, KernelVerdict.FAILED)


def _verdict(claim: Claim, outcomes: tuple[KernelOutcome, ...]) -> ClaimResult:
    failed = [o for o in outcomes if o.verdict is KernelVerdict.FAILED]
    errors = [o for o in outcomes if o.verdict is KernelVerdict.ERROR]
    if failed:
        named = "; ".join(kernel_line(claim, o) for o in failed[:REASON_KERNELS])
        more = f"; and {len(failed) - REASON_KERNELS} more" if len(failed) > REASON_KERNELS else ""
        reason = f"{tally(outcomes)}, expected {describe(claim.expect)}: {named}{more}"
        return ClaimResult(claim, Verdict.FAILED, reason=reason, kernels=outcomes)
    if errors:
        reason = (
            f"{len(errors)} of {len(outcomes)} kernels could not be read: {kernel_line(claim, errors[0])}"
        )
        return ClaimResult(claim, Verdict.ERROR, reason=reason, kernels=outcomes)
    return ClaimResult(claim, Verdict.PASSED, kernels=outcomes)


def short_tally(outcomes: Sequence[KernelOutcome]) -> str:
    """The tally for a table's narrow column: `340 hold`, `3 of 340 fail`."""
    failed = sum(1 for o in outcomes if o.verdict is KernelVerdict.FAILED)
    errors = sum(1 for o in outcomes if o.verdict is KernelVerdict.ERROR)
    if failed:
        return f"{failed} of {len(outcomes)} fail"
    if errors:
        return f"{errors} of {len(outcomes)} unread"
    return f"{len(outcomes)} hold"


def tally(outcomes: Sequence[KernelOutcome]) -> str:
    """`holds for 340 kernels`, `fails for 3 of 340 kernels`, and how many are allowed."""
    total = len(outcomes)
    failed = sum(1 for o in outcomes if o.verdict is KernelVerdict.FAILED)
    errors = sum(1 for o in outcomes if o.verdict is KernelVerdict.ERROR)
    accepted = sum(1 for o in outcomes if o.verdict is KernelVerdict.ALLOWED)
    noun = "kernel" if total == 1 else "kernels"
    if failed:
        text = f"fails for {failed} of {total} {noun}"
    elif errors:
        text = f"unread for {errors} of {total} {noun}"
    else:
        text = f"holds for {total} {noun}"
    return text + (f" ({accepted} allowed)" if accepted else "")


def kernel_line(claim: Claim, outcome: KernelOutcome) -> str:
    """`static__registers_per_thread = 168 for axpy_gemm<64>`, and why it is allowed or unread."""
    if outcome.value is None:
        return f"{outcome.kernel}: {outcome.reason}"
    line = f"{claim.metric} = {format_number(outcome.value)} for {outcome.kernel}"
    return line + (f" (allowed: {outcome.reason})" if outcome.verdict is KernelVerdict.ALLOWED else "")


def shown_outcomes(result: ClaimResult) -> list[KernelOutcome]:
    """The kernels worth a line of their own: failed, unread and allowed, in that order."""
    order = (KernelVerdict.FAILED, KernelVerdict.ERROR, KernelVerdict.ALLOWED)
    return [o for verdict in order for o in result.kernels if o.verdict is verdict]
