"""What a reviewer must look at, each at a line of a file of the repository: a failing claim at the
claim written, the kernel source line ncu names, an input error at the line it names, a regression at
its case, and the warnings at the file."""

from dataclasses import replace
from pathlib import Path

import pytest
from exported_results import judged_explained, judged_sample

from ncuverify.baseline.snapshot import Change
from ncuverify.export.findings import Level, Place, findings
from ncuverify.results import ClaimResult, FileResult, Verdict


@pytest.fixture(scope="module")
def sample() -> FileResult:
    return judged_sample()


def failed(sample: FileResult) -> FileResult:
    """The sample with its first claim failed, its second erred and its third skipped."""
    claims = list(sample.claims)
    claims[0] = ClaimResult(claims[0].claim, Verdict.FAILED, 5.0, "measured 5, expected == 4")
    claims[1] = ClaimResult(claims[1].claim, Verdict.ERROR, reason="case stride32 did not run")
    claims[2] = ClaimResult(claims[2].claim, Verdict.SKIPPED, reason="no GPU")
    return replace(sample, claims=claims, warnings=["the recording is old"], set_aside=2)


def test_a_failing_claim_and_an_error_are_errors_at_their_claims_and_the_rest_warnings(sample):
    found = findings([failed(sample)])
    assert [(f.rule, f.level) for f in found] == [
        ("claim-failed", Level.ERROR),
        ("claim-error", Level.ERROR),
        ("set-aside", Level.WARNING),
        ("warning", Level.WARNING),
    ]
    spec = sample.spec
    assert spec is not None
    claims = sample.claims
    assert found[0].place == Place("tests/data/sample.yaml", spec.lines.claim(claims[0].claim.id))
    assert found[1].place == Place("tests/data/sample.yaml", spec.lines.claim(claims[1].claim.id))
    assert found[0].place.line > 1 and found[0].place.line != found[1].place.line
    assert found[0].title == f"claim failed: {claims[0].claim.id}"
    assert found[0].message.startswith(f"{claims[0].claim.metric}: measured 5, expected == 4\nsource: ")
    assert "2 set aside" in found[2].message and found[3].message == "the recording is old"
    assert {f.place.line for f in found[2:]} == {1}


def test_a_failing_claim_names_the_kernel_source_line_ncu_names():
    explained = judged_explained()
    # as recorded in another checkout: the kernel file of the expectation file whose path it ends with
    elsewhere = {
        claim_id: replace(
            e,
            lines=tuple(
                replace(line, file=f"/elsewhere/checkout/tests/data/{Path(line.file).name}")
                for line in e.lines
            ),
        )
        for claim_id, e in explained.explanations.items()
    }
    for shown in (explained, replace(explained, explanations=elsewhere)):
        found = findings([shown])
        assert [f.rule for f in found] == ["claim-failed", "claim-failed"]
        assert found[0].source == Place("tests/data/explain.cu", 6)
        assert found[1].source == Place("tests/data/explain.cu", 14)
    assert found[0].source == Place("tests/data/explain.cu", 6)
    assert found[1].source == Place("tests/data/explain.cu", 14)
    assert "at tests/data/explain.cu:6" in found[0].message


def test_a_source_line_outside_the_repository_is_no_place(sample):
    explained = judged_explained()
    elsewhere = {
        claim_id: replace(e, lines=tuple(replace(line, file="/usr/include/cuda/x.h") for line in e.lines))
        for claim_id, e in explained.explanations.items()
    }
    assert [f.source for f in findings([replace(explained, explanations=elsewhere)])] == [None, None]


def test_an_input_error_is_at_the_line_it_names_and_a_regression_at_its_case(sample):
    path = Path("broken.yaml")
    broken = FileResult(path, [], input_error=f"{path}:7: kernels: missing\n{path}:9: other")
    unplaced = FileResult(path, [], input_error="not valid YAML")
    regressed = Change(sample.key, "stride32", "gpu__time_duration.sum", 2.0, 4.0, worse=True)
    improved = replace(regressed, worse=False)
    allowed = replace(regressed, allowed="known")
    found = findings([broken, unplaced, sample], [regressed, improved, allowed])
    assert [(f.rule, f.place.line) for f in found[:2]] == [("input-error", 7), ("input-error", 1)]
    assert found[0].place.file.endswith("broken.yaml")
    assert sample.spec is not None
    assert [(f.rule, f.place) for f in found[2:]] == [
        ("baseline-regression", Place("tests/data/sample.yaml", sample.spec.lines.case("stride32")))
    ]
    assert found[2].message == "stride32 gpu__time_duration.sum: 2 in the baseline, 4 now (x2)"


def test_a_project_inside_a_repository_is_placed_from_the_repositorys_root(tmp_path):
    project = tmp_path / "kernels"
    project.mkdir()
    (project / "pyproject.toml").write_text("")
    path = project / "x.yaml"
    broken = FileResult(path, [], input_error=f"{path}:2: bad")
    assert findings([broken])[0].place == Place("x.yaml", 2), "no repository: from the project's root"
    (tmp_path / ".git").mkdir()
    assert findings([broken])[0].place == Place("kernels/x.yaml", 2)


def test_results_read_back_from_json_are_placed_from_the_file_here(sample):
    from ncuverify import export

    read_back = export.from_json(export.to_json([failed(sample)]))
    assert read_back[0].spec is None
    assert sample.spec is not None
    assert findings(read_back)[0].place == Place(
        "tests/data/sample.yaml", sample.spec.lines.claim(sample.claims[0].claim.id)
    )


def test_a_path_no_file_can_have_is_placed_by_its_name():
    read_back = FileResult(Path("a\x00b.yaml"), [], warnings=["w"])
    assert [f.place for f in findings([read_back])] == [Place("a\x00b.yaml", 1)]
