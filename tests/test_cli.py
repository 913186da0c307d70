"""The command line, without a GPU: the environment is fixed so these run the same on any machine."""

import os
import re
from pathlib import Path

import pytest
from conftest import DATA
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from ncuverify import pipeline
from ncuverify.build import BuildLimits
from ncuverify.cli import app
from ncuverify.errors import ExitCode, InputError
from ncuverify.results import FileResult, exit_code, worst

NO_GPU = pipeline.Environment(
    gpu=None, ncu=None, problem="no NVIDIA GPU: the CUDA driver library (libcuda) cannot be loaded"
)


@pytest.fixture
def no_gpu(monkeypatch):
    monkeypatch.setattr(pipeline.Environment, "probe", classmethod(lambda cls, ncu: NO_GPU))


def invoke(*args: str):
    return CliRunner().invoke(app, ["check", *args])


def test_without_a_gpu_exits_3_with_one_line(no_gpu):
    result = invoke(str(DATA / "sample.yaml"))
    assert result.exit_code == ExitCode.NOT_MEASURABLE
    lines = result.stdout.strip().splitlines()
    assert lines == [f"{DATA / 'sample.yaml'}: 8 claims not measured: {NO_GPU.problem}"]
    assert "Traceback" not in result.stdout


def test_without_a_gpu_verbose_shows_the_table(no_gpu):
    result = invoke("--verbose", str(DATA / "sample.yaml"))
    assert result.exit_code == ExitCode.NOT_MEASURABLE
    assert "stride32_sector_ratio" in result.stdout and "skipped" in result.stdout
    assert "wrong: says 32" in result.stdout


def test_bad_input_exits_2_and_keeps_the_other_files(no_gpu, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        (DATA / "sample.yaml").read_text().replace("    case: stride32\n", "    case: strde32\n", 1)
    )
    result = invoke(str(bad), str(DATA / "sample.yaml"))
    assert result.exit_code == ExitCode.BAD_INPUT
    assert f"{bad}: input error" in result.stdout
    assert "claims[1].case: no case named 'strde32' (did you mean 'stride32'?)" in result.stdout
    assert f"{DATA / 'sample.yaml'}: 8 claims not measured" in result.stdout
    assert "Traceback" not in result.stdout


def test_compile_error_exits_2_with_the_nvrtc_log(no_gpu, tmp_path):
    broken = tmp_path / "broken.yaml"
    broken.write_text((DATA / "launch_failure.yaml").read_text().replace("= 1.0f;", "= 1.0f"))
    result = invoke(str(broken))
    assert result.exit_code == ExitCode.BAD_INPUT
    assert "does not compile for sm_90" in result.stdout and 'expected a ";"' in result.stdout


def test_missing_file_exits_2(no_gpu, tmp_path):
    result = invoke(str(tmp_path / "absent.yaml"))
    assert result.exit_code == ExitCode.BAD_INPUT
    assert "no such expectation file" in result.stdout


def test_bad_option_exits_2(no_gpu):
    result = invoke("--clock-control", "fast", str(DATA / "sample.yaml"))
    assert result.exit_code == ExitCode.BAD_INPUT


def test_no_arch_and_no_gpu_is_said(no_gpu, tmp_path):
    unpinned = tmp_path / "unpinned.yaml"
    unpinned.write_text((DATA / "sample.yaml").read_text().replace("arch: sm_90\n", ""))
    result = invoke(str(unpinned))
    assert result.exit_code == ExitCode.NOT_MEASURABLE
    assert NO_GPU.problem in result.stdout


def test_arch_option_builds_without_a_gpu(no_gpu, tmp_path):
    broken = tmp_path / "broken.yaml"
    broken.write_text(
        (DATA / "launch_failure.yaml").read_text().replace("arch: sm_90\n", "").replace("= 1.0f;", "= 1.0f")
    )
    # Without a target nothing is built; with --arch the compile error is found.
    assert invoke(str(broken)).exit_code == ExitCode.NOT_MEASURABLE
    assert invoke("--arch", "sm_90", str(broken)).exit_code == ExitCode.BAD_INPUT


