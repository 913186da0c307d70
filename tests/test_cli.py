"""The command line, without a GPU: the environment is fixed so these run the same on any machine."""

import re
from pathlib import Path

import pytest
from cli_invoke import invoke, invoke_command
from conftest import COMPILE_CACHE, DATA, FIXTURES, NO_GPU

from ncuverify import pipeline
from ncuverify.environment import Environment
from ncuverify.errors import ExitCode
from ncuverify.options import CheckOptions
from ncuverify.stages import prepare


def test_without_a_gpu_exits_3_with_one_line(no_gpu):
    result = invoke(str(DATA / "sample.yaml"))
    assert result.exit_code == ExitCode.NOT_MEASURABLE
    lines = result.stdout.strip().splitlines()
    assert lines == [f"{DATA / 'sample.yaml'}: 8 claims not measured: {NO_GPU.problem}"]
    assert "Traceback" not in result.stdout
    assert (
        result.stderr.strip()
        == "ncuverify doctor says what this machine lacks to measure, and how to mend it"
    )


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

    real_prepare = prepare.prepare_file

    def interrupted_on_the_second_file(path, key, options, environment):
        if path.name == "sample.yaml":  # files are built side by side: name the one Ctrl-C stops
            raise KeyboardInterrupt
        return real_prepare(path, key, options, environment)

    monkeypatch.setattr(prepare, "prepare_file", interrupted_on_the_second_file)
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
    from ncuverify.ncu.metrics import unknown

    assert unknown({"l1tex__t_request.sum"}, "sm_80") == {}  # no list shipped, no ncu to ask
    assert unknown({"l1tex__t_request.sum"}, "sm_90") == {"l1tex__t_request.sum": "l1tex__t_requests.sum"}


def test_the_pipeline_says_what_it_is_doing(no_gpu):
    lines: list[str] = []
    options = CheckOptions(cache=COMPILE_CACHE, static_only=True, on_progress=lines.append)
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

    machine = Environment(Gpu(0, "One GPU", "sm_90", "13.0"), "ncu", None, gpu_count=1)
    monkeypatch.setattr(Environment, "probe", classmethod(lambda cls, ncu: machine))
    result = invoke("--gpus", "0,1", str(DATA / "sample.yaml"))
    assert result.exit_code == ExitCode.BAD_INPUT
    assert "--gpus: no GPU 1 here (the driver reports 1)" in result.output


def test_ncu_reports_need_a_folder_to_go_to():
    result = invoke("--ncu-report", str(DATA / "sample.yaml"))
    assert result.exit_code == ExitCode.BAD_INPUT
    assert "--save-profile" in result.output


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
        "\\x1b]0;owned\\x07 retitled, \\u202eevil",  # a note
        "[blink]doc[/blink]",
        "a[i] :smile:",
        "[bold red]forged[/] verdict \\x1b[31mred",  # a note
    ):
        assert shown in text, shown


def test_the_progress_line_shows_file_names_as_text(no_gpu, monkeypatch, tmp_path):
    from ncuverify.cli import terminal

    descriptions = []

    class Recorded(terminal.Progress):
        def update(self, task, **fields):
            descriptions.append(fields.get("description"))

    named = tmp_path / "\x1b[2J[bold]x.yaml"
    named.write_text((DATA / "hostile_text.yaml").read_text())
    monkeypatch.setattr(terminal, "Progress", Recorded)
    monkeypatch.setattr(terminal, "console", lambda: terminal.Console(force_terminal=True, width=160))
    terminal.check_files([named], CheckOptions(cache=COMPILE_CACHE, static_only=True))
    assert descriptions == ["\\x1b[2J[bold]x.yaml: reading", "\\x1b[2J[bold]x.yaml: compiling"]


def test_a_file_of_program_cases_only_lints_without_an_architecture(no_gpu, tmp_path):
    """Nothing to build, so no architecture is needed to say the file is sound."""
    (tmp_path / "p.yaml").write_text(
        "cases:\n  c:\n    program: {command: [python3, run.py]}\n    kernel: add\n"
        "claims:\n  - {id: x, case: c, metric: gpu__time_duration.sum, expect: {at_least: 0},"
        " cite: {document: d, section: '1', figure: f}}\n"
    )
    result = invoke_command("lint", str(tmp_path / "p.yaml"))
    assert (result.exit_code, result.stdout.strip()) == (0, f"{tmp_path / 'p.yaml'}: sound (0 kernels built)")


def test_version_says_the_installed_version():
    from importlib.metadata import version

    result = invoke_command("--version")
    assert result.exit_code == 0 and result.output.strip() == f"ncuverify {version('ncuverify')}"


def test_every_command_takes_h_for_its_help():
    for command in (["check"], ["baseline", "save"], ["cache"]):
        result = invoke_command(*command, "-h")
        assert result.exit_code == 0, result.output
        assert f"Usage: root {' '.join(command)} [OPTIONS]" in " ".join(
            result.output.split()
        )  # root: under CliRunner
    assert "Usage: root [OPTIONS] COMMAND" in " ".join(invoke_command("-h").output.split())


