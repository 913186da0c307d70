"""One file's failure stays that file's, and each output is written on its own."""

from pathlib import Path

import pytest
from cli_invoke import invoke, traceback_file
from conftest import COMPILE_CACHE, DATA, NO_GPU

from ncuverify import pipeline
from ncuverify.errors import ExitCode
from ncuverify.options import CheckOptions
from ncuverify.profile import per_file
from ncuverify.results import FileResult, Verdict, exit_code, worst
from ncuverify.stages import prepare

# --- one file's failure stays that file's ------------------------------------------------------------------

THREE = (DATA / "static.yaml", DATA / "sample.yaml", DATA / "shared.yaml")


@pytest.fixture
def second_file_crashes(monkeypatch):
    """prepare.prepare_file raises, as a bug would, on sample.yaml only."""
    real_prepare = prepare.prepare_file

    def crashing_on_sample(path, key, options, environment):
        if path.name == "sample.yaml":
            raise RuntimeError("injected fault \x1b]0;title\x07")
        return real_prepare(path, key, options, environment)

    monkeypatch.setattr(prepare, "prepare_file", crashing_on_sample)


def test_one_crashing_file_leaves_the_others_judged_and_every_output_written(
    no_gpu, second_file_crashes, tmp_path
):
    import json
    import xml.etree.ElementTree as ElementTree

    out = {name: tmp_path / name for name in ("r.json", "r.xml", "r.md")}
    result = invoke(
        "--static-only",
        "--json",
        str(out["r.json"]),
        "--junit-xml",
        str(out["r.xml"]),
        "--markdown",
        str(out["r.md"]),
        *map(str, THREE),
    )
    assert result.exit_code == ExitCode.INTERNAL_ERROR
    crashed = next(line for line in result.stdout.splitlines() if "internal error" in line)
    assert crashed.startswith(
        f"{DATA / 'sample.yaml'}: internal error: RuntimeError: injected fault \\x1b]0;title\\x07, please report it with "
    )
    assert "RuntimeError: injected fault" in traceback_file(crashed).read_text()
    assert "static.yaml: 6 passed" in result.stdout
    assert "shared.yaml:" in result.stdout and "1 file with internal errors" in result.stdout
    assert "Traceback" not in result.stdout + result.stderr
    document = json.loads(out["r.json"].read_text())
    assert [Path(f["path"]).name for f in document["files"]] == [p.name for p in THREE]
    assert document["exit_code"] == ExitCode.INTERNAL_ERROR
    assert document["files"][0]["counts"]["passed"] == 6
    suites = ElementTree.fromstring(out["r.xml"].read_text()).findall("testsuite")
    assert [Path(s.get("name")).name for s in suites] == [p.name for p in THREE]
    markdown = out["r.md"].read_text()
    assert all(path.name in markdown for path in THREE) and "injected fault" in markdown


def test_an_output_that_cannot_be_made_loses_none_of_the_others(no_gpu, monkeypatch, tmp_path):
    from ncuverify import export

    def broken(results):
        raise ValueError("junit broke")

    monkeypatch.setattr(export, "to_junit", broken)
    json_file, junit, markdown = tmp_path / "r.json", tmp_path / "r.xml", tmp_path / "r.md"
    result = invoke(
        "--static-only",
        "--json",
        str(json_file),
        "--junit-xml",
        str(junit),
        "--markdown",
        str(markdown),
        str(DATA / "static.yaml"),
    )
    assert result.exit_code == ExitCode.INTERNAL_ERROR
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("--junit-xml: internal error: ValueError: junit broke, please report it with ")
    assert json_file.is_file() and markdown.is_file() and not junit.exists()
    assert "static.yaml: 6 passed" in result.stdout


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full to stand for a full disk")
def test_a_write_that_fails_is_one_line_exit_2_and_the_rest_is_written(no_gpu, tmp_path):
    junit = tmp_path / "r.xml"
    result = invoke(
        "--static-only", "--json", "/dev/full", "--junit-xml", str(junit), str(DATA / "static.yaml")
    )
    assert result.exit_code == ExitCode.BAD_INPUT
    assert "--json: /dev/full: cannot write it (No space left on device)" in result.stdout
    assert junit.is_file() and "static.yaml: 6 passed" in result.stdout


