"""The JSON results read back: every field checked, anything else refused with an InputError naming
the field."""

import json
from pathlib import Path

import pytest
from conftest import JSON_VALUES
from exported_results import judged_explained, judged_sample
from hypothesis import given, settings
from hypothesis import strategies as st

from ncuverify import export
from ncuverify.errors import InputError
from ncuverify.results import FileResult


@pytest.fixture(scope="module")
def whole() -> FileResult:
    return judged_sample()


def test_results_of_an_earlier_version_without_keys_are_known_by_their_paths(whole):
    document = json.loads(export.to_json([whole]))
    del document["files"][0]["key"]
    (result,) = export.from_json(json.dumps(document))
    assert result.key == "tests/data/sample.yaml"


# (where, the new value or None to delete the key, the message after "not a result of check --json: ")
EDITS = [
    (["run"], "1/2", "run: not an object"),
    (["run"], {}, "run: missing 'shard'"),
    (["run", "shard"], [3, 2], "run.shard[0]: 3 is not between 1 and 2"),
    (["run", "shard"], [1, 2, 3], "run.shard: not a pair [K, N]"),
    (["run", "shard"], [True, 2], "run.shard[0]: not a whole number"),
    (["run", "suite"], "../../etc", "run.suite: '../../etc' is not a suite's digest"),
    (["exit_code"], 9, "exit_code: 9 is not between 0 and 4"),
    (["surprise"], 1, "unknown key 'surprise'"),
    (["baseline"], [], "baseline: not an object"),
    (["baseline"], {"version": 1}, "baseline: missing 'added'"),
    (
        ["baseline"],
        {
            "version": 0,
            "error": None,
            **{key: [] for key in ("regressed", "allowed", "improved", "added", "removed")},
        },
        "baseline.version: 0 is not between 1",
    ),
    (
        ["baseline"],
        {
            "version": 1,
            "error": None,
            **{key: [] for key in ("allowed", "improved", "added", "removed")},
            "regressed": [
                {"file": "f", "path": None, "line": 0, "case": "c", "metric": "m", "before": 1, "after": 2}
            ],
        },
        "baseline.regressed[0]: missing 'allowed'",
    ),
    (["files"], {"0": {}}, "files: not a list"),
    (["files", 0, "key"], ["expectations", "a.yaml"], "files[0].key: not text"),
    (["files", 0, "claims", 3, "verdict"], "pased", "files[0].claims[3].verdict: 'pased' is not a verdict"),
    (["files", 0, "claims", 3, "verdict"], None, "files[0].claims[3]: missing 'verdict'"),
    (["files", 0, "claims", 0, "measured"], "32", "files[0].claims[0].measured: not a number"),
    (["files", 0, "claims", 0, "measured"], 10**400, "files[0].claims[0].measured: not a finite number"),
    (["files", 0, "claims", 0, "measured"], float("nan"), "files[0].claims[0].measured: not a finite number"),
    (["files", 0, "claims", 0, "id"], "x; rm -rf /", "files[0].claims[0].id: 'x; rm -rf /' is not an id"),
    (["files", 0, "claims", 0, "expect"], {"equals": True}, "files[0].claims[0].expect.equals: Input should"),
    (["files", 0, "claims", 0, "expect"], {"equals": 1, "at_most": 2}, "files[0].claims[0].expect: give exa"),
    (["files", 0, "claims", 0, "expect"], {"at_most": float("inf")}, "files[0].claims[0].expect.at_most: no"),
    (["files", 0, "claims", 0, "cite", "holds"], "maybe", "files[0].claims[0].cite.holds: Input should be"),
    (["files", 0, "claims", 0, "cite", "x\x1b[2J"], 1, "files[0].claims[0].cite: unknown key 'x\\x1b[2J'"),
    (["files", 0, "claims", 0, "metric"], "(a.sum", "files[0].claims[0].metric: expression '(a.sum' ends"),
    (
        ["files", 0, "claims", 0, "metric"],
        "(" * 5000 + "a",
        "files[0].claims[0].metric: the metric expression is",
    ),
    (["files", 0, "claims", 1, "id"], "@first", "files[0].claims[1].id: duplicate claim id"),
    (["files", 0, "seconds"], -1, "files[0].seconds: -1 is less than 0"),
    (["files", 0, "replayed"], "yes", "files[0].replayed: not true or false"),
    (["files", 0, "warnings"], ["ok", 3], "files[0].warnings[1]: not text"),
    (["files", 0, "input_error"], ["x"], "files[0].input_error: not text"),
    (["files", 0, "internal_error"], 5, "files[0].internal_error: not text"),
    (["files", 0, "provenance", "gpu"], None, "files[0].provenance: missing 'gpu'"),
    (["files", 0, "provenance", "ncu_command"], "ncu --csv", "files[0].provenance.ncu_command: not a list"),
    (["files", 0, "provenance", "kernels", "a::b"], 1, "files[0].provenance.kernels.a::b: not text"),
    (
        ["files", 0, "provenance", "program_files", "a::b"],
        {"run.py": 1},
        "files[0].provenance.program_files.a::b.run.py: not text",
    ),
    (["files", 0, "measurements", 0, "value"], "8192", "files[0].measurements[0].value: not a number"),
    (["files", 0, "measurements", 0, "unit"], None, "files[0].measurements[0]: missing 'unit'"),
    (["files", 0, "measurements", 0], [1, 2], "files[0].measurements[0]: not an object"),
    (["files", 0, "counts", "won"], 1, "files[0].counts: 'won' is not a verdict"),
    (["files", 0, "explanations", "nope"], {}, "files[0].explanations: no claim 'nope' in this file"),
]


