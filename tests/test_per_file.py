"""Recorded runs split back per file: recordings that hold many files, and those of earlier versions."""

import json
from pathlib import Path

import pytest
from conftest import COMPILE_CACHE, DATA, FIXTURES, NO_GPU

from ncuverify.pipeline import CheckOptions, check_files
from ncuverify.profile import recording
from ncuverify.results import Verdict, run_keys


def verdicts(paths: list[Path], recorded: Path) -> dict[tuple[str, str], Verdict]:
    results = check_files(paths, CheckOptions(cache=COMPILE_CACHE, from_profile=recorded), NO_GPU)
    assert all(r.input_error is None for r in results), [r.input_error for r in results]
    return {(r.path.name, c.claim.id): c.verdict for r in results for c in r.claims}


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
        [DATA / "sample.yaml", DATA / "launch_failure.yaml"],
        CheckOptions(cache=COMPILE_CACHE, from_profile=tmp_path),
        NO_GPU,
    )
    assert results[0].input_error is None
    assert results[1].input_error == "the recording holds no case of launch_failure.yaml"


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


def test_a_repeated_case_gets_the_time_of_its_repeats_and_loses_it_where_they_failed():
    from ncuverify.measurements import Measurements
    from ncuverify.profile.per_file import by_file

    time, dram = "gpu__time_duration.sum", "dram__bytes_read.sum"
    once = [("f::c", "k", time, 9.0, "ns"), ("f::c", "k", dram, 64.0, "byte"), ("f::d", "k", time, 7.0, "ns")]
    repeats = [("f::c (repeats)", "k", time, 5.0, "ns"), ("f::c (repeats)", "k", "buffer__out.sum", 3.0, "")]
    [measured] = by_file(Measurements((*once, *repeats)), ["f"]).values()
    assert measured.value("c", time) == 5.0 and measured.value("c", dram) == 64.0
    assert measured.value("d", time) == 7.0 and "c (repeats)" not in measured.cases
    assert measured.rows.count(("c", "k", time, 5.0, "ns")) == 1 and len(measured.rows) == 3
    failed = Measurements(tuple(once), {"f::c (repeats)": "CUDA_ERROR_LAUNCH_FAILED"})
    [measured] = by_file(failed, ["f"]).values()
    assert measured.value("c", dram) == 64.0  # the one launch's counters stand
    with pytest.raises(KeyError, match="did not run: CUDA_ERROR_LAUNCH_FAILED"):
        measured.value("c", time)  # never the one launch's time in place of the repeats'


def test_a_recording_that_names_repeats_of_a_case_the_file_lacks_gives_them_to_no_claim():
    from ncuverify.measurements import Measurements
    from ncuverify.profile.per_file import by_file

    time = "gpu__time_duration.sum"
    rows = (("f::c", "k", time, 9.0, "ns"), ("f::ghost (repeats)", "k", time, 5.0, "ns"))
    damaged = Measurements(rows, {"f::other (repeats) (repeats)": "x"}, ("g::nothing (repeats)",))
    split = by_file(damaged, ["f", "g"])
    assert split["f"].value("c", time) == 9.0  # the file's own case keeps its figure
    assert split["f"].value("ghost", time) == 5.0  # named once, for no claim of the file
    assert split["g"].unmeasured == ("nothing",)
    assert split["f"].failed_cases == {}  # repeats of repeats name no case: no file's