def test_the_outputs_are_written_though_the_report_cannot_be_shown(no_gpu, monkeypatch, tmp_path):
    from ncuverify import report

    real_table = report.claims_table

    def broken_on_static(result):
        if result.path.name == "static.yaml":
            raise IndexError("cannot render")
        return real_table(result)

    monkeypatch.setattr(report.files, "claims_table", broken_on_static)
    out = tmp_path / "r.json"
    result = invoke(
        "--static-only", "-v", "--json", str(out), str(DATA / "static.yaml"), str(DATA / "shared.yaml")
    )
    assert result.exit_code == ExitCode.INTERNAL_ERROR
    assert out.is_file()
    line = next(line for line in result.stdout.splitlines() if "internal error" in line)
    assert line.startswith(
        f"{DATA / 'static.yaml'}: internal error: IndexError: cannot render, please report it"
    )
    assert "shared.yaml:" in result.stdout  # the next file is still shown


def test_exit_codes_win_in_the_order_4_2_1_3():
    from ncuverify.results import ClaimResult, Verdict
    from ncuverify.spec import Claim, Expectation

    claim = Claim(
        id="c",
        case="a",
        metric="m.sum",
        expect=Expectation(equals=1),
        cite={"document": "d", "section": "1", "figure": "f"},
    )
    internal = FileResult(Path("a.yaml"), [], internal_error="internal error: x")
    bad = FileResult(Path("b.yaml"), [], input_error="b.yaml: wrong")
    failed = FileResult(Path("c.yaml"), [ClaimResult(claim, Verdict.FAILED, 2.0)])
    skipped = FileResult(Path("d.yaml"), [ClaimResult(claim, Verdict.SKIPPED)])
    assert exit_code([skipped, failed, bad, internal]) == ExitCode.INTERNAL_ERROR
    assert exit_code([skipped, failed, bad]) == ExitCode.BAD_INPUT
    assert exit_code([skipped, failed]) == ExitCode.CLAIM_FAILED
    assert exit_code([skipped]) == ExitCode.NOT_MEASURABLE
    assert worst(ExitCode.NOT_MEASURABLE, ExitCode.INTERNAL_ERROR, ExitCode.BAD_INPUT) == 4
    assert worst() == ExitCode.OK


def test_a_crash_while_profiling_is_every_profiled_files_and_keeps_the_static_verdicts(monkeypatch, tmp_path):
    """Replaying a recording: splitting one file's measurements out fails; the other file is judged."""
    from conftest import FIXTURES

    real_split = per_file.measurements_by_file

    def crashing_on_sample(runs, keys, symbols):
        if "tests/data/sample.yaml" in keys:
            raise ZeroDivisionError("split broke")
        return real_split(runs, keys, symbols)

    monkeypatch.setattr(per_file, "measurements_by_file", crashing_on_sample)
    options = CheckOptions(cache=COMPILE_CACHE, from_profile=FIXTURES)
    static, sample = pipeline.check_files([DATA / "static.yaml", DATA / "sample.yaml"], options, NO_GPU)
    assert sample.internal_error.startswith(
        "internal error: ZeroDivisionError: split broke, please report it"
    )
    assert sample.claims and {r.verdict for r in sample.claims} == {Verdict.SKIPPED}
    assert static.internal_error is None and static.count(Verdict.PASSED) == 7
    assert exit_code([static, sample]) == ExitCode.INTERNAL_ERROR


def test_the_builds_warnings_are_the_files(no_gpu, monkeypatch):
    from dataclasses import dataclass

    real_build = prepare.build_spec

    @dataclass(frozen=True)
    class Warned:
        built: object
        warnings: tuple[str, ...] = ("cache entry x was damaged; rebuilt",)

        def __getattr__(self, name):
            return getattr(self.built, name)

    def warned(spec, arch, cache, limits):
        return {name: Warned(build) for name, build in real_build(spec, arch, cache, limits).items()}

    monkeypatch.setattr(prepare, "build_spec", warned)
    result = pipeline.check_file(DATA / "static.yaml", CheckOptions(cache=COMPILE_CACHE, static_only=True))
    assert result.warnings == ["cache entry x was damaged; rebuilt"]  # once, though three kernels share it
