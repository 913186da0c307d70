import re

import pytest

from ncuverify.expression import ExpressionError, MetricRef, evaluate, map_refs, parse, references, render

VALUES = {("a.sum", None): 8.0, ("b.sum", None): 2.0, ("a.sum", "other"): 32.0, ("z.sum", None): 0.0}


def lookup(ref: MetricRef) -> float:
    return VALUES[(ref.name, ref.case)]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("a.sum", 8.0),
        ("a.sum / b.sum", 4.0),
        ("a.sum - b.sum * 2", 4.0),
        ("(a.sum - b.sum) * 2", 12.0),
        ("-b.sum + 1", -1.0),
        ("a.sum@other / a.sum", 4.0),
        ("1e3 / 4", 250.0),
        ("16_777_216 / 1024", 16384.0),
        ("a.sum / b.sum / 2", 2.0),  # left-associative
    ],
)
def test_evaluates_with_precedence_and_cases(text, value):
    assert evaluate(parse(text), lookup) == value


def test_references_keep_order_and_cases():
    refs = list(references(parse("l1tex__t_sectors.sum@stride32 / (l1tex__t_requests.sum + 1)")))
    assert refs == [MetricRef("l1tex__t_sectors.sum", "stride32"), MetricRef("l1tex__t_requests.sum")]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty"),
        ("a.sum /", "ends too early"),
        ("a.sum b.sum", "expected an operator at column 7"),
        ("(a.sum", "ends too early"),
        ("a.sum $ 2", "unexpected character '$' at column 7"),
        ("a.sum@", "ends too early"),
        ("a.sum@3", "a case name after '@'"),
        ("__import__('os')", "expected an operator at column 11"),
        ("sass(LDG)", "expected a quoted pattern"),
        ("sass('(')", "sass pattern '(' is not a regular expression: missing ): ("),
    ],
)
def test_syntax_errors_say_where(text, message):
    with pytest.raises(ExpressionError, match=re.escape(message)):
        parse(text)


def test_division_by_zero_names_the_divisor():
    with pytest.raises(ExpressionError, match=r"division by zero: z\.sum is 0"):
        evaluate(parse("a.sum / z.sum"), lookup)


def test_render_round_trips():
    text = "(a.sum - b.sum) / a.sum@other"
    assert render(parse(text)) == text
    assert evaluate(parse(render(parse(text))), lookup) == evaluate(parse(text), lookup)


@pytest.mark.parametrize(
    "text",
    [
        "__import__('os').system('true')",
        "open('/etc/passwd')",
        "lambda: 1",
        "a.sum[0]",
        "a.sum if 1 else 2",
        "a.sum ** 2",
        "{}",
    ],
)
def test_hostile_input_is_refused(text):
    with pytest.raises(ExpressionError):
        parse(text)


def test_dunder_names_are_only_metric_names():
    """Names are looked up among the measurements, never in Python: `a.__class__` is just a missing metric."""
    looked_up = []

    def record(ref: MetricRef) -> float:
        looked_up.append(ref.name)
        raise KeyError(f"no {ref.name}")

    with pytest.raises(KeyError):
        evaluate(parse("a.__class__.__bases__"), record)
    assert looked_up == ["a.__class__.__bases__"]


ENGINE = "ncuverify matches SASS with a linear-time engine (RE2)"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            r"sass('(a)\1')",
            rf"sass pattern '(a)\1' is not supported: {ENGINE}, which has no backreferences or lookaround",
        ),
        (
            "sass('LDG(?=\\.E)')",
            rf"sass pattern 'LDG(?=\.E)' is not supported: {ENGINE}, which has no backreferences or lookaround",
        ),
        (
            "sass('(?<!U)LDG')",
            f"sass pattern '(?<!U)LDG' is not supported: {ENGINE}, which has no backreferences or lookaround",
        ),
        (
            "sass('(?P<x>L)(?P=x)')",
            f"sass pattern '(?P<x>L)(?P=x)' is not supported: {ENGINE}, which has no backreferences or lookaround",
        ),
        (
            "sass('LDG++')",
            f"sass pattern 'LDG++' is not supported: {ENGINE}, which refuses it: bad repetition operator: ++",
        ),
        (
            "sass('L{1001}')",
            f"sass pattern 'L{{1001}}' is not supported: {ENGINE}, which refuses it: invalid repetition size: {{1001}}",
        ),
        ("sass('" + "L" * 257 + "')", "sass pattern of 257 characters is too long: at most 256"),
        ("sass('\x1b[2J')", "sass pattern '\\x1b[2J' is not a regular expression"),
    ],
)
def test_sass_patterns_a_linear_time_engine_cannot_match_are_refused(text, message):
    with pytest.raises(ExpressionError) as error:
        parse(text)
    assert str(error.value).startswith(message)