def test_ctrl_c_keeps_what_finished_and_marks_the_rest(no_gpu, monkeypatch, tmp_path):
    import json

    real_prepare = pipeline._prepare

    def interrupted_on_the_second_file(path, key, options, environment):
        if path.name == "sample.yaml":  # files are built side by side: name the one Ctrl-C stops
            raise KeyboardInterrupt
        return real_prepare(path, key, options, environment)

    monkeypatch.setattr(pipeline, "_prepare", interrupted_on_the_second_file)
    out = tmp_path / "results.json"
    result = invoke(
        "--static-only",
        "--json",
        str(out),
        str(DATA / "static.yaml"),
        str(DATA / "sample.yaml"),
        str(DATA / "shared.yaml"),
    )
    assert result.exit_code == ExitCode.NOT_MEASURABLE
    assert "static.yaml: 6 passed" in result.stdout
    assert (
        f"{DATA / 'sample.yaml'}: not run: the run was interrupted before this file was checked"
        in result.stdout
    )
    document = json.loads(out.read_text())
    assert [f["not_run"] is not None for f in document["files"]] == [False, True, True]
    assert document["files"][0]["counts"]["passed"] == 6


def test_an_old_ncu_is_refused(tmp_path):
    from ncuverify.environment import find_ncu
    from ncuverify.errors import EnvironmentProblem

    fake = tmp_path / "ncu"
    fake.write_text(
        "#!/bin/sh\necho 'NVIDIA (R) Nsight Compute Command Line Profiler'\necho 'Version 2021.2.0.0 (build 1)'\n"
    )
    fake.chmod(0o755)
    with pytest.raises(
        EnvironmentProblem,
        match=re.escape("ncu 2021.2.0.0 is too old: ncuverify needs Nsight Compute 2022.1 or newer"),
    ):
        find_ncu(str(fake))
    fake.write_text("#!/bin/sh\necho 'Version 2025.3.1.0 (build 36398880) (public-release)'\n")
    assert find_ncu(str(fake)) == str(fake)


def test_no_ncu_is_said(tmp_path):
    from ncuverify.environment import find_ncu
    from ncuverify.errors import EnvironmentProblem

    with pytest.raises(
        EnvironmentProblem,
        match=re.escape("ncu is not on the PATH (looked for 'no-such-ncu'): install it or pass --ncu PATH"),
    ):
        find_ncu("no-such-ncu")


def test_lint_passes_sound_files_and_names_what_is_wrong(no_gpu, tmp_path):
    sound = invoke_command("lint", str(DATA / "sample.yaml"), str(DATA / "static.yaml"))
    assert sound.exit_code == ExitCode.OK
    assert "sample.yaml: sound (3 kernels built)" in sound.stdout
    typo = tmp_path / "typo.yaml"
    typo.write_text(
        (DATA / "sample.yaml")
        .read_text()
        .replace(
            "metric: l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum\n",
            "metric: l1tex__t_request_pipe_lsu_mem_global_op_ld.sum\n",
        )
    )
    broken = tmp_path / "broken.yaml"
    broken.write_text((DATA / "launch_failure.yaml").read_text().replace("= 1.0f;", "= 1.0f"))
    result = invoke_command("lint", str(typo), str(broken), str(DATA / "sample.yaml"))
    assert result.exit_code == ExitCode.BAD_INPUT
    assert "ncu knows no metric l1tex__t_request_pipe_lsu_mem_global_op_ld.sum on sm_90" in result.stdout
    assert "does not compile for sm_90" in result.stdout
    assert "sample.yaml: sound" in result.stdout


def test_metric_names_of_unlisted_chips_are_left_to_ncu():
    from ncuverify.metrics import unknown

    assert unknown({"l1tex__t_request.sum"}, "sm_80") == {}  # no list shipped, no ncu to ask
    assert unknown({"l1tex__t_request.sum"}, "sm_90") == {"l1tex__t_request.sum": "l1tex__t_requests.sum"}


