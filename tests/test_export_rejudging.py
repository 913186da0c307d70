"""A shard's verdicts judged again from its own figures: what an architecture the shard does not name
allows, what is kept as written, and what is refused."""

import pytest

from ncuverify.export.rejudging import Disagrees, judged_again
from ncuverify.measurements import Measurements
from ncuverify.results import ClaimResult, Verdict
from ncuverify.spec import Claim

CITE = {"document": "d", "section": "1", "figure": "f"}
# registers 40 on case a: fails `<= 32`
MEASURED = Measurements((("a", "k", "static__registers_per_thread", 40.0, "register/thread"),))


def claim(**fields) -> Claim:
    return Claim.model_validate(
        {
            "id": "c",
            "case": "a",
            "metric": "static__registers_per_thread",
            "expect": {"at_most": 32},
            "cite": CITE,
        }
        | fields
    )


def test_an_xfail_for_some_architectures_is_judged_for_them_where_the_shard_names_none():
    on_hopper = claim(xfail={"reason": "known", "arch": ["sm_90"]})
    stored = ClaimResult(
        on_hopper, Verdict.XFAILED, 40.0, "expected to fail: known (measured 40, expected <= 32)"
    )
    assert judged_again(stored, MEASURED, None) == stored  # static claims alone: no architecture named
    assert judged_again(stored, MEASURED, "sm_90") == stored
    with pytest.raises(Disagrees, match="'xfailed' in the shard, but its measured values give 'failed'"):
        judged_again(stored, MEASURED, "sm_80")  # measured on another architecture: no xfail there
    # a claim without an xfail is never expected to fail
    with pytest.raises(Disagrees):
        judged_again(ClaimResult(claim(), Verdict.XFAILED, 40.0), MEASURED, None)


def test_a_claim_about_other_architectures_is_one_only_where_it_names_them():
    on_ampere = claim(arch=["sm_80"])
    stored = ClaimResult(on_ampere, Verdict.OTHER_ARCH, reason="about sm_80; this run is for sm_90")
    assert judged_again(stored, MEASURED, "sm_90") == stored
    assert judged_again(stored, MEASURED, None) == stored
    with pytest.raises(Disagrees, match="about sm_80, and the figures were measured on sm_80"):
        judged_again(stored, MEASURED, "sm_80")


def test_a_skipped_claim_is_one_whose_figures_are_not_there():
    unmeasured = claim(case="b")
    stored = ClaimResult(unmeasured, Verdict.SKIPPED, reason="no GPU")
    assert judged_again(stored, MEASURED, None) == stored
    with pytest.raises(Disagrees, match="'skipped' in the shard, but its measured values give 'failed'"):
        judged_again(ClaimResult(claim(), Verdict.SKIPPED, reason="no GPU"), MEASURED, None)


@pytest.mark.parametrize("verdict", [Verdict.FAILED, Verdict.ERROR, Verdict.XPASSED])
def test_a_verdict_that_fails_the_run_is_kept_as_written(verdict):
    # judged again it would pass; stored, it fails the run, and says what the figures cannot
    stored = ClaimResult(claim(expect={"at_most": 64}), verdict, reason="stale: kernel k changed")
    assert judged_again(stored, MEASURED, None) is stored


def test_a_passing_verdict_takes_the_value_judged_again():
    stored = ClaimResult(claim(expect={"at_most": 64}), Verdict.PASSED, 1.0)
    assert judged_again(stored, MEASURED, None) == ClaimResult(stored.claim, Verdict.PASSED, 40.0)