@pytest.mark.parametrize(("where", "value", "message"), EDITS, ids=[e[2][:40] for e in EDITS])
def test_every_field_is_checked(whole, where, value, message):
    document = json.loads(export.to_json([whole]))
    parent = document
    for key in where[:-1]:
        parent = parent[key]
    if value is None:
        del parent[where[-1]]
    elif value == "@first":
        parent[where[-1]] = document["files"][0]["claims"][0]["id"]
    else:
        parent[where[-1]] = value
    with pytest.raises(InputError) as error:
        export.from_json(json.dumps(document), "shard2.json")
    assert str(error.value).startswith(f"shard2.json: not a result of check --json: {message}")
    assert "\n" not in str(error.value) and "\x1b" not in str(error.value)


def test_an_explanation_with_wrong_fields_is_refused(tmp_path: Path):
    explained = judged_explained()
    document = json.loads(export.to_json([explained]))
    explanation = document["files"][0]["explanations"]["tile_is_conflict_free"]
    explanation["lines"][0]["line"] = "14"
    with pytest.raises(InputError) as error:
        export.from_json(json.dumps(document), "shard.json")
    assert str(error.value) == (
        "shard.json: not a result of check --json:"
        " files[0].explanations.tile_is_conflict_free.lines[0].line: not a whole number"
    )
    explanation["lines"][0]["line"] = 14
    explanation["rules"][0]["severity"] = {"OPT": 1}
    with pytest.raises(InputError, match=r"tile_is_conflict_free.rules\[0\].severity: not text$"):
        export.from_json(json.dumps(document), "shard.json")
    del explanation["rules"][0]["severity"]
    with pytest.raises(InputError, match=r"tile_is_conflict_free.rules\[0\]: missing 'severity'$"):
        export.from_json(json.dumps(document), "shard.json")


# --- properties --------------------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(JSON_VALUES)
def test_arbitrary_json_is_refused_with_an_input_error(value):
    try:
        export.from_json(json.dumps(value), "x.json")
    except InputError as error:
        assert str(error).startswith("x.json: not a result of check --json: ")
        assert "\n" not in str(error)


@pytest.fixture(scope="module")
def real_document(whole) -> dict:
    return json.loads(export.to_json([whole]))


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value[:3]):
            yield from _paths(item, (*prefix, index))


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(st.data())
def test_a_real_result_with_one_field_replaced_reads_back_or_is_an_input_error(real_document, data):
    document = json.loads(json.dumps(real_document))
    where = data.draw(st.sampled_from([p for p in _paths(document) if p]))
    parent = document
    for key in where[:-1]:
        parent = parent[key]
    parent[where[-1]] = data.draw(JSON_VALUES)
    try:
        export.from_json(json.dumps(document), "x.json")
    except InputError as error:
        assert str(error).startswith("x.json: not a result of check --json: ")
