"""The second pass over failed memory claims, and its explanations kept in a recording."""

import json
import shutil
from pathlib import Path

import pytest
from conftest import COMPILE_CACHE, DATA, FIXTURES, NO_GPU, fake_profiled

from ncuverify.pipeline import CheckOptions, check_files
from ncuverify.results import Verdict


def test_failed_memory_claims_get_a_second_pass_whose_explanations_are_kept(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("FAKE_NCU_NOTES", str(tmp_path / "notes.jsonl"))
    [live] = fake_profiled([DATA / "explain.yaml"], tmp_path / "saved", explain=True)
    # The fake's figures fail all three claims; each names ncu's rules and lines for its case's launch.
    assert {c.claim.id for c in live.claims if c.verdict is Verdict.FAILED} == set(live.explanations)
    tile = live.explanations["tile_is_conflict_free"]
    assert tile.topic == "shared" and tile.lines[0].line == 90  # what the captured pages say
    assert live.explanations["gather_is_coalesced"].topic == "global"
    processes = [json.loads(line) for line in (tmp_path / "notes.jsonl").read_text().splitlines()]
    assert processes[-1]["cases"] == ["tests/data/explain.yaml::gather", "tests/data/explain.yaml::tile"], (
        "one pass over the failed cases"
    )
    [replayed] = check_files(
        [DATA / "explain.yaml"], CheckOptions(cache=COMPILE_CACHE, from_profile=tmp_path / "saved"), NO_GPU
    )
    assert replayed.explanations == live.explanations


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        (
            "explain.json",
            "[",
            "explain.json: not the explained cases: not JSON (Expecting value: line 1 column 2 (char 1))",
        ),
        ("explain.json", "[]", "explain.json: not the explained cases: not an object"),
        (
            "explain.json",
            '{"explain::tile": ["shared"]}',
            "explain.json: not the explained cases: 'explain::tile': not a topic (global, shared)",
        ),
    ],
)
def test_damaged_recorded_explanations_are_input_errors(tmp_path: Path, name: str, text: str, message: str):
    import shutil

    from ncuverify.errors import InputError
    from ncuverify.profile.explain_pass import recorded_explanations

    shutil.copytree(FIXTURES / "explain", tmp_path / "rec")
    (tmp_path / "rec" / name).write_text(text)
    with pytest.raises(InputError) as refused:
        recorded_explanations(tmp_path / "rec")
    assert str(refused.value) == f"{tmp_path / 'rec'}/{message}"


def test_recorded_explanations_are_read_only_from_the_recording(tmp_path: Path):
    import shutil

    from ncuverify.errors import InputError
    from ncuverify.profile.explain_pass import recorded_explanations

    shutil.copytree(FIXTURES / "explain", tmp_path / "rec")
    secret = tmp_path / "secret.csv"
    secret.write_text("not for the report")
    (tmp_path / "rec" / "explain.details.csv").unlink()
    (tmp_path / "rec" / "explain.details.csv").symlink_to(secret)
    with pytest.raises(InputError) as refused:
        recorded_explanations(tmp_path / "rec")
    path = tmp_path / "rec" / "explain.details.csv"
    assert str(refused.value) == f"{path}: a symbolic link; a recording holds plain files"
    assert len(recorded_explanations(FIXTURES / "explain")) == 2


def test_a_program_case_s_explanation_is_read_from_its_own_folder_and_checked_alike(tmp_path: Path):
    import shutil

    from ncuverify.errors import InputError
    from ncuverify.profile.explain_pass import PROGRAM_EXPLANATIONS, recorded_explanations

    shutil.copytree(FIXTURES / "explain", tmp_path / "rec")
    program = tmp_path / "rec" / PROGRAM_EXPLANATIONS / "0"
    program.mkdir(parents=True)
    for name in ("explain.details.csv", "explain.source.csv"):
        shutil.copy(FIXTURES / "explain" / name, program / name)
    (program / "explain.json").write_text(json.dumps({"f.yaml::add#2": "global"}))
    found = recorded_explanations(tmp_path / "rec")
    assert len(found) == 3 and found["f.yaml::add#2"].topic == "global"
    (tmp_path / "rec" / PROGRAM_EXPLANATIONS / "1").symlink_to(FIXTURES / "explain")
    assert len(recorded_explanations(tmp_path / "rec")) == 3, "a link to a folder is not read"
    (program / "explain.source.csv").unlink()
    (program / "explain.source.csv").symlink_to(tmp_path / "rec" / "explain.source.csv")
    with pytest.raises(InputError, match="a symbolic link; a recording holds plain files"):
        recorded_explanations(tmp_path / "rec")


def test_a_kept_folder_used_again_replays_only_the_last_run_s_explanations(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("FAKE_NCU_NOTES", str(tmp_path / "notes.jsonl"))
    kept = tmp_path / "saved"
    [explained] = fake_profiled([DATA / "explain.yaml"], kept, explain=True)
    assert explained.explanations
    (kept / "explain-programs" / "0").mkdir(parents=True)
    shutil.copy(kept / "explain.json", kept / "explain-programs" / "0" / "explain.json")
    fake_profiled([DATA / "explain.yaml"], kept)
    assert (
        not (kept / "explain.json").exists()
        and not (kept / "explain-programs" / "0" / "explain.json").exists()
    )
    [replayed] = check_files(
        [DATA / "explain.yaml"], CheckOptions(cache=COMPILE_CACHE, from_profile=kept), NO_GPU
    )
    assert replayed.explanations == {}


def test_a_step_profiled_only_before_the_step_explained_keeps_its_launch_but_no_explanation(tmp_path: Path):
    from ncuverify.profile.explain_pass import recorded_explanations

    shutil.copytree(FIXTURES / "explain", tmp_path / "rec")
    cases = json.loads((tmp_path / "rec" / "explain.json").read_text())
    whole = recorded_explanations(tmp_path / "rec")
    first, *rest = cases
    (tmp_path / "rec" / "explain.json").write_text(
        json.dumps({first: None, **{name: cases[name] for name in rest}})
    )
    found = recorded_explanations(tmp_path / "rec")
    # the launches after it are explained from their own launch's pages, as before
    assert set(found) == set(rest) and all(found[name] == whole[name] for name in rest)
