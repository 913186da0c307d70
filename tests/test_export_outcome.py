"""One outcome, every output: for a run that regressed against its baseline, one whose claims
--static-only set aside, one with a failing claim and one that ncuverify failed on, the exit code, the
terminal, JSON, JUnit, Markdown and HTML all say the same: each says fail or pass as the exit code
does, JUnit fails one test case per failing item, and JSON's baseline section lists the regressions.
Every run is judged from the recordings under tests/fixtures, without a GPU."""

import json
import os
import xml.etree.ElementTree as ElementTree
from dataclasses import replace
from pathlib import Path

import pytest
from cli_invoke import invoke_command
from conftest import COMPILE_CACHE, DATA, FIXTURES, NO_GPU
from exported_results import judged_sample
from rich.console import Console

from ncuverify import export, report
from ncuverify.baseline import ratchet
from ncuverify.baseline import snapshot as baselines
from ncuverify.errors import ExitCode
from ncuverify.options import CheckOptions
from ncuverify.pipeline import check_file
from ncuverify.results import ClaimResult, FileResult, Verdict

REGS = "static__registers_per_thread"


@pytest.fixture(scope="module")
def sample() -> FileResult:
    return judged_sample()


def regressed(results: list[FileResult]) -> export.RunOutcome:
    """The run compared with a baseline in which stride1 used 8 registers fewer and scale_2d 8 more:
    one regression, one improvement."""
    values = baselines.snapshot(results).as_values()
    cases = values["tests/data/sample.yaml"]
    cases["stride1"][REGS] -= 8
    cases["scale_2d"][REGS] += 8
    return export.RunOutcome(results, ratchet.compare(baselines.baseline_of(values), results, {}))


def static_only(*names: str) -> list[FileResult]:
    options = CheckOptions(cache=COMPILE_CACHE, static_only=True)
    return [check_file(DATA / name, options, NO_GPU) for name in names]


def failing_items(outcome: export.RunOutcome) -> int:
    """What fails the run, counted from the outcome's parts: claims that failed, could not be evaluated
    or passed against their xfail, files that are wrong or that ncuverify failed on, regressions, and a
    comparison that failed."""
    claims = sum(
        1
        for r in outcome.results
        for c in r.claims
        if c.verdict in (Verdict.FAILED, Verdict.ERROR, Verdict.XPASSED)
    )
    files = sum((r.input_error is not None) + (r.internal_error is not None) for r in outcome.results)
    return claims + files + len(outcome.regressed) + (outcome.baseline_error is not None)


def assert_outputs_agree(outcome: export.RunOutcome, code: ExitCode) -> None:
    assert outcome.code is code
    passes = code in (ExitCode.OK, ExitCode.NOT_MEASURABLE)
    said = export.headline(outcome)
    assert ("every claim" in said and "holds" in said) is (code is ExitCode.OK)

    document = json.loads(export.to_json(outcome))
    assert document["exit_code"] == code

    suites = ElementTree.fromstring(export.to_junit(outcome))
    failed = sum(int(s.get("failures", "0")) + int(s.get("errors", "0")) for s in suites)
    assert failed == len(suites.findall(".//failure")) + len(suites.findall(".//error"))
    assert failed == failing_items(outcome) and (failed == 0) is passes

    markdown = export.to_markdown(outcome)
    assert markdown.splitlines()[0] == f"## ncuverify: {said}"

    page = export.to_html(outcome)
    verdict = "passed" if code is ExitCode.OK else "problem"
    assert f'<p class="{verdict}" id="verdict">ncuverify: {said}</p>' in page

    shown = Console(record=True, width=200)
    report.print_run(shown, outcome.results, 0.0, verbose=False)
    report.print_against_baseline(shown, outcome)
    assert shown.export_text().rstrip().splitlines()[-1] == f"ncuverify: {said}"

    if outcome.against_baseline:
        section = document["baseline"]
        assert section["version"] == 1
        listed = [(c["file"], c["case"], c["metric"]) for c in section["regressed"]]
        assert listed == [(c.file, c.case, c.metric) for c in outcome.regressed]
        assert (f"{len(outcome.regressed)} regressed") in markdown and "Against the baseline" in page
    else:
        assert "baseline" not in document