def invoke_command(*args: str):
    return CliRunner().invoke(app, list(args))


def test_the_pipeline_says_what_it_is_doing(no_gpu):
    lines: list[str] = []
    options = pipeline.CheckOptions(static_only=True, on_progress=lines.append)
    pipeline.check_files([DATA / "static.yaml"], options)
    assert lines == ["static.yaml: reading", "static.yaml: compiling"]


@pytest.mark.parametrize(
    ("gpus", "message"),
    [("0,x", "write all, or distinct GPU indices"), ("1,1", "write all, or distinct GPU indices")],
)
def test_a_wrong_gpu_list_is_refused_with_exit_2(gpus, message):
    result = invoke("--gpus", gpus, str(DATA / "sample.yaml"))
    assert result.exit_code == ExitCode.BAD_INPUT
    assert message in result.output


def test_a_gpu_the_machine_lacks_is_an_input_error(monkeypatch):
    from ncuverify.environment import Gpu

    machine = pipeline.Environment(Gpu(0, "One GPU", "sm_90", "13.0"), "ncu", None, gpu_count=1)
    monkeypatch.setattr(pipeline.Environment, "probe", classmethod(lambda cls, ncu: machine))
    result = invoke("--gpus", "0,1", str(DATA / "sample.yaml"))
    assert result.exit_code == ExitCode.BAD_INPUT
    assert "--gpus: no GPU 1 here (the driver reports 1)" in result.output


def test_ncu_reports_need_a_folder_to_go_to():
    result = invoke("--ncu-report", str(DATA / "sample.yaml"))
    assert result.exit_code == ExitCode.BAD_INPUT
    assert "--save-profile" in result.output


# --- no traceback, ever ---------------------------------------------------------------------------------

TRACEBACK_FILE = re.compile(r"please report it with (/\S+ncuverify-internal-\S+\.txt)$")


def traceback_file(line: str) -> Path:
    """The file an internal-error line names; it exists and holds the traceback."""
    found = TRACEBACK_FILE.search(line)
    assert found, line
    path = Path(found[1])
    assert path.is_file()
    return path


def test_a_bug_is_one_line_naming_its_traceback_and_exit_4(monkeypatch):
    def broken(cls, ncu):
        raise ValueError("probe broke on \x1b[2J [bold red]x")

    monkeypatch.setattr(pipeline.Environment, "probe", classmethod(broken))
    result = invoke("--static-only", str(DATA / "static.yaml"))
    assert result.exit_code == ExitCode.INTERNAL_ERROR
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(
        "ncuverify: internal error: ValueError: probe broke on \\x1b[2J [bold red]x, please report it with "
    )
    saved = traceback_file(line).read_text()
    assert "Traceback (most recent call last)" in saved and "in broken" in saved
    assert "ValueError: probe broke on \\x1b[2J [bold red]x" in saved
    assert "Traceback" not in result.stdout and "\x1b" not in result.stdout + result.stderr


def test_main_turns_what_escapes_the_commands_into_one_line(monkeypatch, capsys):
    from ncuverify import cli

    def broken() -> None:
        raise KeyError("outside any command")

    monkeypatch.setattr(cli, "app", broken)
    with pytest.raises(SystemExit) as exited:
        cli.main()
    assert exited.value.code == ExitCode.INTERNAL_ERROR
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(
        "ncuverify: internal error: KeyError: 'outside any command', please report it with"
    )
    assert "KeyError: 'outside any command'" in traceback_file(line).read_text()


def test_the_command_prints_no_traceback_of_its_own(tmp_path):
    """The installed command (typer's pretty tracebacks, which show local variables, are off)."""
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from ncuverify import pipeline\n"
        "def broken(cls, ncu):\n"
        "    secret = 'hunter2'\n"
        "    raise RuntimeError('injected')\n"
        "pipeline.Environment.probe = classmethod(broken)\n"
        "from ncuverify.cli import main\n"
        "sys.argv = ['ncuverify', 'check', '--static-only', sys.argv[1]]\n"
        "main()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(DATA / "static.yaml")], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == ExitCode.INTERNAL_ERROR
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("ncuverify: internal error: RuntimeError: injected, please report it with ")
    assert "hunter2" not in done.stdout + done.stderr  # no local variables shown
    assert "RuntimeError: injected" in traceback_file(line).read_text()


