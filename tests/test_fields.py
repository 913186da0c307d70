"""The field types: ids and bounded texts."""

import pytest
from conftest import DATA
from expectation_edits import (
    CASE_IDS,
    ID_RULE,
    line_of,
    problems,
    write,
)

from ncuverify.spec import load


def test_a_case_and_a_minus_read_as_written():
    """`m@a-b` is m@a - b: b is a metric read from the claim's case, not a case named a-b."""
    claim = load(DATA / "case_ids.yaml").content.claims[0]
    assert [(ref.name, ref.case) for ref in claim.metric_refs()] == [
        ("gpu__time_duration.sum", "a"),
        ("b", "b"),
    ]


def test_a_case_named_a_minus_b_is_refused(tmp_path):
    text = CASE_IDS.replace("  b:\n", "  a-b:\n    kernel: copy\n    grid: 4\n    block: 32\n  b:\n")
    path = write(tmp_path, text)
    assert problems(path) == f"{path}:{line_of(text, 'a-b:')}: cases.a-b: 'a-b' {ID_RULE}"


@pytest.mark.parametrize(
    ("old", "new", "field", "name"),
    [
        ("  copy:\n", "  co-py:\n", "kernels.co-py", "co-py"),
        ("    kernel: copy\n    grid: 1\n", "    kernel: co-py\n    grid: 1\n", "cases.a.kernel", "co-py"),
        ("  - id: a_minus_b", "  - id: a-minus-b", "claims[0].id", "a-minus-b"),
        ("    case: b\n", "    case: a-b\n", "claims[0].case", "a-b"),
        ("    case: b\n", "    case: b\n    control: a-b\n", "claims[0].control", "a-b"),
        (
            "{buffer: float32, count: 32}]",
            "{buffer: float32, count: 32, name: o-ut}]",
            "cases.a.args[1].name",
            "o-ut",
        ),
        ("  a:\n", "  2a:\n", "cases.2a", "2a"),
        ("  a:\n", '  "a b":\n', "cases.a b", "a b"),
        ("  a:\n", "  a\u0301:\n", "cases.a\u0301", "a\u0301"),
    ],
)
def test_ids_have_only_letters_digits_and_underscores(tmp_path, old, new, field, name):
    text = CASE_IDS.replace(old, new, 1)
    path = write(tmp_path, text)
    line = line_of(text, next(line for line in new.splitlines() if name in line).strip())
    assert problems(path) == f"{path}:{line}: {field}: {name!r} {ID_RULE}"


def test_ids_are_bounded(tmp_path):
    text = CASE_IDS.replace("  - id: a_minus_b", "  - id: " + "a" * 129)
    path = write(tmp_path, text)
    line = line_of(text, "- id:")
    assert problems(path) == f"{path}:{line}: claims[0].id: an id is at most 128 characters; this one has 129"


def test_texts_are_bounded_by_length_only():
    """Whatever characters a figure or note holds (a lone surrogate, a bidi override) are the report's to
    show safely; the model bounds only their length."""
    from ncuverify.spec import Citation, Claim, Expectation

    text = "\u202eevil\u2066 \ud800 \ufffe \r\n\t end"
    cite = Citation(document=text, section=text, figure=text)
    claim = Claim(id="x", case="a", metric="m", expect=Expectation(equals=1), cite=cite, note=text)
    assert claim.note == text and claim.cite.figure == text
