"""A shard's verdicts judged again on its own measured values, with the code that `check` judges with:
a verdict read from a file is never trusted. Where a shard says a claim holds (or is expected to fail,
or is about another architecture, or was skipped) and its own measured values say otherwise, the shard
was edited, or judged by an ncuverify that judges otherwise: either way its figures are not the ones a
run of this ncuverify would pass, and the merge refuses it rather than guess which field is true."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ncuverify.judge.claims import format_number, judge_claim
from ncuverify.judge.over_kernels import judge_again
from ncuverify.measurements import Measurements
from ncuverify.results import ClaimResult, FileResult, Verdict

# Kept as written: a verdict that fails the run cannot be made to pass it by judging it again, and the
# stored one knows what the measured values do not (a stale recording, a case that did not run).
KEPT = (Verdict.FAILED, Verdict.ERROR, Verdict.XPASSED)


class Disagrees(ValueError):
    """A claim whose stored verdict its measured values do not give; the message says both."""


def rejudged(result: FileResult) -> FileResult:
    """The file's claims, each judged again on the file's measurements (a verdict of KEPT as it is);
    Disagrees naming the first claim whose verdict they do not give."""
    measured = result.measurements or Measurements.empty()
    arch = result.provenance.arch if result.provenance is not None else None
    return replace(result, claims=[judged_again(claim, measured, arch) for claim in result.claims])


def judged_again(stored: ClaimResult, measured: Measurements, arch: str | None) -> ClaimResult:
    """The claim as judging its measured values gives it; Disagrees where that is not the stored
    verdict. arch is the architecture the figures were measured on (None: not known, as in a run of
    static claims alone, where an xfail for any of its architectures may apply)."""
    if stored.verdict in KEPT:
        return stored
    claim = stored.claim
    if stored.verdict is Verdict.OTHER_ARCH:
        if claim.arch is not None and (arch is None or arch not in claim.arch):
            return stored
        about = ", ".join(claim.arch) if claim.arch is not None else "every architecture"
        raise Disagrees(
            f"claim {claim.id}: 'other_arch' in the shard, but the claim is about {about}, and the figures"
            f" were measured on {arch}"
        )
    archs: Sequence[str | None] = [arch]
    if arch is None and claim.xfail is not None and claim.xfail.arch:
        archs = [None, *claim.xfail.arch]
    candidates = [_judged(stored, measured, each) for each in archs]
    if stored.verdict is Verdict.SKIPPED:
        # skipped: not measured; where its values are in the file, it was measured
        if all(candidate.verdict is Verdict.ERROR for candidate in candidates):
            return stored
    else:
        for candidate in candidates:
            if candidate.verdict is stored.verdict:
                return replace(candidate, point=stored.point)
    raise Disagrees(
        f"claim {claim.id}: {stored.verdict.value!r} in the shard, but its measured values give"
        f" {candidates[0].verdict.value!r} ({_why(candidates[0])})"
    )


def _judged(stored: ClaimResult, measured: Measurements, arch: str | None) -> ClaimResult:
    if stored.claim.kernels is not None:
        return judge_again(stored.claim, stored.kernels, measured, arch)
    return judge_claim(stored.claim, measured, arch)


def _why(result: ClaimResult) -> str:
    if result.reason:
        return result.reason
    return f"measured {format_number(result.measured)}" if result.measured is not None else "no value"
