"""What a run profiles: the cases each file's claims read, under qualified names."""

from conftest import DATA
from sweep_files import claim, loaded
from test_spec_sequences import TWO_STEPS

from ncuverify.build import KernelBuild
from ncuverify.build.static import StaticFacts
from ncuverify.profile.plan import FileCases, case_metrics, plan_cases, qualified
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


def test_a_claimed_step_is_planned_after_the_steps_before_it_as_one_profiled_case(tmp_path):
    third = """      - kernel: copy
        grid: 1
        block: 32
        args: [{use: total}, {buffer: float32, count: 1}, {int32: 1}]
"""
    spec = loaded(tmp_path, TWO_STEPS + third, claim("c", "reduce#2", "dram__bytes_read.sum"))
    build = KernelBuild("copy", "copy", "copy", "sm_90", b"\x7fELF", StaticFacts(None, {}, None), "", "")
    planned, wanted = plan_cases([FileCases("f", spec, {"copy": build}, spec.content.claims)], tmp_path)
    # reduce#1 has no claim, but reduce#2 reads what it wrote; reduce#3 comes after: not run
    assert list(planned) == ["f::reduce#1", "f::reduce#2"]
    assert {c.sequence for c in planned.values()} == {"f::reduce"}
    [profiled] = wanted
    assert profiled.steps == ("f::reduce#1", "f::reduce#2") and profiled.launches == 2
    assert profiled.metrics == {"dram__bytes_read.sum"} and profiled.pinned
