import json
import math
import os
from dataclasses import FrozenInstanceError, replace
from pathlib import Path

import pandas as pd
import pytest
from conftest import COMPILE_CACHE, DATA, FIXTURES, JSON_VALUES, NO_GPU
from hypothesis import given, settings
from typer.testing import CliRunner

from ncuverify.baseline import snapshot as baseline
from ncuverify.cli import app
from ncuverify.errors import ExitCode, InputError
from ncuverify.measurements import MEASUREMENT_COLUMNS, Measurements
from ncuverify.options import CheckOptions
from ncuverify.pipeline import check_file
from ncuverify.spec import Tolerance


@pytest.fixture(scope="module")
def results():
    return [
        check_file(DATA / "sample.yaml", CheckOptions(cache=COMPILE_CACHE, from_profile=FIXTURES), NO_GPU)
    ]


def test_a_run_compared_with_itself_has_no_changes(results):
    assert baseline.compare(baseline.snapshot(results), results, {}) == []


def test_synthetic_regressions_and_improvements(results):
    values = baseline.snapshot(results).as_values()
    cases = values["tests/data/sample.yaml"]
    now_time = cases["stride1"]["gpu__time_duration.sum"]
    cases["stride1"]["gpu__time_duration.sum"] = now_time / 1.5  # main was faster: now 50% slower
    cases["stride32"]["gpu__time_duration.sum"] *= 2  # main was slower: now twice as fast
    cases["scale_2d"]["static__registers_per_thread"] -= 8  # main used 8 registers fewer
    cases["misaligned"]["gpu__time_duration.sum"] *= 0.95  # within 10%: no change reported
    before = baseline.baseline_of(values)
    changes = {(c.case, c.metric): c for c in baseline.compare(before, results, {})}
    assert set(changes) == {
        ("stride1", "gpu__time_duration.sum"),
        ("stride32", "gpu__time_duration.sum"),
        ("scale_2d", "static__registers_per_thread"),
    }
    assert changes[("stride1", "gpu__time_duration.sum")].worse
    assert changes[("stride1", "gpu__time_duration.sum")].ratio == pytest.approx(1.5)
    assert not changes[("stride32", "gpu__time_duration.sum")].worse
    assert changes[("scale_2d", "static__registers_per_thread")].worse
    # A wider tolerance on the command line lets the time regression pass.
    loose = baseline.compare(before, results, {"gpu__time_duration.sum": Tolerance(rel=0.6)})
    assert ("stride1", "gpu__time_duration.sum") not in {(c.case, c.metric) for c in loose if c.worse}


def test_a_baseline_of_an_earlier_version_keyed_by_stem_still_compares(results):
    """tests/data/baseline-by-stem.json: saved by ncuverify before files were known by their paths in
    the project (`ncuverify baseline save tests/data/baseline-by-stem.json tests/data/sample.yaml
    --from-profile tests/fixtures/sample` at commit 70fe244)."""
    before = baseline.load(DATA / "baseline-by-stem.json")
    assert list(before.files) == ["sample"]
    assert baseline.compare(before, results, {}) == []
    values = before.as_values()
    values["sample"]["stride1"]["gpu__time_duration.sum"] /= 1.5
    changes = baseline.compare(baseline.baseline_of(values), results, {})
    assert [(c.file, c.case, c.metric, c.worse) for c in changes] == [
        ("tests/data/sample.yaml", "stride1", "gpu__time_duration.sum", True)
    ]


