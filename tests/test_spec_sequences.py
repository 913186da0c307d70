"""Launch sequences: a case with `steps` becomes one plain case per step (CASE#1, CASE#2, ...), which
claims name; a step passes an earlier step's buffer with {use: NAME}; problems are placed at the step
written."""

import pytest
from sweep_files import claim, loaded, refused

from ncuverify.spec import BufferArg, Int32Arg
from ncuverify.spec.arguments import UseArg
from ncuverify.spec.digests import case_digests

TWO_STEPS = """  reduce:
    steps:
      - kernel: copy
        grid: 4
        block: 256
        args:
          - {buffer: float32, count: 1024, fill: iota}
          - {buffer: float32, count: 1024, name: partial}
          - {int32: 1024}
      - kernel: copy
        grid: 1
        block: 256
        args:
          - {use: partial}
          - {buffer: float32, count: 1024, name: total}
          - {int32: 256}
"""


def test_each_step_becomes_a_case_named_by_its_number(tmp_path):
    spec = loaded(tmp_path, TWO_STEPS, claim("sectors", "reduce#2"))
    cases = spec.content.cases
    assert list(cases) == ["reduce#1", "reduce#2"]
    assert spec.content.sequences == {"reduce": ["reduce#1", "reduce#2"]}
    assert (cases["reduce#1"].grid, cases["reduce#2"].grid) == ((4, 1, 1), (1, 1, 1))
    assert cases["reduce#2"].args[0] == UseArg(use="partial")
    assert spec.content.sequence_steps("reduce#2") == ["reduce#1", "reduce#2"]
    assert spec.content.sequence_of("reduce#1") == "reduce"
    assert [c.case for c in spec.content.claims] == ["reduce#2"]


def test_a_claim_reads_one_steps_figures_in_a_claim_on_another(tmp_path):
    metric = "dram__bytes_read.sum / dram__bytes_read.sum@reduce#1"
    spec = loaded(tmp_path, TWO_STEPS, claim("ratio", "reduce#2", metric))
    assert {(r.name, r.case) for r in spec.content.claims[0].metric_refs()} == {
        ("dram__bytes_read.sum", "reduce#2"),
        ("dram__bytes_read.sum", "reduce#1"),
    }


def test_a_swept_sequence_makes_the_steps_of_each_point_and_claims_on_the_same_step(tmp_path):
    swept = TWO_STEPS.replace("    steps:", '    sweep: {n: [1024, "2**11"]}\n    steps:').replace(
        "{int32: 1024}", "{int32: n}"
    )
    metric = "global_ld_sectors_per_request + launch__grid_size@reduce#1"
    spec = loaded(tmp_path, swept, claim("s", "reduce#2", metric, extra="    control: reduce#1\n"))
    assert list(spec.content.cases) == [
        "reduce__n_1024#1",
        "reduce__n_1024#2",
        "reduce__n_2048#1",
        "reduce__n_2048#2",
    ]
    assert [a.int32 for a in spec.content.cases["reduce__n_2048#1"].args if isinstance(a, Int32Arg)] == [2048]
    assert [(c.id, c.case, c.control, c.metric) for c in spec.content.claims] == [
        (
            f"s__n_{n}",
            f"reduce__n_{n}#2",
            f"reduce__n_{n}#1",
            f"global_ld_sectors_per_request + launch__grid_size@reduce__n_{n}#1",
        )
        for n in (1024, 2048)
    ]


def test_a_claim_on_the_sequence_itself_is_told_to_name_a_step(tmp_path):
    message = refused(tmp_path, TWO_STEPS, claim("sectors", "reduce"))
    assert (
        "claims[0].case: case reduce is a sequence of 2 launches: name one of its steps (reduce#1, reduce#2)"
        in message
    )
    message = refused(tmp_path, TWO_STEPS, claim("sectors", "reduce#1", "dram__bytes_read.sum@reduce#3"))
    assert "claims[0].metric: no case named 'reduce#3': case reduce has 2 steps" in message


def test_a_use_names_a_buffer_an_earlier_step_made(tmp_path):
    message = refused(tmp_path, TWO_STEPS.replace("{use: partial}", "{use: parts}"), claim("c", "reduce#2"))
    # the problem is placed where the file writes it, on line 17
    assert (
        "FILE:17: cases.reduce.steps[1].args[0].use: no earlier step of reduce makes a buffer named 'parts'"
        in message
    )
    plain = "  solo:\n    kernel: copy\n    grid: 1\n    block: 32\n    args: [{use: x}, {buffer: float32, count: 1}, {int32: 1}]\n"
    message = refused(tmp_path, plain, claim("c", "solo"))
    assert (
        "cases.solo.args[0]: {use: x} passes a buffer of an earlier step: only a case with steps has those"
        in message
    )


def test_a_step_may_not_make_a_buffer_of_a_name_an_earlier_step_made(tmp_path):
    steps = TWO_STEPS.replace("name: total", "name: partial").replace(
        "{use: partial}", "{buffer: float32, count: 8}"
    )
    message = refused(tmp_path, steps, claim("c", "reduce#2"))
    assert (
        "cases.reduce.steps[1].args[1].name: an earlier step of reduce makes a buffer named 'partial': pass it with {use: partial}"
        in message
    )


