"""Sweeps: a swept case becomes one plain case per point, named so that every later stage can name it."""

import json

import yaml
from conftest import JSON_VALUES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sweep_files import HEAD, KERNEL, SWEPT_COPY, claim, loaded, refused

from ncuverify.errors import InputError
from ncuverify.spec import BufferArg, Int32Arg, load


def test_a_sweep_makes_one_plain_case_per_value(tmp_path):
    spec = loaded(tmp_path, SWEPT_COPY, claim("sectors", "copy"))
    cases = spec.content.cases
    assert list(cases) == ["copy__n_1024", "copy__n_4096"]
    big = cases["copy__n_4096"]
    assert (big.grid, big.block, big.vars, big.sweep) == ((16, 1, 1), (256, 1, 1), {"n": 4096}, {})
    assert [a.count for a in big.args if isinstance(a, BufferArg)] == [4096, 4128]
    assert [a.int32 for a in big.args if isinstance(a, Int32Arg)] == [4096]


def test_several_variables_make_their_product_in_order(tmp_path):
    cases = SWEPT_COPY.replace('sweep: {n: [1024, "2**12"]}', "sweep: {n: [1024, 2048], k: [-1, 2]}")
    spec = loaded(tmp_path, cases, claim("sectors", "copy"))
    assert list(spec.content.cases) == [
        "copy__n_1024__k_m1",
        "copy__n_1024__k_2",
        "copy__n_2048__k_m1",
        "copy__n_2048__k_2",
    ]
    assert spec.content.cases["copy__n_2048__k_m1"].vars == {"n": 2048, "k": -1}


def test_vars_may_use_the_sweep_and_the_vars_before_them(tmp_path):
    cases = SWEPT_COPY.replace(
        'grid: "n // 256"', 'vars: {threads: 128, blocks: "ceil_div(n, threads)"}\n    grid: blocks'
    ).replace("block: 256", "block: [threads]")
    spec = loaded(tmp_path, cases, claim("sectors", "copy"))
    assert spec.content.cases["copy__n_1024"].grid == (8, 1, 1)
    assert spec.content.cases["copy__n_1024"].block == (128, 1, 1)
    assert spec.content.cases["copy__n_1024"].vars == {"n": 1024, "threads": 128, "blocks": 8}


def test_a_problem_of_one_point_names_the_case_written_its_line_and_the_point(tmp_path):
    cases = SWEPT_COPY.replace('grid: "n // 256"', 'grid: "n // (n - 1024)"')
    assert refused(tmp_path, cases, claim("sectors", "copy")) == (
        "FILE:7: cases.copy.grid: n // (n - 1024): division by zero (at n=1024)"
    )


def test_validation_of_an_expanded_case_keeps_the_line_written(tmp_path):
    cases = SWEPT_COPY.replace('grid: "n // 256"', 'grid: "n // 2048"')  # 0 blocks at n=1024
    assert refused(tmp_path, cases, claim("sectors", "copy")) == (
        "FILE:7: cases.copy__n_1024.grid: every grid dimension is a whole number of at least 1"
    )


def test_a_sweep_that_would_rename_a_case_over_another_is_refused(tmp_path):
    other = "  copy__n_1024:\n    kernel: copy\n    grid: 1\n    block: 32\n"
    message = refused(tmp_path, other + SWEPT_COPY, claim("sectors", "copy"))
    assert (
        message
        == "FILE:10: cases.copy.sweep: the sweep makes a case copy__n_1024, and the file has one so named"
    )


def test_sweeps_are_bounded(tmp_path):
    values = ", ".join(str(256 * i) for i in range(1, 18))
    cases = SWEPT_COPY.replace('sweep: {n: [1024, "2**12"]}', f"sweep: {{n: [{values}], k: [{values}]}}")
    assert refused(tmp_path, cases, claim("sectors", "copy")) == (
        "FILE:6: cases.copy.sweep: the sweep makes 289 cases; at most 256"
    )


def test_what_a_sweep_may_not_be(tmp_path):
    def sweep(text: str) -> str:
        cases = SWEPT_COPY.replace('sweep: {n: [1024, "2**12"]}', f"sweep: {text}")
        return refused(tmp_path, cases, claim("sectors", "copy")).removeprefix("FILE:")

    assert sweep("[1, 2]").startswith("6: cases.copy.sweep: sweep is a mapping of variable names to lists")
    assert sweep("{n: 4}") == "6: cases.copy.sweep.n: a sweep variable takes a list of 1 to 256 values"
    assert sweep("{n: []}") == "6: cases.copy.sweep.n: a sweep variable takes a list of 1 to 256 values"
    assert sweep("{n: [1, 1]}") == "6: cases.copy.sweep.n: values repeat: [1, 1]"
    assert (
        sweep("{n: [true]}") == "6: cases.copy.sweep.n[0]: True is neither a whole number nor an expression"
    )
    assert sweep("{n: [1.5]}") == "6: cases.copy.sweep.n[0]: 1.5 is neither a whole number nor an expression"
    assert sweep("{n: [m]}") == "6: cases.copy.sweep.n[0]: m: unknown name 'm'"
    assert sweep("{min: [1]}").startswith("6: cases.copy.sweep.min: 'min' is a function")
    assert sweep("{2n: [1]}").startswith("6: cases.copy.sweep.2n: '2n' is no variable name")


def test_a_sweep_variable_is_not_in_vars_too(tmp_path):
    cases = SWEPT_COPY.replace('grid: "n // 256"', 'vars: {n: 5}\n    grid: "n // 256"')
    assert refused(tmp_path, cases, claim("sectors", "copy")) == (
        "FILE:7: cases.copy.vars.n: n is swept; it cannot be in vars too (at n=1024)"
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(["sweep", "vars", "grid", "block", "repeat", "args"]), JSON_VALUES)
def test_any_value_of_a_swept_case_loads_or_fails_cleanly(tmp_path, field, value):
    content = yaml.safe_load(HEAD + SWEPT_COPY + "claims:\n" + claim("sectors", "copy"))
    content["cases"]["copy"][field] = value
    (tmp_path / "copy.cu").write_text(KERNEL)
    path = tmp_path / "fuzzed.yaml"
    path.write_text(json.dumps(content))  # JSON is YAML
    try:
        load(path)
    except InputError as error:
        assert str(error).startswith(str(path))


def test_what_the_sweeps_of_a_file_expand_to_is_bounded(tmp_path):
    values = ", ".join(str(i) for i in range(1, 257))
    args = "".join("      - {int32: n}\n" for _ in range(200))
    cases = SWEPT_COPY.replace('sweep: {n: [1024, "2**12"]}', f"sweep: {{n: [{values}]}}").replace(
        "      - {int32: n}\n", args
    )
    assert refused(tmp_path, cases, claim("sectors", "copy")) == (
        "FILE:6: cases.copy.sweep: the file's sweeps make more than 100000 values"
    )
