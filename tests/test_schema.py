import json

import pytest
from conftest import EXPECTATIONS, ROOT

from ncuverify.spec import json_schema, read_yaml

jsonschema = pytest.importorskip("jsonschema", reason="jsonschema (a dev dependency) is not installed")

COMMITTED = ROOT / "schema" / "expectations.schema.json"


def test_the_committed_schema_is_fresh():
    """Remake it with: ncuverify schema schema/expectations.schema.json"""
    assert json.loads(COMMITTED.read_text()) == json_schema()


@pytest.mark.parametrize("path", sorted(EXPECTATIONS.glob("*.yaml")), ids=lambda p: p.stem)
def test_every_expectation_file_validates_and_points_editors_at_the_schema(path):
    text = path.read_text()
    assert text.startswith("# yaml-language-server: $schema=../schema/expectations.schema.json")
    content, _ = read_yaml(text)  # as ncuverify reads it (4.8e12 is a number)
    errors = list(jsonschema.Draft202012Validator(json_schema()).iter_errors(content))
    assert [e.message for e in errors] == []


def test_the_schema_catches_what_editors_should_flag():
    validator = jsonschema.Draft202012Validator(json_schema())
    bad = {
        "kernels": {"k": {"source": "x", "entry": "k", "lineinfo": "yes"}},
        "cases": {},
        "claims": [],
        "extra": 1,
    }
    messages = " ".join(e.message for e in validator.iter_errors(bad))
    assert "'extra' was unexpected" in messages and "'yes' is not of type 'boolean'" in messages


def test_the_schema_flags_what_ncuverify_refuses():
    validator = jsonschema.Draft202012Validator(json_schema())
    content, _ = read_yaml((ROOT / "tests" / "data" / "case_ids.yaml").read_text())
    assert list(validator.iter_errors(content)) == []
    content["cases"]["a-b"] = {"kernel": "copy", "grid": 1, "block": 32}
    content["kernels"]["copy"]["defines"] = {"N -DX": 1, "M": "1\n#include </etc/passwd>"}
    content["cases"]["a"]["args"][0]["count"] = "1024"
    content["claims"][0].update(arch=[], id="x" * 129)
    content["claims"][0]["cite"]["figure"] = "x" * 4097
    flagged = {tuple(error.absolute_path) for error in validator.iter_errors(content)}
    assert flagged == {
        ("cases",),  # the key a-b
        ("kernels", "copy", "defines"),  # the key N -DX
        ("kernels", "copy", "defines", "M"),
        ("cases", "a", "args", 0),
        ("claims", 0, "arch"),
        ("claims", 0, "id"),
        ("claims", 0, "cite", "figure"),
    }


def test_a_case_with_vars_or_a_sweep_may_write_its_numbers_as_expressions():
    validator = jsonschema.Draft202012Validator(json_schema())
    for path in (ROOT / "examples" / "sweep" / "copy.yaml", ROOT / "tests" / "data" / "sweep.yaml"):
        content, _ = read_yaml(path.read_text())
        assert [e.message for e in validator.iter_errors(content)] == []
    content["cases"]["copy"]["args"][0]["count"] = [1]
    del content["cases"]["strided"]["sweep"]  # no vars, no sweep: numbers only, as before
    flagged = {tuple(error.absolute_path) for error in validator.iter_errors(content)}
    assert flagged == {
        ("cases", "copy", "args", 0),
        ("cases", "strided", "grid"),
        ("cases", "strided", "args", 0),
        ("cases", "strided", "args", 1),
        ("cases", "strided", "args", 2),
    }
