import json
from pathlib import Path

import pytest
from conftest import DATA, FIXTURES
from typer.testing import CliRunner

from ncuverify import baseline
from ncuverify.cli import app
from ncuverify.errors import ExitCode, InputError
from ncuverify.pipeline import CheckOptions, Environment, check_file
from ncuverify.spec import Tolerance

NO_GPU = Environment(gpu=None, ncu=None, problem="no NVIDIA GPU: test")


@pytest.fixture(scope="module")
def results():
    return [check_file(DATA / "sample.yaml", CheckOptions(from_profile=FIXTURES), NO_GPU)]


def test_a_run_compared_with_itself_has_no_changes(results):
    assert baseline.compare(baseline.snapshot(results), results, {}) == []


def test_synthetic_regressions_and_improvements(results):
    before = baseline.snapshot(results)
    cases = before["files"]["sample"]
    now_time = cases["stride1"]["gpu__time_duration.sum"]
    cases["stride1"]["gpu__time_duration.sum"] = now_time / 1.5  # main was faster: now 50% slower
    cases["stride32"]["gpu__time_duration.sum"] *= 2  # main was slower: now twice as fast
    cases["scale_2d"]["static__registers_per_thread"] -= 8  # main used 8 registers fewer
    cases["misaligned"]["gpu__time_duration.sum"] *= 0.95  # within 10%: no change reported
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


def test_tolerances_from_the_file_and_the_command_line(tmp_path):
    result = check_file(DATA / "regression.yaml", CheckOptions(static_only=True), NO_GPU)
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
    data["files"]["sample"]["stride1"]["gpu__time_duration.sum"] /= 2
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
    assert "not a baseline" in result.stdout
