"""JSON, JUnit and Markdown outputs, from results of real recordings judged without a GPU."""

import json
from pathlib import Path

import pytest
from conftest import DATA, FIXTURES
from typer.testing import CliRunner

from ncuverify import export
from ncuverify.cli import app
from ncuverify.errors import ExitCode
from ncuverify.judge import ClaimResult, Verdict
from ncuverify.pipeline import CheckOptions, Environment, FileResult, check_file

# A development dependency (the CI parser); machines with only the runtime packages skip these tests.
junitparser = pytest.importorskip("junitparser", reason="junitparser (a dev dependency) is not installed")
Error, Failure, JUnitXml, Skipped = (
    junitparser.Error,
    junitparser.Failure,
    junitparser.JUnitXml,
    junitparser.Skipped,
)

NO_GPU = Environment(gpu=None, ncu=None, problem="no NVIDIA GPU: test")


@pytest.fixture(scope="module")
def sample() -> FileResult:
    return check_file(DATA / "sample.yaml", CheckOptions(from_profile=FIXTURES), NO_GPU)


@pytest.fixture(scope="module")
def mixed(sample) -> list[FileResult]:
    """The sample's results with one claim failed, one erred and one skipped, and a wrong file."""
    claims = list(sample.claims)
    claims[0] = ClaimResult(claims[0].claim, Verdict.FAILED, 5.0, "measured 5, expected == 4")
    claims[1] = ClaimResult(
        claims[1].claim, Verdict.ERROR, reason="case stride32 did not run: CUDA_ERROR_ILLEGAL_ADDRESS"
    )
    claims[2] = ClaimResult(claims[2].claim, Verdict.SKIPPED, reason="no GPU")
    broken = FileResult(Path("broken.yaml"), [], input_error="broken.yaml:3: kernels: missing")
    return [
        FileResult(
            sample.path, claims, provenance=sample.provenance, replayed=True, measurements=sample.measurements
        ),
        broken,
    ]


def test_json_carries_claims_measurements_and_provenance(sample):
    document = json.loads(export.to_json([sample]))
    assert document["exit_code"] == 0 and document["counts"]["passed"] == len(sample.claims)
    (record,) = document["files"]
    assert record["replayed"] is True
    assert record["provenance"]["gpu"] == "NVIDIA H200" and record["provenance"]["arch"] == "sm_90"
    claim = next(c for c in record["claims"] if c["id"] == "stride32_sector_ratio")
    assert claim["measured"] == 8 and claim["expected"] == "== 8" and claim["cite"]["holds"] == "no"
    controlled = next(c for c in record["claims"] if c["id"] == "contiguous_four_sectors")
    assert controlled["control"] == "stride32" and controlled["control_measured"] == 32
    rows = {(m["case"], m["metric"]): m["value"] for m in record["measurements"]}
    assert rows[("stride1", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum")] == 8192
    assert rows[("stride1", "static__registers_per_thread")] > 0


def test_junit_is_read_by_a_ci_parser(mixed, tmp_path):
    path = tmp_path / "results.xml"
    path.write_text(export.to_junit(mixed))
    suites = list(JUnitXml.fromfile(str(path)))
    sample_suite, broken_suite = suites
    assert (sample_suite.tests, sample_suite.failures, sample_suite.errors, sample_suite.skipped) == (
        len(mixed[0].claims),
        1,
        1,
        1,
    )
    cases = {case.name: case for case in sample_suite}
    (failure,) = cases["contiguous_four_sectors"].result
    assert isinstance(failure, Failure) and "measured 5, expected == 4" in failure.message
    assert isinstance(cases["stride32_sectors"].result[0], Error)
    assert isinstance(cases["one_request_per_warp"].result[0], Skipped)
    assert cases["stride32_sector_ratio"].is_passed
    assert broken_suite.errors == 1 and "kernels: missing" in next(iter(broken_suite)).result[0].text


def test_markdown_summarises_what_did_not_hold(mixed):
    text = export.to_markdown(mixed)
    assert text.startswith("## ncuverify: an expectation file is wrong")
    assert "| `tests/data/sample.yaml` | 5 | 1 | 1 | 1 | 0 |" in str(text).replace(
        str(DATA.parent.parent) + "/", ""
    )
    assert (
        "| `sample.yaml` | `contiguous_four_sectors` | 5 | == 4 | failed | measured 5, expected == 4 |"
        in text
    )
    assert "replayed from a recording made on NVIDIA H200" in text
    assert "broken.yaml:3: kernels: missing" in text


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
    return check_file(DATA / "explain.yaml", CheckOptions(from_profile=FIXTURES), NO_GPU)


def test_explanations_travel_in_every_output(explained, tmp_path: Path):
    assert set(explained.explanations) == {"gather_is_coalesced", "tile_is_conflict_free"}
    document = json.loads(export.to_json([explained]))
    lines = document["files"][0]["explanations"]["tile_is_conflict_free"]["lines"]
    assert lines[0]["line"] == 14 and lines[0]["excess"] == 253952
    # A shard's JSON merges back with its explanations.
    assert export.from_json(export.to_json([explained]))[0].explanations == explained.explanations
    markdown = export.to_markdown([explained])
    assert "### What ncu says about them" in markdown and "explain.cu:6  out[t] = in[t * 32];" in markdown
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