def test_a_buffer_a_later_steps_struct_points_to_need_not_be_passed(tmp_path):
    steps = TWO_STEPS.replace(
        "{buffer: float32, count: 1024, name: partial}",
        "{buffer: float32, count: 1024, name: partial}\n          - {buffer: float32, count: 4, name: hidden, passed: false}",
    ).replace(
        "{use: partial}",
        "{use: partial}\n          - {struct: [{pointer: hidden}]}\n          - {use: hidden, passed: false}",
    )
    spec = loaded(tmp_path, steps, claim("c", "reduce#2"))
    assert [type(a).__name__ for a in spec.content.cases["reduce#2"].args] == [
        "UseArg",
        "StructArg",
        "UseArg",
        "BufferArg",
        "Int32Arg",
    ]
    # not pointed to by any step: refused, as in a case of its own
    unpointed = steps.replace("          - {struct: [{pointer: hidden}]}\n", "")
    assert "buffer 'hidden' is not passed and no struct's pointer field names it" in refused(
        tmp_path, unpointed, claim("c", "reduce#2")
    )


def test_what_a_sequence_and_its_steps_may_hold(tmp_path):
    beside = TWO_STEPS.replace("    steps:", "    kernel: copy\n    steps:")
    assert (
        "cases.reduce.kernel: a case with steps gives kernel in each step; beside steps it may only have vars and sweep"
        in refused(tmp_path, beside, claim("c", "reduce#1"))
    )
    inner = TWO_STEPS.replace("        grid: 1\n", "        grid: 1\n        vars: {k: 1}\n")
    assert "cases.reduce.steps[1].vars: vars belongs to the case, not to one of its steps" in refused(
        tmp_path, inner, claim("c", "reduce#1")
    )
    assert "cases.reduce.steps: steps is a list of 1 to 64 launches" in refused(
        tmp_path, "  reduce:\n    steps: []\n", claim("c", "reduce#1")
    )
    assert "cases.reduce.steps[1].grid: every grid dimension is a whole number of at least 1" in refused(
        tmp_path, TWO_STEPS.replace("grid: 1\n", "grid: 0\n"), claim("c", "reduce#1")
    )


def test_only_steps_make_names_with_a_number_after_hash(tmp_path):
    plain = "  'copy#1':\n    kernel: copy\n    grid: 1\n    block: 32\n    args: [{buffer: float32, count: 1}, {buffer: float32, count: 1}, {int32: 1}]\n"
    assert "'copy#1' is not an id" in refused(tmp_path, plain, claim("c", "copy#1"))
    sneaked = TWO_STEPS + "'cases (sequences)': {x: ['reduce#1']}\n"
    assert "unknown key 'cases (sequences)'" in refused(tmp_path, sneaked, claim("c", "reduce#1"))


def test_a_steps_digest_changes_with_the_steps_before_it(tmp_path):
    before = case_digests(loaded(tmp_path, TWO_STEPS, claim("c", "reduce#2")))
    after = case_digests(loaded(tmp_path, TWO_STEPS.replace("grid: 4", "grid: 2"), claim("c", "reduce#2")))
    assert before["reduce#1"] != after["reduce#1"]
    assert before["reduce#2"] != after["reduce#2"], "reduce#2 reads what reduce#1 wrote"
    assert isinstance(
        loaded(tmp_path, TWO_STEPS, claim("c", "reduce#2")).content.cases["reduce#1"].args[1], BufferArg
    )


@pytest.mark.parametrize(
    ("steps", "message"),
    [
        ("    steps: 5\n", "cases.reduce.steps: steps is a list of 1 to 64 launches"),
        (
            "    steps: [1]\n",
            "cases.reduce.steps[0]: a step is a launch: a mapping with kernel, grid, block and args",
        ),
        (
            "    steps:\n" + "      - {kernel: copy, grid: 1, block: 32}\n" * 65,
            "steps is a list of 1 to 64 launches",
        ),
        (
            "    steps:\n      - {kernel: copy, grid: 1, block: 32, args: [{use: [partial]}]}\n",
            "cases.reduce.steps[0].args[0].use: Input should be a valid string",
        ),
        (
            "    steps:\n      - {kernel: copy, grid: 1, block: 32, steps: []}\n",
            "steps belongs to the case, not to one of its steps",
        ),
    ],
    ids=["not_a_list", "not_a_mapping", "too_many", "use_not_a_name", "nested"],
)
def test_hostile_steps_are_one_input_error_each(tmp_path, steps, message):
    assert message in refused(tmp_path, "  reduce:\n" + steps, claim("c", "reduce#1"))


def test_a_why_is_text_of_bounded_length(tmp_path):
    plain = "  solo:\n    kernel: copy\n    grid: 1\n    block: 32\n    args: [{buffer: float32, count: 1}, {buffer: float32, count: 1}, {int32: 1}]\n"
    assert "claims[0].why: Input should be a valid string" in refused(
        tmp_path, plain, claim("c", "solo", extra="    why: [1]\n")
    )
    long = "    why: " + "x" * 5000 + "\n"
    assert "a text is at most 4096 characters here" in refused(
        tmp_path, plain, claim("c", "solo", extra=long)
    )
