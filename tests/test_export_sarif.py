"""SARIF 2.1.0: valid against the published schema, one result per failing claim, error, regression
and warning at its line of a file of the repository, and the tool with its rules."""

import json
from dataclasses import replace
from functools import cache
from typing import Any

import jsonschema
import pytest
from conftest import DATA, FIXTURES
from exported_results import ATTACKS, hostile, judged_explained, judged_sample
from test_export_findings import failed

from ncuverify import __version__, export
from ncuverify.baseline.snapshot import Change
from ncuverify.errors import ExitCode


@cache
def validator() -> jsonschema.protocols.Validator:
    schema = json.loads((DATA / "sarif-schema-2.1.0.json").read_text())
    kind = jsonschema.validators.validator_for(schema)
    kind.check_schema(schema)
    return kind(schema)


def valid_sarif(text: str) -> dict[str, Any]:
    document = json.loads(text)
    errors = [error.message for error in validator().iter_errors(document)]
    assert errors == []
    return document


def test_each_finding_is_a_result_at_its_line_with_its_rule():
    sample = judged_sample()
    regressed = Change(sample.key, "stride32", "gpu__time_duration.sum", 2.0, 4.0, worse=True)
    run = valid_sarif(export.to_sarif([failed(sample)], [regressed]))["runs"][0]
    driver = run["tool"]["driver"]
    assert (driver["name"], driver["version"]) == ("ncuverify", __version__)
    assert driver["informationUri"].startswith("https://")
    rules = [rule["id"] for rule in driver["rules"]]
    results = run["results"]
    assert [(r["ruleId"], r["level"]) for r in results] == [
        ("claim-failed", "error"),
        ("claim-error", "error"),
        ("set-aside", "warning"),
        ("warning", "warning"),
        ("baseline-regression", "error"),
    ]
    assert all(rules[r["ruleIndex"]] == r["ruleId"] for r in results)
    assert sample.spec is not None
    claim = sample.claims[0].claim
    location = results[0]["locations"][0]["physicalLocation"]
    assert location == {
        "artifactLocation": {"uri": "tests/data/sample.yaml", "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": sample.spec.lines.claim(claim.id)},
    }
    assert results[0]["message"]["text"].startswith(f"claim failed: {claim.id}: {claim.metric}: measured 5")
    regression = results[4]["locations"][0]["physicalLocation"]["region"]["startLine"]
    assert regression == sample.spec.lines.case("stride32")


def test_the_kernel_source_line_ncu_names_is_a_related_location():
    results = valid_sarif(export.to_sarif([judged_explained()]))["runs"][0]["results"]
    related = [r["relatedLocations"][0]["physicalLocation"] for r in results]
    assert [(p["artifactLocation"]["uri"], p["region"]["startLine"]) for p in related] == [
        ("tests/data/explain.cu", 6),
        ("tests/data/explain.cu", 14),
    ]


def test_a_run_where_every_claim_holds_has_no_result():
    assert valid_sarif(export.to_sarif([judged_sample()]))["runs"][0]["results"] == []


@pytest.mark.parametrize("text", ATTACKS)
def test_hostile_text_stays_valid_sarif_and_a_uri(text):
    results = valid_sarif(export.to_sarif([hostile(text)]))["runs"][0]["results"]
    assert len(results) == 6  # input and internal error, failed and erred claims, not run, warning
    uri = results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert all(c.isascii() and c.isprintable() and c not in ' <>"`{}|\\^' for c in uri), uri


def test_check_writes_sarif(tmp_path):
    from cli_invoke import invoke

    out = tmp_path / "r.sarif"
    result = invoke("--from-profile", str(FIXTURES), "--sarif", str(out), str(DATA / "explain.yaml"))
    assert result.exit_code == ExitCode.CLAIM_FAILED
    results = valid_sarif(out.read_text())["runs"][0]["results"]
    assert [r["ruleId"] for r in results] == ["claim-failed", "claim-failed"]
    refused = invoke("--sarif", str(DATA / "explain.yaml"), str(DATA / "explain.yaml"))
    assert refused.exit_code == ExitCode.BAD_INPUT and "refusing to overwrite it" in refused.output


def test_a_broken_file_is_an_error_at_the_line_its_error_names(tmp_path):
    path = tmp_path / "x.yaml"
    broken = replace(judged_sample(), path=path, key="", claims=[], input_error=f"{path}:4: bad")
    results = valid_sarif(export.to_sarif([broken]))["runs"][0]["results"]
    assert [(r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"]) for r in results] == [
        ("input-error", 4)
    ]