def test_ctrl_c_outside_the_run_exits_3(monkeypatch):
    def interrupted(cls, ncu):
        raise KeyboardInterrupt

    monkeypatch.setattr(pipeline.Environment, "probe", classmethod(interrupted))
    result = invoke_command("lint", str(DATA / "static.yaml"))
    assert result.exit_code == ExitCode.NOT_MEASURABLE
    assert result.stderr.strip() == "interrupted"


# --- one file's failure stays that file's ------------------------------------------------------------------

THREE = (DATA / "static.yaml", DATA / "sample.yaml", DATA / "shared.yaml")


@pytest.fixture
def second_file_crashes(monkeypatch):
    """pipeline._prepare raises, as a bug would, on sample.yaml only."""
    real_prepare = pipeline._prepare

    def crashing_on_sample(path, key, options, environment):
        if path.name == "sample.yaml":
            raise RuntimeError("injected fault \x1b]0;title\x07")
        return real_prepare(path, key, options, environment)

    monkeypatch.setattr(pipeline, "_prepare", crashing_on_sample)


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

    def broken_on_static(result, verbose):
        if result.path.name == "static.yaml":
            raise IndexError("cannot render")
        return real_table(result, verbose)

    monkeypatch.setattr(report, "claims_table", broken_on_static)
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

    from ncuverify.profile import per_file

    real_split = per_file.measurements_by_file

    def crashing_on_sample(runs, keys, symbols):
        if "tests/data/sample.yaml" in keys:
            raise ZeroDivisionError("split broke")
        return real_split(runs, keys, symbols)

    monkeypatch.setattr(per_file, "measurements_by_file", crashing_on_sample)
    options = pipeline.CheckOptions(from_profile=FIXTURES)
    environment = pipeline.Environment(None, None, "no GPU")
    static, sample = pipeline.check_files([DATA / "static.yaml", DATA / "sample.yaml"], options, environment)
    assert sample.internal_error.startswith(
        "internal error: ZeroDivisionError: split broke, please report it"
    )
    assert sample.claims and {r.verdict for r in sample.claims} == {pipeline.Verdict.SKIPPED}
    assert static.internal_error is None and static.count(pipeline.Verdict.PASSED) == 7
    assert exit_code([static, sample]) == ExitCode.INTERNAL_ERROR


def test_the_builds_warnings_are_the_files(no_gpu, monkeypatch):
    from dataclasses import dataclass

    real_build = pipeline.build_spec

    @dataclass(frozen=True)
    class Warned:
        built: object
        warnings: tuple[str, ...] = ("cache entry x was damaged; rebuilt",)

        def __getattr__(self, name):
            return getattr(self.built, name)

    def warned(spec, arch, cache, limits):
        return {name: Warned(build) for name, build in real_build(spec, arch, cache, limits).items()}

    monkeypatch.setattr(pipeline, "build_spec", warned)
    result = pipeline.check_file(DATA / "static.yaml", pipeline.CheckOptions(static_only=True))
    assert result.warnings == ["cache entry x was damaged; rebuilt"]  # once, though three kernels share it


# --- output paths and folders are checked before anything runs ----------------------------------------------


@pytest.fixture
def nothing_runs(monkeypatch):
    """Fails the test if anything is compiled or checked."""
    ran: list[str] = []
    monkeypatch.setattr(pipeline, "build_spec", lambda *args: ran.append("build_spec"))
    monkeypatch.setattr(pipeline, "check_files", lambda *args: ran.append("check_files"))
    yield ran
    assert ran == []


