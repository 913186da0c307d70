"""Property-based tests: whatever the input, the loader, the schema, the expression parser and the CSV
parser end in a result or in their own clean error, never in an unhandled exception."""

import contextlib
import math
import string

import yaml
from conftest import DATA, FIXTURES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ncuverify import expression
from ncuverify.errors import EnvironmentProblem, InputError
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


@FUZZ
@given(text=st.text(alphabet=string.printable, max_size=400))
def test_any_file_loads_or_fails_cleanly(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("fuzz") / "claims.yaml"
    path.write_text(text)
    try:
        load(path)
    except InputError as error:
        assert str(error)


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


@FUZZ
@given(st.text(max_size=600))
def test_any_text_parses_as_ncu_output_or_fails_cleanly(text):
    with contextlib.suppress(EnvironmentProblem):
        parse_csv(text)


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
