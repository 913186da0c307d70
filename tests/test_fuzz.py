"""Property-based tests: whatever the input, the loader, the schema, the expression parser and the CSV
parser end in a result or in their own clean error, never in an unhandled exception."""

import contextlib
import math
import re
import string

import pytest
import yaml
from conftest import DATA, FIXTURES
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from ncuverify import expression
from ncuverify.errors import EnvironmentProblem, InputError
from ncuverify.names import SASS_PREFIX
from ncuverify.profile import parse_csv
from ncuverify.spec import load, read_yaml

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

SAMPLE = yaml.safe_load((DATA / "sample.yaml").read_text())
CAPTURE = (FIXTURES / "sample" / "ncu.log").read_text()

scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=True)
    | st.text(max_size=20)
)
documents = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=20,
)


@FUZZ
@given(st.text(max_size=400))
def test_any_text_reads_as_yaml_or_fails_cleanly(text):
    with contextlib.suppress(InputError):
        read_yaml(text)


@pytest.mark.slow
@FUZZ
@given(text=st.text(alphabet=string.printable, max_size=400))
def test_any_file_loads_or_fails_cleanly(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("fuzz") / "claims.yaml"
    path.write_text(text)
    try:
        load(path)
    except InputError as error:
        assert str(error)


@pytest.mark.slow
@FUZZ
@given(section=st.sampled_from(["kernels", "cases", "claims", "arch", "regressions"]), value=documents)
def test_any_value_in_any_section_is_validated(tmp_path_factory, section, value):
    content = {**SAMPLE, section: value}
    path = tmp_path_factory.mktemp("fuzz") / "claims.yaml"
    path.write_text(yaml.safe_dump(content))
    try:
        load(path)
    except InputError as error:
        assert str(error).startswith(str(path))


@FUZZ
@given(st.text(max_size=80))
def test_any_expression_parses_or_fails_cleanly(text):
    with contextlib.suppress(expression.ExpressionError):
        expression.parse(text)


names = st.sampled_from(["a.sum", "b.ratio", "c.sum@other", "sass('LDG')", "static__barriers"])
tokens = st.lists(names | st.sampled_from(["+", "-", "*", "/", "(", ")", "0", "2.5", "1e3"]), max_size=12)


@FUZZ
@given(tokens, st.floats(allow_nan=False, allow_infinity=False, min_value=-1e6, max_value=1e6))
def test_parsed_expressions_evaluate_or_fail_cleanly(parts, value):
    try:
        parsed = expression.parse(" ".join(parts))
    except expression.ExpressionError:
        return
    try:
        result = expression.evaluate(parsed, lambda ref: value)
    except expression.ExpressionError as error:
        assert "division by zero" in str(error)
        return
    assert (isinstance(result, float) and not math.isnan(result)) or value == 0


@pytest.mark.slow
@FUZZ
@given(st.text(max_size=600))
def test_any_text_parses_as_ncu_output_or_fails_cleanly(text):
    with contextlib.suppress(EnvironmentProblem):
        parse_csv(text)


@pytest.mark.slow
@FUZZ
@given(st.data())
def test_damaged_real_captures_parse_or_fail_cleanly(data):
    lines = CAPTURE.splitlines()
    for _ in range(data.draw(st.integers(1, 5))):
        position = data.draw(st.integers(0, len(lines) - 1))
        action = data.draw(st.sampled_from(["drop", "cut", "duplicate", "garble"]))
        if action == "drop":
            del lines[position]
        elif action == "cut":
            lines[position] = lines[position][: data.draw(st.integers(0, len(lines[position])))]
        elif action == "duplicate":
            lines.insert(position, lines[position])
        else:
            lines[position] = data.draw(st.text(max_size=50))
        if not lines:
            break
    try:
        table = parse_csv("\n".join(lines))
    except EnvironmentProblem:
        return
    assert list(table.columns) == ["launch", "kernel", "metric", "value", "unit"]


# --- the YAML reader ------------------------------------------------------------------------------------

yaml_alphabet = st.sampled_from(
    [*"[]{}:,-?&*!|>'\"#%@` \n\t\\", "010", "1:30", "yes", "<<", "~", "0x1F", "a", "1"]
)


@FUZZ
@given(st.lists(yaml_alphabet, max_size=200).map("".join))
def test_yaml_made_of_its_own_syntax_reads_or_fails_cleanly(text):
    with contextlib.suppress(InputError):
        read_yaml(text)


@FUZZ
@given(st.binary(max_size=400))
def test_any_bytes_load_or_fail_cleanly(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("fuzz") / "claims.yaml"
    path.write_bytes(data)
    with contextlib.suppress(InputError):
        load(path)


@FUZZ
@given(st.integers(1, 300), st.sampled_from(["[", "{a: ", "- ", "&x [", "{? "]))
def test_any_nesting_reads_or_fails_cleanly(depth, opening):
    closing = {"[": "]", "{a: ": "}", "- ": "", "&x [": "]", "{? ": "}"}[opening]
    text = opening * depth + "1" + closing * depth
    try:
        read_yaml(text)
    except InputError as error:
        reasons = ("nest deeper than 64 levels", "not valid YAML", "a key must be plain text")
        assert any(reason in str(error) for reason in reasons)
        assert depth > 64 or "nest deeper" not in str(error)
    else:
        assert depth <= 64


@pytest.mark.slow
@settings(FUZZ, max_examples=25)
@given(st.integers(1, 40), st.integers(1, 12), st.integers(0, 3000))
def test_aliases_read_unless_they_add_more_than_is_written(width, levels, plain):
    """Lines of aliases of the line before (a billion laughs, for some widths and depths) beside plain
    values: read where the aliases add no more values than the file writes (or MAX_ALIAS_VALUES),
    refused saying so otherwise."""
    lines = [f"a0: &a0 [{', '.join(['x'] * width)}]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]" for i in range(1, levels)]
    text = "\n".join([*lines, f"p: [{', '.join(['1'] * plain)}]"]) + "\n"
    written = 1 + levels * (2 + width) + 2 + plain  # the root; each line's key, list and items
    expanded, values = 1 + 2 + plain, 1 + width  # a0's list and its items
    for _ in range(levels):
        expanded += 1 + values  # the line's key and its list, expanded
        values = 1 + width * values
    try:
        data, _ = read_yaml(text)
    except InputError as error:
        assert expanded - written > max(100_000, written), (expanded, written)
        assert f"aliases expand the file's {written} values to more than" in str(error)
        return
    assert expanded - written <= max(100_000, written)
    assert len(data) == levels + 1


# YAML 1.2's core schema (https://yaml.org/spec/1.2.2/#1032-tag-resolution), written out independently.
CORE_INT = re.compile(r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+")
CORE_FLOAT = re.compile(
    r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?|[-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN)"
)
plain_scalars = st.from_regex(
    r"[-+]?(0[bxo]?)?[0-9a-fA-F_:.]{0,8}([eE][-+]?[0-9]{1,3})?", fullmatch=True
) | st.sampled_from(
    ["yes", "No", "on", "OFF", "y", "n", "true", "False", "null", "~", ".inf", "-.Inf", ".NaN", "1:30", "0b1"]
)


@FUZZ
@given(plain_scalars)
def test_plain_scalars_are_typed_as_yaml_1_2_core_types_them(text):
    try:
        data, _ = read_yaml(f"a: {text}\n")
    except InputError as error:
        assert "is longer than ncuverify reads" in str(error) or "not valid YAML" in str(error)
        return
    value = data["a"]
    if isinstance(value, bool):
        assert text in ("true", "True", "TRUE", "false", "False", "FALSE")
    elif isinstance(value, int):
        assert CORE_INT.fullmatch(text) and not re.fullmatch(r"[-+]?0[0-9]+", text)
    elif isinstance(value, float):
        assert CORE_FLOAT.fullmatch(text)
    elif value is not None:
        assert isinstance(value, str)
        assert not CORE_FLOAT.fullmatch(text) or re.fullmatch(r"[-+]?0[0-9]+", text)


@FUZZ
@given(plain_scalars)
def test_a_number_field_takes_a_core_number_or_says_why_not(tmp_path_factory, text):
    body = (
        (DATA / "case_ids.yaml")
        .read_text()
        .replace("{buffer: float32, count: 32}, {", f"{{buffer: float32, count: {text}}}, {{", 1)
    )
    path = tmp_path_factory.mktemp("fuzz") / "claims.yaml"
    path.write_text(body)
    try:
        count = load(path).content.cases["a"].args[0].count
    except InputError as error:
        assert str(error).startswith(str(path))
        return
    if text.startswith(("0x", "0o")):
        assert count == int(text[2:], 16 if text[1] == "x" else 8)
    else:
        assert re.fullmatch(r"[-+]?(0|[1-9][0-9]*)", text) and count == int(text)


# --- expressions -------------------------------------------------------------------------------------------

expression_alphabet = st.sampled_from(
    [*"()+-*/@.'\" \t_", "a", "sum", "1", "e5", "sass", "x1", "(" * 10, "- " * 10]
)


@FUZZ
@given(st.lists(expression_alphabet, max_size=300).map("".join))
def test_expressions_made_of_their_own_syntax_parse_or_fail_cleanly(text):
    try:
        parsed = expression.parse(text)
    except expression.ExpressionError:
        return
    expression.render(parsed)
    list(expression.references(parsed))


ids = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,12}", fullmatch=True)
metric_names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_.]{0,20}", fullmatch=True).filter(lambda n: n != "sass")
patterns = st.sampled_from(["LDG", r"LDG\.E\.128", "(LDL|STL)", "L'D", 'S"T', r".*\.SYS", "(A*)*B"])
leaves = (
    st.builds(expression.Number, st.floats(min_value=0, allow_nan=False, allow_infinity=False).map(abs))
    | st.builds(expression.MetricRef, metric_names, st.none() | ids)
    | st.builds(lambda p, c: expression.MetricRef(SASS_PREFIX + p, c), patterns, st.none() | ids)
)
trees = st.recursive(
    leaves,
    lambda children: (
        st.builds(expression.Negate, children)
        | st.builds(expression.BinaryOp, st.sampled_from("+-*/"), children, children)
    ),
    max_leaves=30,
)


def depth(tree: expression.Expr) -> int:
    deepest, pending = 0, [(tree, 1)]
    while pending:
        node, level = pending.pop()
        deepest = max(deepest, level)
        if isinstance(node, expression.Negate):
            pending.append((node.operand, level + 1))
        elif isinstance(node, expression.BinaryOp):
            pending += [(node.left, level + 1), (node.right, level + 1)]
    return deepest


@FUZZ
@given(trees)
def test_rendered_expressions_parse_to_the_same_tree(tree):
    assume(depth(tree) <= expression.MAX_NESTING)  # no deeper than parse accepts
    assert expression.parse(expression.render(tree)) == tree


@pytest.mark.slow
@FUZZ
@given(
    st.lists(
        st.tuples(metric_names, ids, st.sampled_from([" - ", "-", "+", " * ", "/", "- -"])),
        min_size=1,
        max_size=8,
    )
)
def test_each_case_read_is_the_case_written(parts):
    """However the operators around them are spaced, `name@case` reads exactly that case."""
    text = "".join(f"{name}@{case}{operator}" for name, case, operator in parts) + "1"
    refs = list(expression.references(expression.parse(text)))
    assert [(ref.name, ref.case) for ref in refs] == [(name, case) for name, case, _ in parts]


@pytest.mark.slow
@FUZZ
@given(st.lists(ids, min_size=1, max_size=4, unique=True))
def test_cases_named_by_any_ids_are_read_as_named(tmp_path_factory, names):
    content = yaml.safe_load((DATA / "case_ids.yaml").read_text())
    case = content["cases"]["a"]
    content["cases"] = {name: case for name in names}
    content["claims"][0]["case"] = names[0]
    content["claims"][0]["metric"] = "-".join(f"gpu__time_duration.sum@{name}" for name in names)
    path = tmp_path_factory.mktemp("fuzz") / "claims.yaml"
    path.write_text(yaml.safe_dump(content))
    claim = load(path).content.claims[0]
    assert [ref.case for ref in claim.metric_refs()] == names