def bad_outputs(tmp_path: Path) -> list[tuple[list[str], str]]:
    folder = tmp_path / "out"
    folder.mkdir()
    a_file = tmp_path / "plain.txt"
    a_file.write_text("")
    sample = str(DATA / "sample.yaml")
    return [
        (["--json", "/nonexistent/x.json"], "--json: /nonexistent/x.json: no such folder /nonexistent"),
        (["--json", str(folder)], f"--json: {folder}: is a folder"),
        (["--junit-xml", f"{a_file}/x.xml"], f"--junit-xml: {a_file}/x.xml: {a_file} is not a folder"),
        (["--markdown", sample], f"--markdown: {sample}: is an input of this run; refusing to overwrite it"),
        (
            ["--json", str(tmp_path / "r"), "--markdown", str(tmp_path / "r")],
            f"--markdown: {tmp_path / 'r'}: is also the output of --json",
        ),
        (["--save-profile", sample], f"--save-profile: {sample}: is not a folder"),
        (
            ["--save-profile", f"{a_file}/profile"],
            f"--save-profile: {a_file}/profile: cannot make it: {a_file} is not a folder",
        ),
        (["--from-profile", str(tmp_path / "none")], f"--from-profile: {tmp_path / 'none'}: no such folder"),
        (
            ["--allow-include", str(tmp_path / "none")],
            f"--allow-include: {tmp_path / 'none'}: no such folder",
        ),
        (["--allow-include", str(a_file)], f"--allow-include: {a_file}: is not a folder"),
    ]


def test_each_bad_output_path_exits_2_before_anything_is_compiled(no_gpu, nothing_runs, tmp_path):
    for options, message in bad_outputs(tmp_path):
        result = invoke(*options, str(DATA / "sample.yaml"))
        assert (result.exit_code, result.stdout.strip()) == (ExitCode.BAD_INPUT, message), options


def test_a_baseline_given_as_an_output_is_refused(no_gpu, nothing_runs, tmp_path):
    base = tmp_path / "base.json"
    base.write_text('{"files": {}}')
    result = invoke("--baseline", str(base), "--json", str(base), str(DATA / "sample.yaml"))
    assert result.exit_code == ExitCode.BAD_INPUT
    assert result.stdout.strip() == f"--json: {base}: is an input of this run; refusing to overwrite it"


def test_an_unwritable_output_is_refused(no_gpu, nothing_runs, monkeypatch, tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "old.json").write_text("")
    real_access = os.access

    def access(path, mode) -> bool:
        # As chmod 0o500 makes the folder for any user but root, whom it does not stop.
        inside = Path(path) == locked or locked in Path(path).parents
        return real_access(path, mode) and not (inside and mode & os.W_OK)

    monkeypatch.setattr(os, "access", access)
    for output, message in [
        (locked / "r.json", f"--json: {locked / 'r.json'}: cannot write in {locked}"),
        (locked / "old.json", f"--json: {locked / 'old.json'}: is not writable"),
    ]:
        result = invoke("--json", str(output), str(DATA / "sample.yaml"))
        assert (result.exit_code, result.stdout.strip()) == (ExitCode.BAD_INPUT, message), result.output


def test_the_other_commands_check_their_outputs_first(no_gpu, nothing_runs, tmp_path):
    sample = str(DATA / "sample.yaml")
    cases = [
        (
            ["baseline", "save", "/nonexistent/b.json", sample],
            "/nonexistent/b.json: no such folder /nonexistent",
        ),
        (
            ["baseline", "save", sample, sample],
            f"{sample}: is an input of this run; refusing to overwrite it",
        ),
        (["audit", "--markdown", str(tmp_path), sample], f"--markdown: {tmp_path}: is a folder"),
        (["audit", "--from-profile", sample, sample], f"--from-profile: {sample}: is not a folder"),
        (["schema", "/nonexistent/s.json"], "/nonexistent/s.json: no such folder /nonexistent"),
        (
            ["merge", sample, "--json", sample],
            f"--json: {sample}: is an input of this run; refusing to overwrite it",
        ),
    ]
    for args, message in cases:
        result = invoke_command(*args)
        assert (result.exit_code, result.stdout.strip()) == (ExitCode.BAD_INPUT, message), args


