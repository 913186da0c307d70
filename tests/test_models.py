"""The models: an expectation file's kernels, cases and claims as typed values."""

from conftest import DATA
from expectation_edits import CASE_IDS, edited, line_of, problems, write

from ncuverify.spec import BufferArg, Float32Arg, Int32Arg, load


def test_sample_loads_with_typed_values():
    spec = load(DATA / "sample.yaml")
    content = spec.content
    assert list(content.kernels) == ["read_stride1", "read_stride32", "scale"]
    assert content.kernels["read_stride32"].entry == "read_stride<32>"
    assert content.kernels["read_stride32"].is_template
    case = content.cases["scale_2d"]
    assert case.grid == (256, 4, 1) and case.block == (64, 4, 1)
    assert case.threads == 256 * 4 * 64 * 4
    assert case.args[0] == BufferArg(buffer="float32", count=262144, fill="constant", value=2.5)
    assert case.args[2] == Float32Arg(float32=3.0)
    assert case.args[3] == Int32Arg(int32=262144)
    assert content.cases["misaligned"].args[0].offset == 1
    ratio = next(c for c in content.claims if c.id == "stride32_sector_ratio")
    assert ratio.case is None and ratio.cite.holds == "no" and ratio.note
    assert [str(r) for r in ratio.metric_refs()] == [
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum@stride32",
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum@stride1",
    ]


def test_measures_expand_and_controls_load(tmp_path):
    def with_measure(content):
        content["claims"][0].update(metric="global_ld_sectors_per_request", control="stride32")

    claim = load(edited(tmp_path, with_measure)).content.claims[0]
    assert claim.control == "stride32"
    assert [str(r) for r in claim.metric_refs()] == [
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum@stride1",
        "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum@stride1",
    ]


def test_every_holds_word_of_the_expectation_files_still_reads():
    from conftest import EXPECTATIONS

    words = {claim.cite.holds for path in EXPECTATIONS.glob("*.yaml") for claim in load(path).content.claims}
    assert words == {"yes", "approximately", "no"}


def test_a_deep_expression_in_a_file_names_the_claim(tmp_path):
    text = CASE_IDS.replace("metric: gpu__time_duration.sum@a-b", 'metric: "' + "- " * 65 + 'x"')
    path = write(tmp_path, text)
    line = line_of(text, "metric:")
    assert problems(path) == (
        f"{path}:{line}: claims[0].metric: expression {'- ' * 65 + 'x'!r} nests deeper than 64 parentheses "
        f"and signs at column 129"
    )


def test_a_pattern_re2_cannot_match_names_the_claim(tmp_path):
    text = CASE_IDS.replace("metric: gpu__time_duration.sum@a-b", r"metric: sass('(a)\1')")
    path = write(tmp_path, text)
    line = line_of(text, "metric:")
    assert problems(path) == (
        f"{path}:{line}: claims[0].metric: sass pattern '(a)\\1' is not supported: ncuverify matches SASS with "
        "a linear-time engine (RE2), which has no backreferences or lookaround"
    )