def test_a_pattern_that_backtracks_exponentially_is_accepted():
    """(a*)*b hangs a backtracking engine; RE2 matches it in linear time, so it is a pattern like any other."""
    assert list(references(parse("sass('(L*)*B')"))) == [MetricRef("sass:(L*)*B")]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "(" * 65 + "a.sum" + ")" * 65,
            f"expression {'(' * 65 + 'a.sum' + ')' * 65!r} nests deeper than 64 parentheses and signs at column 65",
        ),
        ("- " * 65 + "a.sum", "nests deeper than 64 parentheses and signs at column 129"),
        ("-(" * 33 + "a.sum" + ")" * 33, "nests deeper than 64 parentheses and signs at column 65"),
        ("(" * 100_000, "the metric expression is 100000 characters long: at most 4096"),
        ("a.sum + " * 1000 + "a.sum", "the metric expression is 8005 characters long: at most 4096"),
        ("sass('LDG)", 'the quote at column 6 is never closed in "sass(\'LDG)"'),
        ("1" * 400 + " * a.sum", "the number 1111"),
        (
            "a.sum@b.sum",
            "expected a case name after '@' (letters, digits and _, not first a digit) at column 7",
        ),
        ("a.sum@\u0663", "unexpected character '\u0663' at column 7"),
        ("\u0663 * a.sum", "unexpected character '\u0663' at column 1"),
    ],
)
def test_deep_long_and_odd_expressions_are_refused(text, message):
    with pytest.raises(ExpressionError) as error:
        parse(text)
    assert message in str(error.value)


def test_the_deepest_accepted_nesting_parses():
    assert parse("(" * 64 + "a.sum" + ")" * 64) == MetricRef("a.sum")
    assert evaluate(parse("- " * 64 + "a.sum"), lookup) == 8.0


def test_a_long_chain_is_read_without_recursion():
    """`1+1+...` in 4096 characters is a tree 2041 deep, deeper than Python's recursion limit."""
    text = " + ".join(["a.sum"] * 500) + " - b.sum"
    expr = parse(text)
    assert evaluate(expr, lookup) == 500 * 8.0 - 2.0
    assert len(list(references(expr))) == 501
    assert render(expr) == text
    assert render(map_refs(expr, lambda ref: MetricRef(ref.name, "other"))).count("@other") == 501
    chain = parse("1" + "+1" * 2040)
    assert evaluate(chain, lookup) == 2041.0 and render(chain) == " + ".join(["1"] * 2041)


def test_tokens_are_read_in_linear_time():
    """Whitespace used to be sliced off the rest of the text at every token: 4096 tokens, 4096**2 copies."""
    assert len(list(references(parse("a.sum" + " " * 4000 + "+ b.sum")))) == 2
    assert parse("\t(\na.sum\r)\f") == MetricRef("a.sum")


@pytest.mark.parametrize(
    "text",
    [
        "a.sum - (b.sum - a.sum@other)",
        "a.sum / (b.sum * 2)",
        "-(a.sum + b.sum) * --b.sum",
        "a.sum * -b.sum - -1",
        "0.1 + 1e+16 + 1234567.5 + 5e-324",
        "sass(\"LD'G\")@other + sass('LDG')",
    ],
)
def test_render_keeps_grouping_and_numbers(text):
    assert parse(render(parse(text))) == parse(text)


def test_render_parenthesises_only_where_grouping_needs_it():
    assert render(parse("((a.sum - b.sum)) - ((a.sum * b.sum))")) == "a.sum - b.sum - a.sum * b.sum"
    assert render(parse("a.sum - (b.sum + 1)")) == "a.sum - (b.sum + 1)"
    assert render(parse("a.sum / (b.sum / 2)")) == "a.sum / (b.sum / 2)"
    assert render(parse("-(a.sum * 2)")) == "-(a.sum * 2)"