def test_two_files_of_one_name_in_two_folders_keep_their_own_entries(tmp_path: Path):
    """Files are known by their paths in the project: a.yaml in two folders are two baseline entries,
    and neither is compared with the other's figures."""
    (tmp_path / ".ncuverify-root").touch()
    for folder in ("one", "two"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "a.yaml").write_text((DATA / "regression.yaml").read_text())
    first, second = (
        check_file(tmp_path / f / "a.yaml", CheckOptions(cache=COMPILE_CACHE, static_only=True), NO_GPU)
        for f in ("one", "two")
    )
    values = baseline.snapshot([first, second]).as_values()
    assert sorted(values) == ["one/a.yaml", "two/a.yaml"]
    values["two/a.yaml"] = {
        case: {**metrics, "static__registers_per_thread": metrics["static__registers_per_thread"] - 8}
        for case, metrics in values["two/a.yaml"].items()
    }
    changes = baseline.compare(baseline.baseline_of(values), [first, second], {})
    assert {c.file for c in changes} == {"two/a.yaml"} and all(c.worse for c in changes)


def test_tolerances_from_the_file_and_the_command_line(tmp_path):
    result = check_file(DATA / "regression.yaml", CheckOptions(cache=COMPILE_CACHE, static_only=True), NO_GPU)
    tolerances = baseline.tolerances_for(result, {"static__registers_per_thread": Tolerance(abs=8)})
    assert tolerances["gpu__time_duration.sum"] == Tolerance(rel=0.25)  # the file's regressions:
    assert tolerances["static__registers_per_thread"] == Tolerance(abs=8)  # the command line's
    assert tolerances["static__spill_store_bytes"] == Tolerance(abs=0)  # the default


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("gpu__time_duration.sum=rel:0.05", ("gpu__time_duration.sum", Tolerance(rel=0.05))),
        ("r=abs:8", ("r", Tolerance(abs=8))),
    ],
)
def test_parse_tolerance(text, parsed):
    assert baseline.parse_tolerance(text) == parsed


@pytest.mark.parametrize("text", ["gpu__time_duration.sum", "x=rel", "x=pct:3", "x=rel:-1", "=abs:1"])
def test_bad_tolerances(text):
    with pytest.raises(InputError, match="write NAME=rel:FRACTION or NAME=abs:AMOUNT"):
        baseline.parse_tolerance(text)


def test_cli_save_then_compare_exits_1_on_a_regression(tmp_path: Path):
    saved = tmp_path / "main.json"
    runner = CliRunner()
    result = runner.invoke(
        app, ["baseline", "save", str(saved), str(DATA / "sample.yaml"), "--from-profile", str(FIXTURES)]
    )
    assert result.exit_code == ExitCode.OK, result.stdout
    same = runner.invoke(
        app, ["check", str(DATA / "sample.yaml"), "--from-profile", str(FIXTURES), "--baseline", str(saved)]
    )
    assert same.exit_code == ExitCode.OK and "no measure moved beyond its tolerance" in same.stdout
    data = json.loads(saved.read_text())
    # No claim reads SASS, yet a baseline holds every static fact, the SASS instruction count included.
    assert data["files"]["tests/data/sample.yaml"]["stride1"]["static__sass_instructions"] > 0
    data["files"]["tests/data/sample.yaml"]["stride1"]["gpu__time_duration.sum"] /= 2
    saved.write_text(json.dumps(data))
    worse = runner.invoke(
        app, ["check", str(DATA / "sample.yaml"), "--from-profile", str(FIXTURES), "--baseline", str(saved)]
    )
    assert worse.exit_code == ExitCode.CLAIM_FAILED
    assert "baseline: 1 regressed, 0 improved" in worse.stdout


def test_bad_baseline_file_exits_2(tmp_path: Path):
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    result = CliRunner().invoke(app, ["check", str(DATA / "sample.yaml"), "--baseline", str(bad)])
    assert result.exit_code == ExitCode.BAD_INPUT
    assert f"{bad}: not a baseline (not a JSON object)" in result.stdout.replace("\n", "")


