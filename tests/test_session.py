"""A whole run's profile: the cases each file needs, and recordings that hold many files."""

import json
import os
from pathlib import Path

import pytest
from conftest import DATA, FIXTURES

from ncuverify.environment import Gpu
from ncuverify.pipeline import CheckOptions, Environment, check_files, split_claims
from ncuverify.profile import NcuOptions, recording
from ncuverify.profile.plan import case_metrics, qualified
from ncuverify.profile.schedule import PassCounts
from ncuverify.results import Verdict, exit_code, run_keys
from ncuverify.spec import load

NO_GPU = Environment(None, None, "no GPU here")


def verdicts(paths: list[Path], recorded: Path) -> dict[tuple[str, str], Verdict]:
    results = check_files(paths, CheckOptions(from_profile=recorded), NO_GPU)
    assert all(r.input_error is None for r in results), [r.input_error for r in results]
    return {(r.path.name, c.claim.id): c.verdict for r in results for c in r.claims}


def test_each_case_needs_the_metrics_of_its_claims_and_a_control_those_of_its_claim():
    spec = load(DATA / "sample.yaml")
    needs = case_metrics(spec, spec.content.claims)
    assert list(needs) == ["stride1", "stride32", "scale_2d", "misaligned"]  # file order
    sectors = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
    # misaligned is only a control (of stride32_global_ld_sectors_measure, a named measure) besides its own claim.
    assert sectors in needs["misaligned"] and sectors in needs["stride32"]
    assert "gpu__time_duration.sum" in needs["stride32"] and "gpu__time_duration.sum" in needs["stride1"]
    assert not any(name.startswith("static__") for metrics in needs.values() for name in metrics)


def test_per_file_recordings_saved_as_one_run_replay_to_the_same_verdicts(tmp_path: Path):
    files = [DATA / "sample.yaml", DATA / "faults.yaml"]
    before = verdicts(files, FIXTURES)
    whole = recording.load(FIXTURES, run_keys(files))
    assert all(
        s.case.startswith(("tests/data/sample.yaml::", "tests/data/faults.yaml::"))
        for run in whole.runs
        for s in run.cases
    )
    recording.save(tmp_path, whole.runs, whole.provenance)
    assert (tmp_path / "ncu.5.log").is_file()  # one run of sample, five of faults
    assert verdicts(files, tmp_path) == before
    assert before[("sample.yaml", "contiguous_four_sectors")] is Verdict.PASSED


def test_a_file_the_recording_does_not_hold_is_an_input_error(tmp_path: Path):
    whole = recording.load(FIXTURES, run_keys([DATA / "sample.yaml"]))
    recording.save(tmp_path, whole.runs, whole.provenance)
    results = check_files(
        [DATA / "sample.yaml", DATA / "launch_failure.yaml"], CheckOptions(from_profile=tmp_path), NO_GPU
    )
    assert results[0].input_error is None
    assert results[1].input_error == "the recording holds no case of launch_failure.yaml"


def test_qualified_names_join_file_and_case():
    assert qualified("coalescing", "lab1_stride2") == "coalescing::lab1_stride2"


FAKE_NCU = DATA / "fake_ncu" / "ncu"


def fake_run(tmp_path: Path, monkeypatch, gpus: tuple[int, ...]) -> tuple[list, list[dict]]:
    """Check three files with a stand-in for ncu on a machine said to have two GPUs."""
    notes = tmp_path / f"notes-{len(gpus)}.jsonl"
    monkeypatch.setenv("FAKE_NCU_NOTES", str(notes))
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    environment = Environment(Gpu(0, "Fake GPU", "sm_90", "13.0"), str(FAKE_NCU), None, gpu_count=2)
    options = CheckOptions(
        ncu=NcuOptions(executable=str(FAKE_NCU)),
        gpus=gpus,
        explain=False,
        save_profile=tmp_path / f"saved{len(gpus)}",
    )
    files = [DATA / "sample.yaml", DATA / "static.yaml", DATA / "shared.yaml"]
    results = check_files(files, options, environment)
    return results, [json.loads(line) for line in notes.read_text().splitlines()]


def test_a_run_profiles_every_file_in_few_processes_and_splits_the_results_back(tmp_path: Path, monkeypatch):
    results, processes = fake_run(tmp_path, monkeypatch, (0,))
    assert all(r.input_error is None for r in results)
    profiled = [name for process in processes for name in process["cases"]]
    assert sorted(profiled) == sorted(
        qualified(path.stem, case)
        for path in (DATA / "sample.yaml", DATA / "static.yaml", DATA / "shared.yaml")
        for case in case_metrics(load(path), split_claims(load(path).content.claims)[1])
    )
    assert len(processes) < 3, "fewer processes than files"
    assert {p["gpu"] for p in processes} == {"0"}
    # Each file's measurements carry its own case names, with the fake's values (a metric's name length).
    sample = results[0].measurements
    sectors = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
    assert sample is not None and sample.value("stride1", sectors) == len(sectors)


