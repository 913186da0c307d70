"""The suite split into shares by its groups of cases: each case, claim and kernel in one share,
balanced by cost, the same whatever the order the files come in."""

import pytest
from conftest import DATA, EXPECTATIONS

from ncuverify.profile.shares import group_cost, parts, placed, share_of
from ncuverify.results import run_keys
from ncuverify.spec import load
from ncuverify.spec.case_groups import case_groups

PATHS = sorted(EXPECTATIONS.glob("*.yaml"))
SUITE = [(key.name, load(path)) for key, path in zip(run_keys(PATHS), PATHS, strict=True)]


@pytest.mark.parametrize("n", [1, 2, 4, 8, 32])
def test_each_case_and_claim_is_in_exactly_one_share(n: int):
    every = [parts(SUITE, k, n) for k in range(1, n + 1)]
    for key, spec in SUITE:
        cases = [case for share in every for case in share[key].cases]
        claims = [claim for share in every for claim in share[key].claims]
        assert sorted(cases) == sorted([*spec.content.cases, *spec.content.programs])
        assert sorted(claims) == sorted(claim.id for claim in spec.content.claims)
        assert set().union(*(share[key].kernels for share in every)) == set(spec.content.kernels)


@pytest.mark.parametrize("n", [2, 4, 8])
def test_the_shares_are_balanced_by_cost(n: int):
    costs = [0.0] * n
    for each in placed(SUITE, n):
        costs[each.share - 1] += each.cost
    largest_group = max(each.cost for each in placed(SUITE, n))
    # greedy, costliest first: no share is above the mean by more than one group
    assert max(costs) <= sum(costs) / n + largest_group
    assert min(costs) > 0


def test_the_split_does_not_depend_on_the_order_of_the_files():
    forward = {(p.key, p.group.name): p.share for p in placed(SUITE, 4)}
    backward = {(p.key, p.group.name): p.share for p in placed(SUITE[::-1], 4)}
    assert forward == backward


def test_a_group_costs_its_launches_times_the_pass_model_s_table():
    spec = load(DATA / "sample.yaml")
    costs = {group.cases: group_cost(spec, group) for group in case_groups(spec.content)}
    # scale_2d: one launch; L1 store sectors and requests take two hardware passes, and ncu one more. The
    # table alone (never perfworks, which one machine has and another not): every shard splits alike.
    assert costs[("scale_2d",)] == 3.0
    assert costs[("stride1", "stride32", "misaligned")] == 15.0  # five launches, 3 passes each


def test_a_file_alone_is_split_as_a_suite_of_one():
    spec = load(DATA / "sample.yaml")
    claims = [{claim.id for claim in share_of(spec, k, 2).content.claims} for k in (1, 2)]
    assert claims[1] == {"scale_2d_blocks_store_coalesced"}
    assert set(share_of(spec, 2, 2).content.kernels) == {"scale"}
    assert set(share_of(spec, 2, 2).content.cases) == {"scale_2d"}