# --- paths --------------------------------------------------------------------------------------------------


def test_a_folder_without_expectation_files_is_an_input_error_everywhere(no_gpu, nothing_runs, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "notes.txt").write_text("")
    message = f"{empty}/: no expectation files (*.yaml, *.yml) in this folder"
    for command in (
        ["check"],
        ["lint"],
        ["build"],
        ["audit"],
        ["baseline", "save", str(tmp_path / "b.json")],
    ):
        result = invoke_command(*command, str(empty))
        assert (result.exit_code, result.stdout.strip()) == (ExitCode.BAD_INPUT, message), command


def test_a_path_that_does_not_exist_stops_the_run_before_it_starts(no_gpu, nothing_runs, tmp_path):
    result = invoke(str(DATA / "sample.yaml"), str(tmp_path / "absent.yaml"), str(tmp_path / "gone"))
    assert result.exit_code == ExitCode.BAD_INPUT
    assert result.stdout.strip().splitlines() == [
        f"{tmp_path / 'absent.yaml'}: no such expectation file or folder",
        f"{tmp_path / 'gone'}: no such expectation file or folder",
    ]


# --- option values ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--case-timeout", "nan"], "nan: give a number of seconds above 0 and at most 604800"),
        (["--case-timeout", "inf"], "inf: give a number of seconds above 0 and at most 604800"),
        (["--case-timeout", "0"], "0.0: give a number of seconds above 0"),
        (["--case-timeout", "-5"], "-5.0: give a number of seconds above 0"),
        (["--compile-timeout", "1e400"], "inf: give a number of seconds above 0"),
        (["--shard", "1/99999999999"], "write K/N with 1 <= K <= N <= 10000"),
        (["--shard", "²/3"], "write K/N with 1 <= K <= N <= 10000"),
        (["--shard", "/"], "write K/N with 1 <= K <= N <= 10000"),
        (["--gpus", "0,,1"], "write all, or distinct GPU indices"),
        (["--gpus", "99999999999999999999"], "write all, or distinct GPU indices"),
        (["--gpus", "١"], "write all, or distinct GPU indices"),
        (["--arch", "sm_90 --pre-include=/etc/passwd"], "write a build target such as sm_90"),
    ],
)
def test_hostile_option_values_exit_2_with_one_message(no_gpu, nothing_runs, args, message):
    result = invoke(*args, str(DATA / "sample.yaml"))
    assert result.exit_code == ExitCode.BAD_INPUT
    assert message in " ".join(result.output.replace("│", " ").split())
    assert "Traceback" not in result.output


@pytest.mark.parametrize("amount", ["rel:nan", "rel:inf", "abs:1e999", "abs:-inf"])
def test_a_tolerance_must_be_finite(no_gpu, nothing_runs, amount):
    result = invoke("--tolerance", f"gpu__time_duration.sum={amount}", str(DATA / "sample.yaml"))
    assert result.exit_code == ExitCode.BAD_INPUT
    assert (
        f"--tolerance 'gpu__time_duration.sum={amount}': " in result.stdout
        or "write NAME=rel:FRACTION" in result.stdout
    )


def test_allowed_include_folders_and_the_compile_limit_reach_the_build(no_gpu, monkeypatch, tmp_path):
    seen = []
    monkeypatch.setattr(pipeline, "check_files", lambda paths, options: seen.append(options.build) or [])
    (tmp_path / "headers").mkdir()
    result = invoke(
        "--allow-include",
        str(tmp_path / "headers"),
        "--allow-include",
        str(tmp_path / "headers" / ".." / "headers"),
        "--compile-timeout",
        "30",
        str(DATA / "sample.yaml"),
    )
    assert result.exit_code == ExitCode.OK, result.output
    assert seen == [BuildLimits(allowed_roots=((tmp_path / "headers").resolve(),), timeout_s=30.0)]
    assert (
        invoke_command("lint", "--allow-include", str(tmp_path / "no"), str(DATA / "sample.yaml")).exit_code
        == 2
    )


