"""What a run profiles: the cases each file's claims read, under qualified names."""

from conftest import DATA

from ncuverify.profile.plan import case_metrics, qualified
from ncuverify.spec import load


def test_each_case_needs_the_metrics_of_its_claims_and_a_control_those_of_its_claim():
    spec = load(DATA / "sample.yaml")
    needs = case_metrics(spec, spec.content.claims)
    assert list(needs) == ["stride1", "stride32", "scale_2d", "misaligned"]  # file order
    sectors = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
    # misaligned is only a control (of stride32_global_ld_sectors_measure, a named measure) besides its own claim.
    assert sectors in needs["misaligned"] and sectors in needs["stride32"]
    assert "gpu__time_duration.sum" in needs["stride32"] and "gpu__time_duration.sum" in needs["stride1"]
    assert not any(name.startswith("static__") for metrics in needs.values() for name in metrics)


def test_qualified_names_join_file_and_case():
    assert qualified("coalescing", "lab1_stride2") == "coalescing::lab1_stride2"