# (what the file holds, the message after "base.json: not a baseline (")
DAMAGED = [
    ("[1, 2]", "not a JSON object)"),
    ("{}", "files: missing)"),
    ('{"files": [], "ncuverify": "0.1.0"}', "files: not an object)"),
    ('{"files": {}, "measures": {}}', "unknown key 'measures')"),
    ('{"files": {}, "measured_on": 3}', "measured_on: not text)"),
    ('{"files": {"sample": []}}', "files.sample: not an object)"),
    ('{"files": {"sample": {"stride1": 3}}}', "files.sample.stride1: not an object)"),
    (
        '{"files": {"sample": {"stride1": {"gpu__time_duration.sum": "fast"}}}}',
        "files.sample.stride1.gpu__time_duration.sum: not a number)",
    ),
    ('{"files": {"sample": {"stride1": {"r": true}}}}', "files.sample.stride1.r: not a number)"),
    ('{"files": {"sample": {"stride1": {"r": null}}}}', "files.sample.stride1.r: not a number)"),
    ('{"files": {"sample": {"stride1": {"r": NaN}}}}', "files.sample.stride1.r: not a finite number)"),
    ('{"files": {"sample": {"stride1": {"r": -Infinity}}}}', "files.sample.stride1.r: not a finite number)"),
    ('{"files": {"sample": {"stride1": {"r": 1e999}}}}', "files.sample.stride1.r: not a finite number)"),
    (
        '{"files": {"sample": {"stride1": {"r": ' + "9" * 400 + "}}}}",
        "files.sample.stride1.r: not a finite number)",
    ),
    ('{"files": {"s\\u001b[2J": {"c": {"r": "x"}}}}', "files['s\\x1b[2J'].c.r: not a number)"),
    ("{not json", "not JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1))"),
    ("[" * 100_000 + "]" * 100_000, "nested too deeply)"),
]


@pytest.mark.parametrize(("text", "message"), DAMAGED, ids=[d[1][:40] for d in DAMAGED])
def test_a_damaged_baseline_is_named_with_its_field(tmp_path: Path, text, message):
    path = tmp_path / "base.json"
    path.write_text(text)
    with pytest.raises(InputError) as error:
        baseline.load(path)
    assert str(error.value) == f"{path}: not a baseline ({message}"


def test_baseline_files_that_cannot_be_read(tmp_path: Path):
    with pytest.raises(InputError, match=r"absent.json: no such baseline$"):
        baseline.load(tmp_path / "absent.json")
    os.mkfifo(tmp_path / "fifo.json")  # opening it to read would wait for a writer for ever
    with pytest.raises(InputError, match=r"fifo.json: not a baseline \(not a regular file\)$"):
        baseline.load(tmp_path / "fifo.json")
    (tmp_path / "huge.json").write_bytes(b" " * (baseline.MAX_BASELINE_BYTES + 1))
    with pytest.raises(InputError, match=r"huge.json: not a baseline \(larger than 64 MiB\)$"):
        baseline.load(tmp_path / "huge.json")
    (tmp_path / "binary.json").write_bytes(b"\xff\xfe{}")
    with pytest.raises(InputError, match=r"binary.json: not a baseline \(not UTF-8 text \(byte 0\)\)$"):
        baseline.load(tmp_path / "binary.json")


def test_a_saved_baseline_loads_back_as_it_was_saved(results, tmp_path: Path):
    path = tmp_path / "main.json"
    baseline.save(results, path)
    assert baseline.load(path) == baseline.snapshot(results)
    assert baseline.load(path).json_text() == path.read_text()


def test_a_baseline_without_its_version_or_machine_still_loads(tmp_path: Path):
    # Only the values are needed to compare; files are keyed by the expectation file's stem.
    path = tmp_path / "base.json"
    path.write_text('{"files": {"sample": {"stride1": {"gpu__time_duration.sum": 4096}}}}')
    loaded = baseline.load(path)
    assert loaded.as_values() == {"sample": {"stride1": {"gpu__time_duration.sum": 4096.0}}}
    assert loaded.version is None and loaded.measured_on is None


