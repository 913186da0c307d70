"""`build --diff`: kernels matched by symbol and arch, facts before and after, opcodes that moved."""

from ncuverify.build.artifacts_diff import diff, listed_again
from ncuverify.build.artifacts_listing import ListedKernel


def kernel(symbol="k", arch="sm_90", regs=10.0, mix=None, **facts):
    values = {"static__registers_per_thread": regs, **facts}
    return ListedKernel(symbol, symbol, symbol, arch, "x.cubin", values, mix or {"LDG": 1})


def test_changes_additions_and_removals():
    old = [kernel("a"), kernel("b"), kernel("gone"), kernel("a", arch="sm_80")]
    new = [kernel("a", regs=12.0, mix={"LDG": 2}), kernel("b"), kernel("new"), kernel("a", arch="sm_80")]
    changes = diff(old, new)
    assert [(c.name, c.arch) for c in changes.changed] == [("a", "sm_90")]
    assert changes.changed[0].facts == (("static__registers_per_thread", 10.0, 12.0),)
    assert changes.changed[0].opcodes == (("LDG", 1, 2),)
    assert [k.name for k in changes.added] == ["new"] and [k.name for k in changes.removed] == ["gone"]
    assert changes.unchanged == 2 and changes.grew


def test_a_fact_one_side_lacks_is_no_change_and_shrinking_is_not_growth():
    old = [kernel("a", static__spill_store_bytes=0.0)]
    new = [kernel("a", regs=8.0)]
    changes = diff(old, new)
    assert changes.changed[0].facts == (("static__registers_per_thread", 10.0, 8.0),)
    assert not changes.grew


def test_a_kernel_listed_again_with_other_facts_is_found_with_its_first_listing():
    # Two copies of one library list a kernel twice alike: that is no ambiguity.
    assert listed_again([kernel("a"), kernel("b"), kernel("a")]) is None
    assert listed_again([kernel("a"), kernel("b"), kernel("a", regs=200.0)]) == (2, 0)
    assert listed_again([kernel("a"), kernel("a", mix={"LDG": 9})]) == (1, 0)
    assert listed_again([kernel("a"), kernel("a", arch="sm_80", regs=200.0)]) is None