def test_a_regression_alone_fails_every_output(sample):
    outcome = regressed([sample])
    assert sorted((c.case, c.worse) for c in outcome.changes) == [("scale_2d", False), ("stride1", True)]
    assert_outputs_agree(outcome, ExitCode.CLAIM_FAILED)
    assert export.headline(outcome) == "1 measure regressed against the baseline"
    document = json.loads(export.to_json(outcome))
    [moved] = document["baseline"]["regressed"]
    assert moved == {
        "file": "tests/data/sample.yaml",
        "path": str(sample.path),
        "line": sample.spec.lines.case("stride1"),
        "case": "stride1",
        "metric": REGS,
        "before": moved["after"] - 8,
        "after": moved["after"],
        "allowed": None,
    }
    assert [c["case"] for c in document["baseline"]["improved"]] == ["scale_2d"]
    [failure] = ElementTree.fromstring(export.to_junit(outcome)).findall(".//testcase[failure]")
    assert failure.get("file") == str(sample.path) and failure.get("line") == str(moved["line"])
    assert failure.get("name") == f"stride1 {REGS}"


def test_a_regression_that_the_allow_list_accepts_passes_every_output(sample):
    outcome = regressed([sample])
    assert outcome.compared is not None
    allowed = [replace(c, allowed="more unrolling", allowed_by=0) if c.worse else c for c in outcome.changes]
    outcome = replace(outcome, compared=replace(outcome.compared, changes=allowed))
    assert_outputs_agree(outcome, ExitCode.OK)
    assert json.loads(export.to_json(outcome))["baseline"]["allowed"][0]["allowed"] == "more unrolling"


def test_a_regression_beside_a_failing_claim_is_counted_with_it(sample):
    claims = [ClaimResult(sample.claims[0].claim, Verdict.FAILED, 5.0, "measured 5"), *sample.claims[1:]]
    outcome = regressed([replace(sample, claims=claims)])
    assert_outputs_agree(outcome, ExitCode.CLAIM_FAILED)
    assert export.headline(outcome) == "claims failed; 1 measure regressed against the baseline"


def test_claims_set_aside_by_static_only_are_no_pass_where_nothing_was_judged():
    outcome = export.RunOutcome(static_only("sample.yaml"))
    assert_outputs_agree(outcome, ExitCode.NOT_MEASURABLE)
    assert export.headline(outcome).startswith("nothing could be judged here: 8 claims need a GPU")


def test_claims_set_aside_beside_claims_that_hold_compare_with_a_static_baseline():
    results = static_only("sample.yaml", "static.yaml")
    outcome = export.RunOutcome(results, ratchet.compare(baselines.snapshot(results), results, {}))
    assert_outputs_agree(outcome, ExitCode.OK)
    assert export.headline(outcome).startswith("every claim judged holds; 9 set aside")


def test_a_failing_claim_fails_every_output(sample):
    claims = [ClaimResult(sample.claims[0].claim, Verdict.FAILED, 5.0, "measured 5"), *sample.claims[1:]]
    assert_outputs_agree(export.RunOutcome([replace(sample, claims=claims)]), ExitCode.CLAIM_FAILED)


def test_an_internal_error_on_a_file_or_in_the_comparison_fails_every_output(sample):
    broken = FileResult(Path("broken.yaml"), [], internal_error="KeyError: 'x' (please report it)")
    assert_outputs_agree(export.RunOutcome([sample, broken]), ExitCode.INTERNAL_ERROR)
    failed = export.RunOutcome([sample], baseline_error="KeyError: 'y' (please report it)")
    assert_outputs_agree(failed, ExitCode.INTERNAL_ERROR)
    assert export.headline(failed) == "ncuverify failed comparing the run with the baseline"
    assert json.loads(export.to_json(failed))["baseline"]["error"] == "KeyError: 'y' (please report it)"