def test_two_gpus_share_the_cases_and_give_the_verdicts_of_one(tmp_path: Path, monkeypatch):
    one, _ = fake_run(tmp_path, monkeypatch, (0,))
    two, processes = fake_run(tmp_path, monkeypatch, (0, 1))
    assert {p["gpu"] for p in processes} == {"0", "1"}
    profiled = [name for process in processes for name in process["cases"]]
    assert len(profiled) == len(set(profiled)), "every case once"
    assert [[(c.claim.id, c.verdict, c.measured) for c in r.claims] for r in two] == [
        [(c.claim.id, c.verdict, c.measured) for c in r.claims] for r in one
    ]
    # The recording of the two-GPU run replays to the same verdicts without a GPU.
    replayed = check_files(
        [DATA / "sample.yaml", DATA / "static.yaml", DATA / "shared.yaml"],
        CheckOptions(from_profile=tmp_path / "saved2"),
        NO_GPU,
    )
    assert [[(c.claim.id, c.verdict) for c in r.claims] for r in replayed] == [
        [(c.claim.id, c.verdict) for c in r.claims] for r in two
    ]


def test_ncu_s_pass_counts_are_remembered_for_the_next_run(tmp_path: Path, monkeypatch):
    passes = PassCounts.load(tmp_path / "passes.json")
    monkeypatch.setenv("FAKE_NCU_NOTES", str(tmp_path / "notes.jsonl"))
    environment = Environment(Gpu(0, "Fake GPU", "sm_90", "13.0"), str(FAKE_NCU), None, gpu_count=1)
    options = CheckOptions(ncu=NcuOptions(executable=str(FAKE_NCU)), passes=passes, explain=False)
    check_files([DATA / "sample.yaml"], options, environment)
    saved = json.loads((tmp_path / "passes.json").read_text())
    assert saved and set(saved.values()) == {4}  # what the fake ncu reported


