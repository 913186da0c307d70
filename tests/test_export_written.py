"""A shard's copies of its claims against the expectation files: an edited expectation is refused where
the files are here as the run had them, and said to be unchecked where they are not."""

import json
from pathlib import Path

import pytest
from conftest import COMPILE_CACHE, DATA, FIXTURES, NO_GPU

from ncuverify import export
from ncuverify.errors import InputError
from ncuverify.export.written import NOT_HERE, not_as_written
from ncuverify.options import CheckOptions
from ncuverify.pipeline import check_file
from ncuverify.results import ClaimResult, FileResult, Verdict
from ncuverify.spec import load

SAMPLE = DATA / "sample.yaml"


@pytest.fixture(scope="module")
def whole_run() -> str:
    result = check_file(SAMPLE, CheckOptions(cache=COMPILE_CACHE, from_profile=FIXTURES), NO_GPU)
    return export.to_json([result], shard=export.ShardOf(1, 1, export.suite_digest([SAMPLE])))


def merged(tmp_path: Path, document: dict):
    path = tmp_path / "shard.json"
    path.write_text(json.dumps(document))
    return export.merge([export.read_shard(path)])


def test_an_expectation_edited_in_the_shard_is_refused(whole_run, tmp_path):
    document = json.loads(whole_run)
    claim = next(c for c in document["files"][0]["claims"] if c["id"] == "stride32_slower")
    claim["expect"] = {"at_least": 0.5}  # judged again on the shard's figures, the edited claim holds
    with pytest.raises(InputError) as error:
        merged(tmp_path, document)
    assert str(error.value) == (
        f"{tmp_path}/shard.json: {SAMPLE}: claim stride32_slower is not the claim of that id in the file"
        " (its metric, expectation, control, xfail or architectures differ): the shard was edited, or"
        " run on other expectation files"
    )
    _, warnings = merged(tmp_path, json.loads(whole_run))  # as written: merged, nothing said
    assert warnings == []


def test_where_the_files_are_not_here_the_claims_are_said_to_be_unchecked(whole_run, tmp_path):
    document = json.loads(whole_run)
    document["files"][0]["path"] = "elsewhere/sample.yaml"  # merged in another folder than check ran
    claim = next(c for c in document["files"][0]["claims"] if c["id"] == "stride32_slower")
    claim["expect"] = {"at_least": 0.5}
    _, warnings = merged(tmp_path, document)
    assert warnings == [NOT_HERE]


def test_a_claim_judged_once_per_launch_is_its_file_s_claim_on_that_launch(tmp_path):
    path = tmp_path / "programs.yaml"
    (tmp_path / ".ncuverify-root").touch()
    path.write_text(
        """
cases:
  add:
    program: {command: [python3, add.py], timeout_s: 20}
    kernel: add_kernel
    launch_count: 2
    combine: each
claims:
  - id: add_registers
    case: add
    metric: launch__registers_per_thread
    expect: {at_most: 100}
    cite: {document: d.txt, section: "1", figure: registers}
"""
    )
    (claim,) = load(path).content.claims
    second = claim.model_copy(update={"id": "add_registers#2", "case": "add#2"})
    suite = export.suite_digest([path])
    as_judged = FileResult(path, [ClaimResult(second, Verdict.PASSED, 28.0)])
    assert not_as_written("shard.json", [as_judged], suite) is None
    for edited in (
        second.model_copy(update={"case": "add#1"}),
        second.model_copy(update={"id": "add_registers#x"}),
    ):
        with pytest.raises(InputError, match=f"claim {edited.id} is not the claim of that id"):
            not_as_written("shard.json", [FileResult(path, [ClaimResult(edited, Verdict.PASSED)])], suite)
