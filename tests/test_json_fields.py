"""The strict JSON field readers that the results reader and baselines share."""

import math

import pytest
from conftest import JSON_VALUES
from hypothesis import given, settings

from ncuverify import json_fields as fields
from ncuverify.json_fields import Malformed


def refused(check, *args) -> str:
    with pytest.raises(Malformed) as error:
        check(*args)
    return str(error.value)


def test_each_reader_names_the_field_and_what_is_wrong():
    assert refused(fields.text, 3, "a.b") == "a.b: not text"
    assert refused(fields.texts, ["x", None], "w") == "w[1]: not text"
    assert refused(fields.boolean, 1, "flag") == "flag: not true or false"
    assert refused(fields.integer, True, "n", 0, 9) == "n: not a whole number"
    assert refused(fields.integer, 10, "n", 0, 9) == "n: 10 is not between 0 and 9"
    assert refused(fields.finite, "1", "x") == "x: not a number"
    assert refused(fields.finite, 10**400, "x") == "x: not a finite number"
    assert refused(fields.finite, -1, "x", 0.0) == "x: -1 is less than 0"
    assert refused(fields.json_list, {}, "l") == "l: not a list"
    assert refused(fields.json_object, [], "") == "not an object"


def test_an_object_holds_its_required_keys_and_no_others():
    assert fields.json_object({"a": 1, "b": 2}, "o", {"a"}, {"b"}) == {"a": 1, "b": 2}
    assert refused(fields.json_object, {"a": 1, "c": 2}, "o", {"a"}, {"b"}) == "o: unknown key 'c'"
    assert refused(fields.json_object, {"b": 2}, "o", {"a"}, {"b"}) == "o: missing 'a'"


def test_optional_takes_null_and_checks_anything_else():
    assert fields.optional(fields.text, None, "t") is None
    assert fields.optional(fields.finite, 2, "t") == 2.0
    assert refused(fields.optional, fields.text, 2, "t") == "t: not text"


def test_members_are_named_plainly_or_quoted_and_escaped():
    assert fields.member("files", "tests/x.yaml") == "files['tests/x.yaml']"
    assert fields.member("files", "a.b:c@d-e") == "files.a.b:c@d-e"
    assert fields.member("f", "s\x1b[2J") == "f['s\\x1b[2J']"
    assert fields.shown("x" * 100) == "'" + "x" * 56 + "..."
    assert refused(fields.text_table, {"k\n": 1}, "t") == "t['k\\n']: not text"
    assert refused(fields.text_tables, {"f::c": {"run.py": 1}}, "p") == "p.f::c.run.py: not text"
    assert refused(fields.text_tables, {"f::c": "0f3c"}, "p") == "p.f::c: not an object"


def test_json_that_cannot_hold_infinities_is_refused_them():
    fields.no_infinities({"a": [1.0, {"b": 2}]}, "v")
    assert refused(fields.no_infinities, {"a": [1.0, math.inf]}, "v") == "v.a[1]: not a finite number"
    deep: list = []
    for _ in range(10):
        deep = [deep]
    assert refused(fields.no_infinities, deep, "v").endswith(": nested too deeply")


@settings(max_examples=100, deadline=None)
@given(JSON_VALUES)
def test_any_json_is_a_finite_number_or_malformed(value):
    try:
        number = fields.finite(value, "x")
    except Malformed as error:
        assert str(error).startswith("x: ") and "\n" not in str(error)
    else:
        assert math.isfinite(number)
