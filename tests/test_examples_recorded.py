"""Every example under examples/ replays its H200 recording without a GPU: recordings/h200-examples for
the examples of this project (programs' cases too), examples/repository/recording-h200 for the small
repository (a project of its own). Each judges as it did on the H200: every claim holds but the one
strided.yaml shows failing, and programs.yaml, whose vecadd case runs a binary `make` builds, is
refused where that binary is not the one recorded (its digest ties the figures to the build)."""

from __future__ import annotations

import json

import pytest
from cli_invoke import invoke_command
from conftest import ROOT

from ncuverify.errors import ExitCode

RECORDING = ROOT / "recordings" / "h200-examples"
EXAMPLES = ROOT / "examples"
REPLAYED = [
    "sweep/copy.yaml",
    "sequence/reduce.yaml",
    "whole-program/transpose.yaml",
    "programs/ranges.yaml",
]


def _verdicts(path) -> dict[str, str]:
    document = json.loads(path.read_text())
    return {claim["id"]: claim["verdict"] for file in document["files"] for claim in file["claims"]}


@pytest.mark.parametrize("example", REPLAYED)
def test_an_example_replays_with_every_claim_holding(example, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    result = invoke_command(
        "check", "--from-profile", str(RECORDING), f"examples/{example}", "--json", str(tmp_path / "r.json")
    )
    assert result.exit_code == ExitCode.OK, result.output
    verdicts = _verdicts(tmp_path / "r.json")
    assert verdicts and set(verdicts.values()) == {"passed"}


def test_the_strided_example_fails_its_one_claim_as_on_the_h200(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    result = invoke_command(
        "check",
        "--from-profile",
        str(RECORDING),
        "examples/programs/strided.yaml",
        "--json",
        str(tmp_path / "r.json"),
    )
    assert result.exit_code == ExitCode.CLAIM_FAILED, result.output
    assert _verdicts(tmp_path / "r.json") == {"strided_copy_coalesced": "failed"}


def test_the_programs_example_is_refused_without_the_recorded_vecadd_binary(monkeypatch):
    monkeypatch.chdir(ROOT)
    if (EXAMPLES / "programs" / "vecadd").exists():
        pytest.skip("examples/programs/vecadd is built here: whether it is the recorded one varies")
    result = invoke_command("check", "--from-profile", str(RECORDING), "examples/programs/programs.yaml")
    assert result.exit_code == ExitCode.BAD_INPUT, result.output
    assert "examples/programs/vecadd" in result.output


def test_the_repository_example_replays_with_every_claim_holding(tmp_path, monkeypatch):
    """Its libops.yaml names the library the repository's CMake builds: without it here, that file
    cannot be judged, so the replay takes the files that need no build."""
    repository = EXAMPLES / "repository"
    monkeypatch.chdir(repository)
    files = ["expectations/saxpy.yaml", "expectations/block_sum.yaml", "expectations/add.yaml"]
    result = invoke_command(
        "check", "--from-profile", "recording-h200", *files, "--json", str(tmp_path / "r.json")
    )
    assert result.exit_code == ExitCode.OK, result.output
    verdicts = _verdicts(tmp_path / "r.json")
    assert len(verdicts) == 12 and set(verdicts.values()) == {"passed"}
