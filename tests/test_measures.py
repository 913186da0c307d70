import pytest
from conftest import ROOT

from ncuverify.expression import MetricRef, evaluate, parse, references, render
from ncuverify.spec.measures import MEASURES, expand


@pytest.mark.parametrize("measure", sorted(MEASURES))
def test_every_measure_is_raw_metrics_only(measure):
    refs = list(references(parse(MEASURES[measure].formula)))
    assert refs and all(ref.name not in MEASURES and ref.case is None for ref in refs)
    assert "__" in refs[0].name  # ncu metric names have a unit prefix and double underscore
    assert MEASURES[measure].description


def test_expansion_keeps_each_measures_case():
    expanded = expand(parse("kernel_time@slow / kernel_time@fast"))
    assert render(expanded) == "gpu__time_duration.sum@slow / gpu__time_duration.sum@fast"
    expanded = expand(parse("shared_ld_wavefronts_per_instruction@naive - 1"))
    assert list(references(expanded)) == [
        MetricRef("smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "naive"),
        MetricRef("smsp__sass_inst_executed_op_shared_ld.sum", "naive"),
    ]


def test_raw_names_pass_through():
    assert render(expand(parse("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum * 32"))) == (
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum * 32"
    )


def test_the_expectation_file_reference_lists_every_measure():
    reference = (ROOT / "docs" / "expectation-files.md").read_text()
    assert [name for name in MEASURES if f"`{name}`" not in reference] == []


def test_a_long_chain_of_measures_expands_without_recursion():
    """Each measure expands in place, at the case it was read from, however long the chain."""
    text = " + ".join(["global_ld_sectors_per_request@a"] * 120)
    expanded = expand(parse(text))
    refs = list(references(expanded))
    assert len(refs) == 240 and {ref.case for ref in refs} == {"a"}
    assert render(expanded).count("/") == 120
    assert evaluate(expanded, lambda ref: 64.0 if "sectors" in ref.name else 2.0) == 120 * 32.0
