"""What every output (JSON, JUnit, Markdown) carries alike, from results of real recordings judged
without a GPU: the file's identity, explanations, ncuverify's own failures, and check writing all three."""

import json
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest
from conftest import DATA, FIXTURES
from exported_results import judged_explained, judged_sample
from typer.testing import CliRunner

from ncuverify import export
from ncuverify.cli import app
from ncuverify.errors import ExitCode
from ncuverify.results import FileResult

# A development dependency (the CI parser); machines with only the runtime packages skip these tests.
junitparser = pytest.importorskip("junitparser", reason="junitparser (a dev dependency) is not installed")
Failure, JUnitXml = junitparser.Failure, junitparser.JUnitXml


@pytest.fixture(scope="module")
def sample() -> FileResult:
    return judged_sample()


def test_a_file_is_known_by_its_path_in_the_project_in_json_and_junit(sample):
    (record,) = json.loads(export.to_json([sample]))["files"]
    assert record["key"] == "tests/data/sample.yaml" and record["path"] == str(sample.path)
    assert [result.key for result in export.from_json(export.to_json([sample]))] == ["tests/data/sample.yaml"]
    assert 'classname="tests/data/sample.yaml"' in export.to_junit([sample])


def test_check_writes_all_three(tmp_path):
    result = CliRunner().invoke(
        app,
        [
            "check",
            str(DATA / "sample.yaml"),
            "--from-profile",
            str(FIXTURES),
            "--json",
            str(tmp_path / "r.json"),
            "--junit-xml",
            str(tmp_path / "r.xml"),
            "--markdown",
            str(tmp_path / "r.md"),
        ],
    )
    assert result.exit_code == ExitCode.OK, result.stdout
    assert json.loads((tmp_path / "r.json").read_text())["exit_code"] == 0
    assert JUnitXml.fromfile(str(tmp_path / "r.xml"))
    assert (tmp_path / "r.md").read_text().startswith("## ncuverify: every claim holds")


@pytest.fixture(scope="module")
def explained() -> FileResult:
    return judged_explained()


def test_explanations_travel_in_every_output(explained, tmp_path: Path):
    assert set(explained.explanations) == {"gather_is_coalesced", "tile_is_conflict_free"}
    document = json.loads(export.to_json([explained]))
    lines = document["files"][0]["explanations"]["tile_is_conflict_free"]["lines"]
    assert lines[0]["line"] == 14 and lines[0]["excess"] == 253952
    # A shard's JSON merges back with its explanations.
    assert export.from_json(export.to_json([explained]))[0].explanations == explained.explanations
    markdown = export.to_markdown([explained])
    assert "### What ncu says about them" in markdown
    assert "explain.cu:6  out\\[t\\] = in\\[t \\* 32\\];" in markdown
    junit = tmp_path / "junit.xml"
    junit.write_text(export.to_junit([explained]))
    failures = {
        case.name: result.text
        for suite in JUnitXml.fromfile(str(junit))
        for case in suite
        for result in case.result
        if isinstance(result, Failure)
    }
    assert "explain.cu:14  out[t] = tile[threadIdx.x][threadIdx.y];" in failures["tile_is_conflict_free"]


def test_results_that_ncuverify_failed_on_are_in_every_output(tmp_path: Path):
    failed = FileResult(Path("f.yaml"), [], internal_error="ncuverify failed on f.yaml: see /tmp/t.txt")
    document = json.loads(export.to_json([failed]))
    assert document["exit_code"] == ExitCode.INTERNAL_ERROR
    (back,) = export.from_json(json.dumps(document))
    assert back.internal_error == "ncuverify failed on f.yaml: see /tmp/t.txt"
    markdown = export.to_markdown([failed])
    assert markdown.startswith("## ncuverify: ncuverify failed on a file")
    assert "| `f.yaml` | internal error |  |  |  |  |" in markdown
    assert "`f.yaml`: internal error\n\n- ncuverify failed on f.yaml: see /tmp/t.txt" in markdown
    (case,) = ElementTree.fromstring(export.to_junit([failed]))[0]
    assert case.get("name") == "internal" and case[0].tag == "error"


def test_a_claim_of_ones_own_is_written_and_read_back_with_its_why(sample):
    from dataclasses import replace

    from ncuverify.results import Verdict

    own = sample.claims[0].claim.model_copy(update={"cite": None, "why": "two blocks per SM stay resident"})
    failed = replace(sample.claims[0], claim=own, verdict=Verdict.FAILED, reason="measured 5, expected == 4")
    result = replace(sample, claims=[failed])
    (record,) = json.loads(export.to_json([result]))["files"]
    assert (record["claims"][0]["cite"], record["claims"][0]["why"]) == (
        None,
        "two blocks per SM stay resident",
    )
    (back,) = export.from_json(export.to_json([result]))
    assert back.claims[0].claim == own
    # a failure says why the claim is made, where a cited one names its document
    assert "why: two blocks per SM stay resident" in export.to_junit([result])
    assert own.source_line() == "why: two blocks per SM stay resident"
    assert own.model_copy(update={"why": None}).source_line() == ""