def test_values_json_cannot_hold_are_not_saved(results, tmp_path: Path):
    (result,) = results
    frame = result.measurements.frame.copy()
    frame.loc[0, "value"] = math.inf
    saved = baseline.snapshot([replace(result, measurements=Measurements.of_frame(frame))])
    row = frame.iloc[0]
    assert saved.files["tests/data/sample.yaml"].value(row["case"], row["metric"]) is None


@settings(max_examples=150, deadline=None)
@given(JSON_VALUES)
def test_any_json_is_a_baseline_or_an_input_error(tmp_path_factory, value):
    path = tmp_path_factory.mktemp("b") / "base.json"
    path.write_text(json.dumps(value))
    try:
        loaded = baseline.load(path)
    except InputError as error:
        assert str(error).startswith(f"{path}: not a baseline (") and "\n" not in str(error)
    else:
        for cases in loaded.as_values().values():
            assert all(math.isfinite(v) for metrics in cases.values() for v in metrics.values())


@pytest.mark.slow
def test_a_tolerance_on_the_sass_count_compares_it_though_no_claim_reads_sass(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("NCUVERIFY_CACHE_DIR", str(tmp_path / "cache"))  # which holds no SASS
    saved = tmp_path / "main.json"
    runner = CliRunner()
    common = [str(DATA / "sample.yaml"), "--from-profile", str(FIXTURES)]
    assert runner.invoke(app, ["baseline", "save", str(saved), *common]).exit_code == ExitCode.OK
    data = json.loads(saved.read_text())
    data["files"]["tests/data/sample.yaml"]["stride1"]["static__sass_instructions"] -= 3
    saved.write_text(json.dumps(data))
    monkeypatch.setenv("NCUVERIFY_CACHE_DIR", str(tmp_path / "other-cache"))
    tolerance = ["--tolerance", "static__sass_instructions=abs:0"]
    grown = runner.invoke(app, ["check", *common, "--baseline", str(saved), *tolerance])
    assert grown.exit_code == ExitCode.CLAIM_FAILED, grown.stdout
    assert "static__sass_instructions" in grown.stdout


def test_save_static_only_writes_the_static_facts_and_exits_0_on_a_machine_without_a_gpu(
    tmp_path: Path, no_gpu
):
    saved, files = tmp_path / "static.json", [str(DATA / "sample.yaml"), str(DATA / "static.yaml")]
    runner = CliRunner()
    done = runner.invoke(app, ["baseline", "save", str(saved), *files, "--static-only"])
    assert done.exit_code == ExitCode.OK, done.output
    assert f"baseline of static facts written to {saved}" in done.output
    cases = baseline.load(saved).as_values()["tests/data/sample.yaml"]
    assert {metric for metrics in cases.values() for metric in metrics} >= {"static__registers_per_thread"}
    assert all(metric.startswith("static__") for metrics in cases.values() for metric in metrics)
    # every claim of the sample needs a GPU: saved alone, it judges nothing, and says so, yet exits 0
    alone = runner.invoke(app, ["baseline", "save", str(saved), files[0], "--static-only"])
    assert alone.exit_code == ExitCode.OK and "nothing could be judged here" in alone.output
    # without --static-only the machine cannot measure what the baseline is to hold
    assert runner.invoke(app, ["baseline", "save", str(saved), files[0]]).exit_code == ExitCode.NOT_MEASURABLE
    # and a run on the static facts compares with it
    same = runner.invoke(app, ["check", *files, "--static-only", "--baseline", str(saved)])
    assert same.exit_code == ExitCode.OK and "no measure moved beyond its tolerance" in same.output


# Fixed values, so that the bytes saved depend on nothing but the writer: a NaN (ncu's n/a) and an
# infinity that JSON cannot hold, a kernel of a set, a whole number, and keys that sort apart.
FIXED_ROWS = [
    ("stride1", "k1", "gpu__time_duration.sum", 4096.0, "ns"),
    ("stride1", "k1", "static__registers_per_thread", 32.0, ""),
    ("stride1", "k1", "l1tex__t_bytes.sum", math.nan, "byte"),
    ("gemms[tile<2>]", "_Z4tileILi2EEvv", "static__shared_static_bytes", 1024.0, "byte"),
    ("Zeta", "k2", "sm__throughput.avg.pct_of_peak_sustained_elapsed", 12.5, "%"),
    ("Zeta", "k2", "dram__bytes.sum", math.inf, "byte"),
]


def fixed_results(results: list) -> list:
    """Three files of the sample's run: two with the fixed values, one not measured."""
    (sample,) = results
    measured = Measurements.of_frame(pd.DataFrame(FIXED_ROWS, columns=MEASUREMENT_COLUMNS))
    return [
        replace(sample, key="tests/data/sample.yaml", measurements=measured),
        replace(sample, key="other/b c.yaml", measurements=measured),
        replace(sample, key="unmeasured.yaml", measurements=None),
    ]


def test_a_baseline_is_saved_as_it_always_was_byte_for_byte(results, tmp_path: Path, monkeypatch):
    """tests/data/baseline-fixed.json: these results saved by ncuverify 0.1.0 at commit 1890a12, whose
    baselines were plain JSON objects; a baseline is written the same bytes still."""
    golden = DATA / "baseline-fixed.json"
    monkeypatch.setattr(baseline, "__version__", json.loads(golden.read_text())["ncuverify"])
    path = tmp_path / "base.json"
    baseline.save(fixed_results(results), path)
    assert path.read_bytes() == golden.read_bytes()


def test_a_baseline_of_an_earlier_version_is_written_back_as_it_was_read():
    path = DATA / "baseline-by-stem.json"
    assert baseline.load(path).json_text() == path.read_text()


def test_a_baseline_is_a_value_that_nothing_changes(results):
    values = baseline.snapshot(results).as_values()
    made = baseline.baseline_of(values)
    values["tests/data/sample.yaml"]["stride1"]["gpu__time_duration.sum"] = -1.0  # the caller's dicts
    values["elsewhere.yaml"] = {}
    assert made.as_values() == baseline.snapshot(results).as_values() and "elsewhere.yaml" not in made.files
    with pytest.raises(FrozenInstanceError):
        made.version = "9.9"  # type: ignore[misc]
    with pytest.raises(TypeError):
        made.files["tests/data/sample.yaml"].cases["stride1"].metrics["x"] = 1.0  # type: ignore[index]


def test_a_baseline_keeps_which_nvcc_compiled_and_a_comparison_says_when_it_differs(results, tmp_path):
    (result,) = results
    assert "compiled_with" not in json.loads(baseline.snapshot(results).json_text())  # NVRTC's: as it was

    def compiled_by(which: str):
        return [replace(result, provenance=replace(result.provenance, nvcc={"sample.yaml::k": which}))]

    old, new = compiled_by("nvcc 12.4.131 at /usr/local/cuda-12.4"), compiled_by("nvcc 13.0.88 at /opt/cuda")
    path = tmp_path / "main.json"
    baseline.save(old, path)
    saved = baseline.load(path)
    assert saved.compiled_with == "nvcc 12.4.131 at /usr/local/cuda-12.4"
    assert "nvcc 12.4.131 at /usr/local/cuda-12.4" in (saved.measured_on or "")
    assert baseline.toolkit_note(saved, old) is None
    assert baseline.toolkit_note(saved, new) == (
        "the baseline's kernels were compiled with nvcc 12.4.131 at /usr/local/cuda-12.4, this run's with"
        " nvcc 13.0.88 at /opt/cuda: registers, spills and timings may differ between nvcc releases and toolkits"
    )
    assert baseline.toolkit_note(baseline.snapshot(results), new) is None  # unknown before: nothing said