def test_a_cache_folder_that_is_not_ours_is_refused_in_one_line(monkeypatch):
    from ncuverify.cache import CompileCache

    def refuse(self):
        raise InputError(
            f"{self.folder}: not an ncuverify cache folder (no CACHEDIR.TAG written by ncuverify)"
        )

    monkeypatch.setattr(CompileCache, "clean", refuse)
    result = invoke_command("cache", "clean")
    assert result.exit_code == ExitCode.BAD_INPUT
    assert result.stdout.strip().endswith(
        ": not an ncuverify cache folder (no CACHEDIR.TAG written by ncuverify)"
    )


# --- untrusted text as text ---------------------------------------------------------------------------------


def test_markup_and_escape_sequences_from_a_file_show_literally(no_gpu, tmp_path):
    named = tmp_path / "\x1b[2J[bold]x.yaml"
    named.write_text((DATA / "hostile_text.yaml").read_text())
    result = invoke("--static-only", "-v", str(named))
    assert result.exit_code == ExitCode.CLAIM_FAILED
    text = result.stdout
    assert "\x1b" not in text and "\u202e" not in text
    for shown in (
        "\\x1b[2J[bold]x.yaml",
        "a[i].txt §[bold red]x[/]",
        "\\x1b[2Jcleared",
        "[link=https://example.com/x]",  # the cell folds the rest onto the next line
        "note no_stack: \\x1b]0;owned\\x07 retitled, \\u202eevil",
        "[blink]doc[/blink]",
        "a[i] :smile:",
        "note no_spills: [bold red]forged[/] verdict \\x1b[31mred",
    ):
        assert shown in text, shown


def test_the_progress_line_shows_file_names_as_text(monkeypatch, tmp_path):
    from ncuverify import cli

    descriptions = []

    class Recorded(cli.Progress):
        def update(self, task, **fields):
            descriptions.append(fields.get("description"))

    named = tmp_path / "\x1b[2J[bold]x.yaml"
    named.write_text((DATA / "hostile_text.yaml").read_text())
    monkeypatch.setattr(cli, "Progress", Recorded)
    monkeypatch.setattr(cli, "_console", lambda: cli.Console(force_terminal=True, width=160))
    monkeypatch.setattr(pipeline.Environment, "probe", classmethod(lambda cls, ncu: NO_GPU))
    cli._check_files([named], pipeline.CheckOptions(static_only=True))
    assert descriptions == ["\\x1b[2J[bold]x.yaml: reading", "\\x1b[2J[bold]x.yaml: compiling"]


# --- merge and the run's identity ---------------------------------------------------------------------------


def shard_of_sample(tmp_path: Path, k: int, n: int) -> Path:
    from conftest import FIXTURES

    part = tmp_path / f"shard{k}.json"
    result = invoke(
        "--from-profile", str(FIXTURES), "--shard", f"{k}/{n}", "--json", str(part), str(DATA / "sample.yaml")
    )
    assert result.exit_code == ExitCode.OK, result.output
    return part


def test_an_incomplete_set_of_shards_is_refused_unless_partial(tmp_path):
    import json

    from ncuverify import export

    part = shard_of_sample(tmp_path, 1, 2)
    refused = invoke_command("merge", str(part))
    assert (refused.exit_code, refused.stdout.strip()) == (
        ExitCode.BAD_INPUT,
        f"merge: shard 2/2 missing: {part} is 1 of 2 shards of the run (merge --partial merges them anyway)",
    )
    out = tmp_path / "merged.json"
    partial = invoke_command("merge", "--partial", str(part), "--json", str(out))
    assert partial.exit_code == ExitCode.OK
    assert partial.stdout.startswith(
        "warning: merge: shard 2/2 missing: the results are those of 1 of 2 shards of the run\n"
    )
    # The partial merge says what it lacks, so that it never passes for a whole run later.
    assert json.loads(out.read_text())["run"]["missing"] == ["2/2"]
    again = invoke_command("merge", str(out))
    assert (again.exit_code, again.stdout.strip()) == (
        ExitCode.BAD_INPUT,
        f"{out}: a partial merge, without shard 2/2 (merge --partial merges it anyway)",
    )
    whole = invoke_command("merge", str(part), str(shard_of_sample(tmp_path, 2, 2)), "--json", str(out))
    assert whole.exit_code == ExitCode.OK and "warning" not in whole.stdout
    suite = export.suite_digest([DATA / "sample.yaml"])
    assert json.loads(out.read_text())["run"] == {"suite": suite, "shard": [1, 1]}