def test_failed_memory_claims_get_a_second_pass_whose_explanations_are_kept(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("FAKE_NCU_NOTES", str(tmp_path / "notes.jsonl"))
    environment = Environment(Gpu(0, "Fake GPU", "sm_90", "13.0"), str(FAKE_NCU), None, gpu_count=1)
    options = CheckOptions(ncu=NcuOptions(executable=str(FAKE_NCU)), save_profile=tmp_path / "saved")
    [live] = check_files([DATA / "explain.yaml"], options, environment)
    # The fake's figures fail all three claims; each names ncu's rules and lines for its case's launch.
    assert {c.claim.id for c in live.claims if c.verdict is Verdict.FAILED} == set(live.explanations)
    tile = live.explanations["tile_is_conflict_free"]
    assert tile.topic == "shared" and tile.lines[0].line == 90  # what the captured pages say
    assert live.explanations["gather_is_coalesced"].topic == "global"
    processes = [json.loads(line) for line in (tmp_path / "notes.jsonl").read_text().splitlines()]
    assert processes[-1]["cases"] == ["explain::gather", "explain::tile"], "one pass over the failed cases"
    [replayed] = check_files([DATA / "explain.yaml"], CheckOptions(from_profile=tmp_path / "saved"), NO_GPU)
    assert replayed.explanations == live.explanations


def test_a_folder_of_recordings_from_earlier_versions_still_replays(tmp_path: Path):
    """Earlier versions kept one folder per file, with cases and kernels named without their file."""
    legacy = tmp_path / "sample"
    legacy.mkdir()
    for name in ("ncu.log", "provenance.json"):
        (legacy / name).write_text((FIXTURES / "sample" / name).read_text())
    status = json.loads((FIXTURES / "sample" / "status.json").read_text())
    plain = [
        {k: v for k, v in s.items() if k != "kernel"} | {"case": s["case"].split("::")[1]} for s in status
    ]
    (legacy / "status.json").write_text(json.dumps(plain))
    provenance = json.loads((legacy / "provenance.json").read_text())
    provenance["kernels"] = {k.split("::")[1]: v for k, v in provenance["kernels"].items()}
    (legacy / "provenance.json").write_text(json.dumps(provenance))
    assert verdicts([DATA / "sample.yaml"], tmp_path) == verdicts([DATA / "sample.yaml"], FIXTURES)


def test_ctrl_c_while_profiling_keeps_the_static_verdicts(monkeypatch):
    from ncuverify.pipeline import Interrupted
    from ncuverify.profile import session

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(session, "profile_files", interrupted)
    environment = Environment(Gpu(0, "Fake GPU", "sm_90", "13.0"), str(FAKE_NCU), None, gpu_count=1)
    try:
        check_files([DATA / "static.yaml"], CheckOptions(explain=False), environment)
    except Interrupted as stopped:
        [result] = stopped.results
    else:
        raise AssertionError("the interrupt was swallowed")
    by_verdict = {c.verdict for c in result.claims}
    assert by_verdict == {Verdict.PASSED, Verdict.SKIPPED}
    skipped = [c for c in result.claims if c.verdict is Verdict.SKIPPED]
    assert all("interrupted before these claims were profiled" in (c.reason or "") for c in skipped)
    assert exit_code([result]) == 3


def test_each_case_gets_its_own_launches_values(tmp_path: Path, monkeypatch):
    """With values that differ per case, a launch given to the wrong case would show."""
    import zlib

    monkeypatch.setenv("FAKE_NCU_VALUES", "by_case")
    results, _ = fake_run(tmp_path, monkeypatch, (0,))
    sectors = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
    for result in results:
        measured = result.measurements
        assert measured is not None
        for case in measured.frame[measured.frame["metric"] == sectors]["case"]:
            own = zlib.crc32(qualified(result.path.stem, case).encode()) % 997
            assert measured.value(case, sectors) == len(sectors) + 1000 * own, case


STALLING_NCU = DATA / "fake_ncu" / "stalling_ncu"


def stalled_check(tmp_path: Path, monkeypatch, stall: str) -> list:
    """Check sample.yaml with an ncu that stops where stall says, under a 1 s case timeout, its
    temporary folder in tmp_path/tmp."""
    import tempfile

    monkeypatch.setenv("FAKE_NCU_NOTES", str(tmp_path / "notes.jsonl"))
    monkeypatch.setenv("FAKE_NCU_STALL", stall)
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    environment = Environment(Gpu(0, "Fake GPU", "sm_90", "13.0"), str(STALLING_NCU), None, gpu_count=1)
    options = CheckOptions(ncu=NcuOptions(executable=str(STALLING_NCU), case_timeout_s=1), explain=False)
    [result] = check_files([DATA / "sample.yaml"], options, environment)
    started = [json.loads(line) for line in (tmp_path / "notes.jsonl").read_text().splitlines()]
    for group in {start["pgid"] for start in started if start["argument"] != "--version"}:
        with pytest.raises(ProcessLookupError):  # a profiling ncu's group is gone once check returns
            os.killpg(group, 0)
    assert list((tmp_path / "tmp").iterdir()) == [], "the work folder is gone"
    return [c for c in result.claims if c.verdict is not Verdict.PASSED or "static__" in c.claim.metric]


def test_a_check_with_an_ncu_that_never_starts_the_runner_ends_with_why(tmp_path: Path, monkeypatch):
    judged = stalled_check(tmp_path, monkeypatch, "before_runner")
    errors = [c for c in judged if c.verdict is Verdict.ERROR]
    assert errors and all(
        c.reason == f"case {c.claim.case} did not run: ncu did not start the runner within 1 s; stopped"
        for c in errors
        if c.claim.case
    )


def test_a_check_with_an_ncu_that_hangs_after_the_runner_without_a_report_ends_with_why(
    tmp_path: Path, monkeypatch
):
    monkeypatch.setenv("FAKE_NCU_CSV", "none")
    judged = stalled_check(tmp_path, monkeypatch, "after_runner")
    errors = [c for c in judged if c.verdict is Verdict.ERROR]
    why = "ncu did not end within 1 s after the runner's last case; stopped"
    assert errors and all(
        c.reason == f"case {c.claim.case} did not run: {why}" for c in errors if c.claim.case
    )


def test_a_check_with_an_ncu_that_hangs_after_a_whole_report_keeps_its_figures(tmp_path: Path, monkeypatch):
    judged = stalled_check(tmp_path, monkeypatch, "after_runner")
    assert not [c for c in judged if c.verdict is Verdict.ERROR]


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


def test_a_kept_profile_s_folder_used_again_profiles_today_s_kernels(tmp_path: Path, monkeypatch):
    stale = tmp_path / "saved1" / "cubins" / "sample.read_stride1.cubin"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"an earlier build")
    results, _ = fake_run(tmp_path, monkeypatch, (0,))
    assert all(r.input_error is None for r in results)
    assert stale.read_bytes() != b"an earlier build" and stale.read_bytes().startswith(b"\x7fELF")


def test_a_kept_profile_s_folder_is_never_written_through_a_link(tmp_path: Path, monkeypatch):
    victim = tmp_path / "victim"
    victim.write_bytes(b"keep me")
    link = tmp_path / "saved1" / "cubins" / "sample.read_stride1.cubin"
    link.parent.mkdir(parents=True)
    link.symlink_to(victim)
    (tmp_path / "notes-1.jsonl").touch()  # ncu never runs
    results, processes = fake_run(tmp_path, monkeypatch, (0,))
    assert processes == []
    refused = f"{link}: a symbolic link; refusing to write the recording through it"
    assert [r.input_error for r in results if r.path.stem == "sample"] == [refused]
    assert victim.read_bytes() == b"keep me"