def test_static_only_says_how_many_claims_it_set_aside(no_gpu):
    result = invoke("--static-only", str(DATA / "static.yaml"), str(DATA / "sample.yaml"))
    assert result.exit_code == ExitCode.OK, result.output
    # static.yaml has one claim on the profiler, sample.yaml eight; none of them is judged or counted
    assert (
        "static.yaml: 6 passed, 0 failed, 0 errors, 0 skipped, 1 set aside (they need a GPU: --static-only)"
        in result.stdout
    )
    said = "sample.yaml: nothing could be judged here: 8 claims need a GPU (--static-only set them aside)"
    assert said in result.stdout
    assert "ncuverify: 6 passed, 0 failed, 0 errors, 0 skipped, 9 set aside" in result.stdout
    assert "ncuverify: nothing could be judged" not in result.stdout  # the run judged six


@pytest.mark.parametrize("quiet", [[], ["-q"]])
def test_static_only_that_judges_nothing_is_not_a_pass(no_gpu, quiet):
    # sample.yaml's claims are all on the profiler; programs.yaml's are on program cases, without a
    # build: every one is set aside, so nothing was checked
    programs = Path(__file__).parent.parent / "examples" / "programs" / "programs.yaml"
    result = invoke(*quiet, "--static-only", str(DATA / "sample.yaml"), str(programs))
    assert result.exit_code == ExitCode.NOT_MEASURABLE, result.output
    said = "ncuverify: nothing could be judged here: 17 claims need a GPU (--static-only set them aside)"
    assert said in result.stdout
    assert "17 set aside (they need a GPU: --static-only)" in result.stdout
    assert "ncuverify doctor" not in result.output  # --static-only measured nothing by choice


def test_a_replay_of_a_kernel_that_changed_since_the_recording_is_stale_unless_allowed(tmp_path):
    changed = tmp_path / "sample.yaml"
    edited = (
        (DATA / "sample.yaml")
        .read_text()
        .replace("out[i] = factor * in[i];", "out[i] = factor * in[i] + 0.0f;")
    )
    changed.write_text(edited)
    result = invoke(str(changed), "--from-profile", str(FIXTURES))
    assert result.exit_code == ExitCode.CLAIM_FAILED, result.stdout
    # the one claim on kernel scale's case is an error; the claims on the other kernels are judged
    assert "sample.yaml: 7 passed, 0 failed, 1 errors, 0 skipped" in result.stdout
    assert (
        "error scale_2d_blocks_store_coalesced: stale: kernel scale changed since it was recorded; its recorded"
        " figures are not today's (check --allow-stale judges them anyway)" in " ".join(result.stdout.split())
    )
    allowed = invoke(str(changed), "--from-profile", str(FIXTURES), "--allow-stale")
    assert allowed.exit_code == ExitCode.OK and "8 passed, 0 failed" in allowed.stdout
    assert "warning: kernel scale changed since it was recorded" in allowed.stdout


def test_lint_says_when_it_could_not_check_the_metric_names(no_gpu):
    # no list ships for sm_80's chip, and there is no ncu here to ask
    result = invoke_command("lint", "--arch", "sm_80", str(DATA / "sample.yaml"))
    assert result.exit_code == ExitCode.OK, result.output
    assert (
        "metric names not checked: no list of ncu's metrics for ga100 (sm_80): ncuverify ships gh100's"
        in (" ".join(result.output.split()))
    )
    checked = invoke_command("lint", "--arch", "sm_90", str(DATA / "sample.yaml"))
    assert checked.exit_code == ExitCode.OK and "not checked" not in checked.output


def test_quiet_prints_the_summary_alone_and_the_files_that_could_not_be_checked(no_gpu, tmp_path):
    broken = tmp_path / "broken.yaml"
    broken.write_text("kernels: {}\n")
    result = invoke("-q", "--static-only", str(DATA / "static.yaml"), str(broken))
    assert result.exit_code == ExitCode.BAD_INPUT
    lines = [line for line in result.stdout.splitlines() if line.strip()]
    assert lines[0] == f"{broken}: input error" and lines[-1].startswith("ncuverify: 6 passed, 0 failed")
    assert "static_registers" not in result.stdout and "┃" not in result.stdout, "no table"
    replayed = invoke("--quiet", str(DATA / "sample.yaml"), "--from-profile", str(FIXTURES))
    assert replayed.exit_code == ExitCode.OK
    assert [line for line in replayed.stdout.splitlines() if line.strip()] == [
        line for line in replayed.stdout.splitlines() if line.startswith("ncuverify: 8 passed")
    ]


def test_processes_per_gpu_is_a_small_number_or_a_usage_error(no_gpu):
    for given in ("0", "9", "two", "1e9"):
        result = invoke("--processes-per-gpu", given, str(DATA / "static.yaml"))
        assert result.exit_code == ExitCode.BAD_INPUT and "--processes-per-gpu" in result.output, given
        assert "Traceback" not in result.output