def test_check_says_which_share_of_which_suite_it_ran(no_gpu, tmp_path):
    import json

    from ncuverify import export

    out = tmp_path / "r.json"
    invoke("--static-only", "--shard", "2/3", "--json", str(out), str(DATA / "static.yaml"))
    suite = export.suite_digest([DATA / "static.yaml"])
    assert json.loads(out.read_text())["run"] == {"suite": suite, "shard": [2, 3]}
    invoke("--static-only", "--json", str(out), str(DATA / "static.yaml"), str(DATA / "shared.yaml"))
    suite = export.suite_digest([DATA / "static.yaml", DATA / "shared.yaml"])
    assert json.loads(out.read_text())["run"] == {"suite": suite, "shard": [1, 1]}


def test_a_damaged_shard_is_one_line_exit_2(tmp_path):
    import json

    part = shard_of_sample(tmp_path, 1, 1)
    document = json.loads(part.read_text())
    document["files"][0]["claims"][0]["verdict"] = "pased"
    part.write_text(json.dumps(document))
    result = invoke_command("merge", str(part))
    assert (result.exit_code, result.stdout.strip()) == (
        ExitCode.BAD_INPUT,
        f"{part}: not a result of check --json: files[0].claims[0].verdict: 'pased' is not a verdict",
    )


def test_a_baseline_or_shard_that_is_not_a_regular_file_is_refused_not_read(no_gpu, nothing_runs, tmp_path):
    fifo = tmp_path / "base.json"
    os.mkfifo(fifo)
    result = invoke("--baseline", str(fifo), str(DATA / "sample.yaml"))
    assert (result.exit_code, result.stdout.strip()) == (
        ExitCode.BAD_INPUT,
        f"--baseline: {fifo}: not a regular file",
    )
    merged = invoke_command("merge", str(fifo), "/dev/zero")
    assert merged.exit_code == ExitCode.BAD_INPUT
    assert merged.stdout.strip().splitlines() == [
        f"{fifo}: not a regular file",
        "/dev/zero: not a regular file",
    ]


@given(text=st.text(max_size=30))
@settings(max_examples=80, deadline=None)
def test_any_option_text_is_a_value_or_one_refusal(text):
    import typer

    from ncuverify import cli

    for parse in (cli._shard, cli._gpus):
        try:
            value = parse(text)
        except typer.BadParameter as refused:
            assert "\x1b" not in str(refused) and "\n" not in str(refused)
        else:
            assert all(isinstance(n, int) and 0 <= n < 100000 for n in value)
    try:
        cli._tolerances([text])
    except InputError as refused:
        assert "\x1b" not in str(refused) and "\n" not in str(refused)


def test_a_damaged_pass_count_file_is_a_warning_on_the_run(no_gpu, monkeypatch, tmp_path):
    from ncuverify import cache as compile_cache

    damaged = tmp_path / "passes.json"
    damaged.write_text('{"a": -5}')
    monkeypatch.setattr(compile_cache, "passes_file", lambda: damaged)
    result = invoke("--static-only", str(DATA / "static.yaml"))
    assert result.exit_code == ExitCode.OK
    (line,) = [line for line in result.stdout.splitlines() if line.startswith("warning:")]
    assert line.startswith(f"warning: {damaged}: ignored (") and line.endswith(
        "the replay passes are guessed"
    )
