"""A case's vars: its numbers written as expressions over them, computed before validation."""

import pytest
from sweep_files import claim, loaded, refused

from ncuverify.spec import BufferArg
from ncuverify.spec.variables import VariableProblem, substituted

BIG = """  big:
    kernel: copy
    vars: {n: "2**20", tile: 32}
    grid: ["n // 256", "tile // 32"]
    block: 256
    shared_bytes: "tile * 4"
    repeat: "max(1, tile // 16)"
    args:
      - {buffer: float32, count: n, offset: "tile // 8"}
      - {buffer: float32, count: "n + 32", fill: constant, value: 2}
      - {int32: n}
      - {float32: "tile * 2"}
"""


def test_every_number_of_a_case_may_be_an_expression_over_its_vars(tmp_path):
    case = loaded(tmp_path, BIG, claim("sectors", "big")).content.cases["big"]
    assert (case.grid, case.block, case.shared_bytes, case.repeat) == ((4096, 1, 1), (256, 1, 1), 128, 2)
    buffers = [a for a in case.args if isinstance(a, BufferArg)]
    assert [(b.count, b.offset, b.value) for b in buffers] == [(2**20, 4, None), (2**20 + 32, 0, 2.0)]
    assert [a.model_dump() for a in case.args[2:]] == [{"int32": 2**20}, {"float32": 64.0}]
    assert case.vars == {"n": 2**20, "tile": 32}


def test_a_case_without_vars_reads_its_numbers_as_it_always_did(tmp_path):
    plain = "  plain:\n    kernel: copy\n    grid: 1\n    block: 32\n    args:\n      - {buffer: float32, count: '1024'}\n"
    message = refused(tmp_path, plain, claim("sectors", "plain"))
    assert message.startswith("FILE:9: cases.plain.args[0].count: ")
    assert "1024" in message and "expression" not in message


def test_an_expression_that_cannot_be_computed_names_the_case_and_the_field(tmp_path):
    assert refused(tmp_path, BIG.replace('"n // 256"', '"n // 0"'), claim("sectors", "big")) == (
        "FILE:7: cases.big.grid[0]: n // 0: division by zero"
    )
    assert refused(tmp_path, BIG.replace("{int32: n}", "{int32: tilee}"), claim("sectors", "big")) == (
        "FILE:14: cases.big.args[2].int32: tilee: unknown name 'tilee' (did you mean 'tile'?)"
    )
    assert refused(tmp_path, BIG.replace("{int32: n}", '{int32: "2**40"}'), claim("sectors", "big")) == (
        "FILE:14: cases.big.args[2].int32: Input should be less than or equal to 2147483647"
    )


def test_what_vars_may_not_be(tmp_path):
    def with_vars(text: str) -> str:
        return refused(
            tmp_path, BIG.replace('vars: {n: "2**20", tile: 32}', f"vars: {text}"), claim("s", "big")
        )

    assert with_vars("[1]") == "FILE:6: cases.big.vars: vars is a mapping of names to numbers or expressions"
    assert with_vars("{n: tile, tile: 32}") == "FILE:6: cases.big.vars.n: tile: unknown name 'tile'"
    assert with_vars("{n: yes, tile: 32}") == "FILE:6: cases.big.vars.n: yes: unknown name 'yes'"
    assert (
        with_vars("{n: null, tile: 32}")
        == "FILE:6: cases.big.vars.n: None is neither a whole number nor an expression"
    )
    many = "{" + ", ".join(f"v{i}: {i}" for i in range(33)) + "}"
    assert with_vars(many) == "FILE:6: cases.big.vars: at most 32 variables a case"


def test_substitution_leaves_what_is_no_number_for_validation():
    case = {
        "kernel": "k",
        "vars": {"n": 4},
        "grid": [True, "n"],
        "block": None,
        "args": [7, {"buffer": "x", "count": "n", "name": "n"}],
    }
    assert substituted(case, ("cases", "c"), {"n": 4}) == {
        "kernel": "k",
        "vars": {"n": 4},
        "grid": [True, 4],
        "block": None,
        "args": [7, {"buffer": "x", "count": 4, "name": "n"}],
    }
    with pytest.raises(VariableProblem) as problem:
        substituted({"block": ["n", "m"]}, ("cases", "c"), {"n": 4})
    assert problem.value.where == ("cases", "c", "block", 1)
