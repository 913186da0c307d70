"""A file's independent groups of cases: what a claim reads stays together, every case, claim and kernel
in exactly one group."""

from pathlib import Path

import pytest
from conftest import DATA, EXPECTATIONS

from ncuverify.spec import load
from ncuverify.spec.case_groups import case_groups

SEQUENCE = """
arch: sm_90
kernels:
  k: {source: "extern \\"C\\" __global__ void k(float* p) {}", entry: k}
  unused: {source: "extern \\"C\\" __global__ void unused(float* p) {}", entry: unused}
cases:
  alone: {kernel: k, grid: 1, block: 32, args: [{buffer: float32, count: 32}]}
  read: {kernel: k, grid: 1, block: 32, args: [{buffer: float32, count: 32}]}
  other: {kernel: k, grid: 1, block: 32, args: [{buffer: float32, count: 32}]}
  pair:
    steps:
      - {kernel: k, grid: 1, block: 32, args: [{buffer: float32, count: 32, name: a}]}
      - {kernel: k, grid: 1, block: 32, args: [{use: a}]}
claims:
  - {id: compares, case: read, metric: gpu__time_duration.sum / gpu__time_duration.sum@other, expect: {at_most: 2}, why: w}
  - {id: step_two, case: "pair#2", metric: gpu__time_duration.sum, expect: {at_least: 0}, why: w}
"""


def test_the_suite_falls_into_58_groups_the_largest_of_8_cases():
    groups = [
        group for path in sorted(EXPECTATIONS.glob("*.yaml")) for group in case_groups(load(path).content)
    ]
    assert len(groups) == 58
    assert max(len(group.cases) for group in groups) == 8
    assert sum(len(group.cases) for group in groups) == 118


@pytest.mark.parametrize(
    "path", [*sorted(EXPECTATIONS.glob("*.yaml")), DATA / "sample.yaml"], ids=lambda p: p.name
)
def test_every_case_claim_and_kernel_is_in_exactly_one_group(path: Path):
    content = load(path).content
    groups = case_groups(content)
    cases = [case for group in groups for case in group.cases]
    claims = [claim for group in groups for claim in group.claims]
    assert sorted(cases) == sorted([*content.cases, *content.programs])
    assert sorted(claims) == sorted(claim.id for claim in content.claims)
    assert set().union(*(group.kernels for group in groups)) == set(content.kernels)


def test_a_claim_keeps_the_cases_it_reads_and_its_control_together():
    groups = {group.cases: group.claims for group in case_groups(load(DATA / "sample.yaml").content)}
    # contiguous_four_sectors reads stride1 with stride32 as control; stride32_global_ld_sectors_measure
    # reads stride32 with misaligned as control: one group of three
    assert groups[("stride1", "stride32", "misaligned")][0] == "contiguous_four_sectors"
    assert groups[("scale_2d",)] == ("scale_2d_blocks_store_coalesced",)


def test_a_sequence_stays_whole_and_an_unread_case_and_kernel_make_groups_of_their_own(tmp_path: Path):
    path = tmp_path / "seq.yaml"
    path.write_text(SEQUENCE)
    groups = [(group.cases, group.claims, group.kernels) for group in case_groups(load(path).content)]
    assert groups == [
        (("alone",), (), ("k",)),
        (("read", "other"), ("compares",), ("k",)),
        (("pair#1", "pair#2"), ("step_two",), ("k",)),
        ((), (), ("unused",)),
    ]
