"""Integer expressions over a case's variables: Python's integer arithmetic, and nothing else."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ncuverify.spec.integers import IntegerExpressionError, evaluate


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("n // 256", 4096),
        ("n + 32", 1048608),
        ("2**20", 1048576),
        ("1_048_576", 1048576),
        ("ceil_div(n + 1, 256)", 4097),
        ("ceil_div(-7, 2)", -3),
        ("min(n, 64, tile) * max(1, 2)", 128),
        ("2**3**2", 512),  # right to left, as in Python
        ("-2**2", -4),
        ("(n - 1) % 256", 255),
        ("-7 // 2", -4),  # towards minus infinity, as in Python
        ("-7 % 3", 2),
        ("  n  ", 1048576),
        ("2**63", 2**63),
    ],
)
def test_values(text: str, value: int):
    assert evaluate(text, {"n": 1048576, "tile": 128}) == value


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("n // 0", "n // 0: division by zero"),
        ("n % (n - n)", "n % (n - n): division by zero"),
        ("ceil_div(n, 0)", "ceil_div(n, 0): division by zero"),
        ("nn * 2", "nn * 2: unknown name 'nn' (did you mean 'n'?)"),
        ("n.bit_length()", "n.bit_length(): unexpected character '.' at column 2"),
        ("__import__(n)", "__import__(n): unknown name '__import__'"),
        ("open(n)", "open(n): unknown name 'open'"),
        ("2**64", "2**64: an exponent of 64 is larger than 63"),
        ("2**62 * 4", "2**62 * 4: a value larger than 2**63"),
        ("99999999999999999999", "99999999999999999999: a value larger than 2**63"),
        ("2**-1", "2**-1: a negative exponent (-1) makes no integer"),
        ("n / 2", "n / 2: unexpected character '/' at column 3"),
        ("1.5", "1.5: unexpected character '.' at column 2"),
        ("", ": an empty expression"),
        ("n n", "n n: unexpected 'n'"),
        ("(n", "(n: it ends too early"),
        ("min()", "min(): unexpected ')'"),
        ("ceil_div(n)", "ceil_div(n): ceil_div() takes 2 arguments, not 1"),
        ("min", "min: it ends too early"),
        ("n(1)", "n(1): unexpected '('"),
        ("1__0", "1__0: unexpected '__0'"),
        ("sum(n)", "sum(n): unknown name 'sum'"),
        ("n.__class__", "n.__class__: unexpected character"),
    ],
)
def test_what_is_refused_says_why(text: str, why: str):
    with pytest.raises(IntegerExpressionError) as error:
        evaluate(text, {"n": 1024})
    assert str(error.value).startswith(why)


def test_length_and_nesting_are_bounded():
    with pytest.raises(IntegerExpressionError, match="longer than 256 characters"):
        evaluate("1+" * 200 + "1", {})
    with pytest.raises(IntegerExpressionError, match="deeper than 32 levels"):
        evaluate("(" * 40 + "1" + ")" * 40, {})
    with pytest.raises(IntegerExpressionError, match="deeper than 32 levels"):
        evaluate("-" * 40 + "1", {})
    assert evaluate("(" * 30 + "1" + ")" * 30, {}) == 1


small = st.integers(min_value=-(2**20), max_value=2**20)


@settings(max_examples=60, deadline=None)
@given(small, small, small, st.sampled_from(["+", "-", "*", "//", "%"]), st.sampled_from(["+", "-", "*"]))
def test_arithmetic_is_python_s(a: int, b: int, c: int, first: str, second: str):
    text = f"a {first} b {second} c"
    names = {"a": a, "b": b, "c": c}
    if first in ("//", "%") and b == 0:
        with pytest.raises(IntegerExpressionError, match="division by zero"):
            evaluate(text, names)
        return
    assert evaluate(text, names) == eval(text, {}, names)  # the reference: Python's own integers


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet="n0123456789_ +-*/%(),.minaxceil_dv'", max_size=60))
def test_any_text_computes_or_fails_cleanly(text: str):
    try:
        value = evaluate(text, {"n": 3})
    except IntegerExpressionError as error:
        assert str(error).startswith(text[:77])
    else:
        assert abs(value) <= 2**63