def test_a_change_s_line_is_where_its_file_writes_its_case(tmp_path):
    # results read back from JSON have no spec: the file is loaded again, for its lines
    regression = FileResult(DATA / "regression.yaml", [])
    outcome = export.RunOutcome([regression])
    assert outcome.case_line(regression.key, "read") == 15
    assert outcome.case_line(regression.key, "reader[read_stride<1>]") == 6  # the set's kernel entry
    assert outcome.case_line(regression.key, "nothing") is None and outcome.case_line("other", "read") is None
    # a path read from a shard's JSON may name a pipe or a device: neither is read (it would block)
    os.mkfifo(tmp_path / "pipe.yaml")
    for path in (tmp_path / "gone.yaml", tmp_path / "pipe.yaml", Path("/dev/zero"), Path("a\0.yaml")):
        result = FileResult(path, [], key="k")
        assert export.RunOutcome([result]).case_line("k", "a") is None


# --- the command line: what a pull request's job writes -------------------------------------------------


def outputs(folder: Path) -> list[str]:
    return [
        "--json",
        str(folder / "r.json"),
        "--junit-xml",
        str(folder / "r.xml"),
        "--markdown",
        str(folder / "r.md"),
        "--html",
        str(folder / "r.html"),
    ]


def test_check_with_a_regressed_baseline_writes_the_failure_everywhere(tmp_path):
    saved = tmp_path / "h200.json"
    sample, replayed = str(DATA / "sample.yaml"), ["--from-profile", str(FIXTURES)]
    assert invoke_command("baseline", "save", str(saved), sample, *replayed).exit_code == ExitCode.OK
    data = json.loads(saved.read_text())
    data["files"]["tests/data/sample.yaml"]["stride1"][REGS] -= 8
    saved.write_text(json.dumps(data))
    done = invoke_command("check", sample, *replayed, "--baseline", str(saved), *outputs(tmp_path))
    assert done.exit_code == ExitCode.CLAIM_FAILED, done.output
    said = "1 measure regressed against the baseline"
    assert done.output.rstrip().splitlines()[-1] == f"ncuverify: {said}"
    assert (tmp_path / "r.md").read_text().startswith(f"## ncuverify: {said}\n")
    document = json.loads((tmp_path / "r.json").read_text())
    assert document["exit_code"] == 1
    assert [(c["case"], c["metric"]) for c in document["baseline"]["regressed"]] == [("stride1", REGS)]
    suites = ElementTree.parse(tmp_path / "r.xml").getroot()
    assert [case.get("name") for case in suites.findall(".//testcase[failure]")] == [f"stride1 {REGS}"]
    assert f'id="verdict">ncuverify: {said}</p>' in (tmp_path / "r.html").read_text()
    # merged, the run's JSON is the same run: the regression fails it still, in every output
    merged = tmp_path / "merged"
    merged.mkdir()
    done = invoke_command("merge", str(tmp_path / "r.json"), *outputs(merged))
    assert done.exit_code == ExitCode.CLAIM_FAILED, done.output
    assert done.output.rstrip().splitlines()[-1] == f"ncuverify: {said}"
    assert (merged / "r.md").read_text().startswith(f"## ncuverify: {said}\n")
    assert json.loads((merged / "r.json").read_text())["baseline"] == document["baseline"]
    suites = ElementTree.parse(merged / "r.xml").getroot()
    assert [case.get("name") for case in suites.findall(".//testcase[failure]")] == [f"stride1 {REGS}"]


def test_a_comparison_that_fails_is_an_internal_error_in_every_output(tmp_path, monkeypatch, no_gpu):
    saved = tmp_path / "h200.json"
    sample = str(DATA / "static.yaml")
    assert invoke_command("baseline", "save", str(saved), sample, "--static-only").exit_code == 0

    def broken(*args: object) -> ratchet.Comparison:
        raise KeyError("bug")

    monkeypatch.setattr(ratchet, "compare", broken)
    done = invoke_command("check", sample, "--static-only", "--baseline", str(saved), *outputs(tmp_path))
    assert done.exit_code == ExitCode.INTERNAL_ERROR, done.output
    assert "KeyError: 'bug'" in json.loads((tmp_path / "r.json").read_text())["baseline"]["error"]
    said = "ncuverify failed comparing the run with the baseline"
    assert (tmp_path / "r.md").read_text().startswith(f"## ncuverify: {said}\n")
    suites = ElementTree.parse(tmp_path / "r.xml").getroot()
    assert [case.get("name") for case in suites.findall(".//testcase[error]")] == ["compare"]
