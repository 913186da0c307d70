"""check --reuse: which cases a run takes from a recording (those whose measurement key is the recorded
one, measured there), their figures, and the recording a reusing run keeps. Built on the committed H200
recording, to which the keys a live run would have written are added (its GPU identity from its
provenance); and end to end with the stand-in ncu, which notes every case it profiles."""

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import COMPILE_CACHE, DATA, NO_GPU, RECORDINGS, fake_profiled
from keyed_recordings import FILES, keyed, prepared, unkeyed

from ncuverify.export.html_report import to_html
from ncuverify.export.markdown import to_markdown
from ncuverify.export.reading import from_json
from ncuverify.export.results_json import to_json
from ncuverify.options import CheckOptions
from ncuverify.pipeline import check_files
from ncuverify.profile import per_file, recording
from ncuverify.profile.measurement_keys import gpu_identity, measurement_keys
from ncuverify.profile.plan import FileCases
from ncuverify.report.files import reused_lines
from ncuverify.stages.reuse import Reused, anything_to_profile, reusable

CHANGED = "changed since the recording (its code, launch, metrics or the GPU and tools)"


def replayed(folder: Path, paths: list[Path] = FILES) -> list:
    return check_files(paths, CheckOptions(cache=COMPILE_CACHE, from_profile=folder, explain=False), NO_GPU)


def test_every_case_whose_key_is_recorded_is_taken_with_the_figures_a_replay_reads(tmp_path):
    folder, files, keys, today = keyed(tmp_path)
    taken = reusable(folder, files, today, keys)
    assert taken.warning is None
    for file in files:
        assert taken.cases[file.key] == set(file_cases_read(file)), file.key
    whole = {r.key: r.measurements for r in replayed(folder)}
    for file in files:
        profiler_rows = {row for row in whole[file.key].rows if not row[2].startswith(("static__", "sass:"))}
        assert set(taken.measured[file.key].rows) == profiler_rows
    reused = Reused.of(taken, files)
    assert not anything_to_profile(reused.files), "every case reused: no ncu process"
    assert [m.of for m in reused.marks.values()] == [len(file_cases_read(f)) for f in files]


def file_cases_read(file: FileCases) -> list[str]:
    from ncuverify.profile.plan import case_metrics, with_earlier_steps

    return list(with_earlier_steps(file.spec, case_metrics(file.spec, file.claims)))


def test_a_changed_key_profiles_that_case_again_and_the_others_are_taken(tmp_path):
    folder, files, keys, today = keyed(tmp_path)
    changed = next(name for name in today if name.startswith("expectations/transpose.yaml::"))
    taken = reusable(folder, files, {**today, changed: "0" * 64}, keys)
    case = changed.partition("::")[2]
    transpose = taken.cases["expectations/transpose.yaml"]
    assert case not in transpose and transpose == set(file_cases_read(files[1])) - {case}
    assert case not in taken.measured["expectations/transpose.yaml"].cases
    assert taken.refused == {"expectations/transpose.yaml": {case: CHANGED}}
    left = Reused.of(taken, files).files
    assert anything_to_profile(left)
    assert [file.reused for file in left] == [taken.cases[file.key] for file in files]


def test_a_case_the_recording_keeps_no_key_of_is_profiled_again_and_says_why(tmp_path):
    folder, files, keys, today = keyed(tmp_path)
    written = json.loads((folder / "provenance.json").read_text())
    dropped = sorted(written["measurement_keys"])[0]
    del written["measurement_keys"][dropped]
    (folder / "provenance.json").write_text(json.dumps(written, indent=1))
    taken = reusable(folder, files, today, keys)
    file, _, case = dropped.partition("::")
    assert case not in taken.cases[file] and taken.refused == {file: {case: "not in the recording"}}


def test_another_gpu_or_ncu_reuses_nothing(tmp_path):
    for change in (
        {"gpu": "NVIDIA H100 80GB HBM3"},
        {"ncu_version": "2025.2.0.0"},
        {"clock_control": "base"},
    ):
        folder, files, keys, today = keyed(tmp_path / next(iter(change)), identity_changes=change)
        taken = reusable(folder, files, today, keys)
        assert taken.cases == {}, change


def test_the_cut_recording_of_a_reusing_run_replays_to_the_same_verdicts_and_holds_no_other_figure(tmp_path):
    folder, files, keys, today = keyed(tmp_path)
    changed = [name for name in today if name.startswith("expectations/coalescing.yaml::")][:1]
    taken = reusable(folder, files, {**today, **dict.fromkeys(changed, "0" * 64)}, keys)
    provenance = replace(recording.load_provenance(folder, keys[0]), measurement_keys=today)
    recording.save(tmp_path / "cut", taken.runs, provenance)
    cut = recording.load(tmp_path / "cut", keys)
    measured = per_file.measurements_by_file(cut.runs, [f.key for f in files], per_file.symbols_of(files))
    assert {key: set(m.rows) for key, m in measured.items()} == {
        key: set(m.rows) for key, m in taken.measured.items()
    }
    assert changed[0].partition("::")[2] not in measured["expectations/coalescing.yaml"].cases
    # all reused: the cut recording replays to the verdicts of the whole one
    whole = reusable(folder, files, today, keys)
    recording.save(tmp_path / "all", whole.runs, provenance)
    again, before = replayed(tmp_path / "all"), replayed(folder)
    assert [[(c.claim.id, c.verdict) for c in r.claims] for r in again] == [
        [(c.claim.id, c.verdict) for c in r.claims] for r in before
    ]


def test_a_recording_without_keys_or_unreadable_reuses_nothing_and_says_why(tmp_path):
    old = unkeyed(tmp_path)
    files, keys = prepared(FILES, old)
    today = measurement_keys(files, gpu_identity(recording.load_provenance(old, keys[0])))
    without = reusable(old, files, today, keys)
    assert without.cases == {} and "keeps no measurement keys" in (without.warning or "")
    folder, files, keys, today = keyed(tmp_path)
    (folder / "status.json").write_text("[{")
    damaged = reusable(folder, files, today, keys)
    assert damaged.cases == {} and "status.json" in (damaged.warning or "")
    assert damaged.warning.endswith("every case is profiled")  # type: ignore[union-attr]
    shutil.copy(RECORDINGS / "status.json", folder / "status.json")
    written = json.loads((folder / "provenance.json").read_text())
    (folder / "provenance.json").write_text(json.dumps({**written, "measurement_keys": {"x::y": ["forged"]}}))
    forged = reusable(folder, files, today, keys)
    assert forged.cases == {} and "measurement_keys: not an object of digests" in (forged.warning or "")


# End to end with the stand-in ncu: what it profiles, what the run judges, what it keeps.


def verdicts(result) -> list[tuple]:
    return [(c.claim.id, c.verdict, c.measured, c.control_measured) for c in result.claims]


def sample_project(tmp_path: Path) -> Path:
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / ".ncuverify-root").write_text("")
    path = tmp_path / "p" / "sample.yaml"
    shutil.copy(DATA / "sample.yaml", path)
    return path


def profiled_cases(notes: Path) -> list[str]:
    if not notes.exists():
        return []
    return sorted(case for line in notes.read_text().splitlines() for case in json.loads(line)["cases"])


@pytest.fixture
def by_case(monkeypatch):
    """The stand-in ncu's values differ by case, so that a figure given to the wrong case shows."""
    monkeypatch.setenv("FAKE_NCU_VALUES", "by_case")


def test_a_run_that_reuses_everything_profiles_nothing_and_judges_the_same(tmp_path, monkeypatch, by_case):
    path = sample_project(tmp_path)
    monkeypatch.setenv("FAKE_NCU_NOTES", str(tmp_path / "full.jsonl"))
    [full] = fake_profiled([path], tmp_path / "full")
    assert profiled_cases(tmp_path / "full.jsonl")
    monkeypatch.setenv("FAKE_NCU_NOTES", str(tmp_path / "again.jsonl"))
    [again] = fake_profiled([path], tmp_path / "again", reuse=tmp_path / "full")
    assert profiled_cases(tmp_path / "again.jsonl") == [], "no ncu process"
    assert verdicts(again) == verdicts(full)
    assert sorted(again.measurements.rows) == sorted(full.measurements.rows)
    mark = again.reused_from
    assert mark is not None and mark.folder == str(tmp_path / "full") and len(mark.cases) == mark.of == 4
    assert reused_lines([again]) == [
        f"reused 4 of 4 cases from {tmp_path / 'full'} (recorded {full.provenance.recorded_at} on Fake GPU)"
    ]
    assert from_json(to_json([again]))[0].reused_from == mark
    assert "- `sample.yaml`: reused 4 of 4 cases from " in to_markdown([again])
    assert f"reused 4 of 4 cases from {tmp_path / 'full'}" in to_html([again])
    assert json.loads(to_json([full]))["files"][0]["reused_from"] is None


def test_a_changed_case_alone_is_profiled_and_the_saved_recording_replays_and_reuses(
    tmp_path, monkeypatch, by_case
):
    path = sample_project(tmp_path)
    monkeypatch.setenv("FAKE_NCU_NOTES", str(tmp_path / "full.jsonl"))
    fake_profiled([path], tmp_path / "full")
    path.write_text(path.read_text().replace("    grid: [256, 4]\n", "    grid: [128, 4]\n"))
    monkeypatch.setenv("FAKE_NCU_NOTES", str(tmp_path / "changed.jsonl"))
    [changed] = fake_profiled([path], tmp_path / "changed", reuse=tmp_path / "full")
    assert profiled_cases(tmp_path / "changed.jsonl") == ["sample.yaml::scale_2d"]
    monkeypatch.setenv("FAKE_NCU_NOTES", str(tmp_path / "fresh.jsonl"))
    [fresh] = fake_profiled([path], tmp_path / "fresh")
    assert verdicts(changed) == verdicts(fresh)
    keys = json.loads((tmp_path / "changed" / "provenance.json").read_text())["measurement_keys"]
    assert keys == json.loads((tmp_path / "fresh" / "provenance.json").read_text())["measurement_keys"]
    [replay] = check_files(
        [path], CheckOptions(cache=COMPILE_CACHE, from_profile=tmp_path / "changed", explain=False), NO_GPU
    )
    assert replay.input_error is None and not replay.warnings
    assert verdicts(replay) == verdicts(fresh)
    monkeypatch.setenv("FAKE_NCU_NOTES", str(tmp_path / "next.jsonl"))
    [following] = fake_profiled([path], tmp_path / "next", reuse=tmp_path / "changed")
    assert profiled_cases(tmp_path / "next.jsonl") == [], "the next run reuses every case"
    assert following.reused_from is not None and len(following.reused_from.cases) == 4


def test_without_a_gpu_a_reusing_run_measures_nothing_as_check_does(tmp_path):
    path = sample_project(tmp_path)
    options = CheckOptions(cache=COMPILE_CACHE, reuse=RECORDINGS, explain=False)
    [result] = check_files([path], options, NO_GPU)
    assert result.reused_from is None
    assert {
        c.verdict.value for c in result.claims if not c.claim.metric_refs()[0].name.startswith("static__")
    } == {"skipped"}
