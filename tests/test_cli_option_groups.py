"""Option values: each is a value or one refusal."""

import cli_invoke
import pytest
import typer
from cli_invoke import invoke, invoke_command, said_lines
from conftest import DATA
from hypothesis import given, settings
from hypothesis import strategies as st

from ncuverify import pipeline
from ncuverify.build import BuildLimits
from ncuverify.cli import option_groups
from ncuverify.errors import ExitCode, InputError

nothing_runs = cli_invoke.nothing_runs


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


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--reuse", ".", "--from-profile", "."], "replay one with --from-profile, or reuse it"),
        (
            ["--reuse", ".", "--save-profile", "."],
            "record the run in a folder other than the recording it reuses",
        ),
    ],
)
def test_reuse_is_refused_beside_a_replay_and_into_its_own_folder(no_gpu, nothing_runs, args, message):
    result = invoke(*args, str(DATA / "sample.yaml"))
    assert result.exit_code == ExitCode.BAD_INPUT
    assert message in " ".join(result.output.replace("│", " ").split())


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
    from ncuverify.build.cache import CompileCache

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


@given(text=st.text(max_size=30))
@settings(max_examples=80, deadline=None)
def test_any_option_text_is_a_value_or_one_refusal(text):
    import typer

    from ncuverify.cli import option_groups

    for parse in (option_groups.shard_of, option_groups.gpus_of):
        try:
            value = parse(text)
        except typer.BadParameter as refused:
            assert "\x1b" not in str(refused) and "\n" not in str(refused)
        else:
            assert all(isinstance(n, int) and 0 <= n < 100000 for n in value)
    try:
        option_groups.tolerances_of([text])
    except InputError as refused:
        assert "\x1b" not in str(refused) and "\n" not in str(refused)


def test_a_damaged_pass_count_file_is_a_warning_on_the_run(no_gpu, monkeypatch, tmp_path):
    from ncuverify.build import cache as compile_cache

    damaged = tmp_path / "passes.json"
    damaged.write_text('{"a": -5}')
    monkeypatch.setattr(compile_cache, "passes_file", lambda: damaged)
    result = invoke("--static-only", str(DATA / "static.yaml"))
    assert result.exit_code == ExitCode.OK
    (line,) = [line for line in said_lines(result.stdout) if line.startswith("warning:")]
    assert line.startswith(f"warning: {damaged}: ignored (") and line.endswith(
        "the replay passes are guessed"
    )


@pytest.mark.parametrize(
    ("environment", "share"),
    [
        ({"CI_NODE_INDEX": "2", "CI_NODE_TOTAL": "4"}, (2, 4)),  # GitLab counts from 1
        ({"BUILDKITE_PARALLEL_JOB": "0", "BUILDKITE_PARALLEL_JOB_COUNT": "3"}, (1, 3)),  # from 0
        ({"CIRCLE_NODE_INDEX": "4", "CIRCLE_NODE_TOTAL": "5"}, (5, 5)),
    ],
    ids=["gitlab", "buildkite", "circleci"],
)
def test_shard_auto_takes_the_share_the_ci_job_names(environment, share):
    assert option_groups.shard_of("auto", environment) == share


@pytest.mark.parametrize(
    ("environment", "message"),
    [
        ({}, "auto: no parallel job's variables are set (GitLab's CI_NODE_INDEX and CI_NODE_TOTAL;"),
        ({"CI_NODE_INDEX": "0", "CI_NODE_TOTAL": "4"}, "make no share K/N with 1 <= K <= N"),
        (
            {"CIRCLE_NODE_INDEX": "x", "CIRCLE_NODE_TOTAL": "2"},
            "CIRCLE_NODE_INDEX='x' and CIRCLE_NODE_TOTAL='2' are not numbers",
        ),
    ],
    ids=["none", "out_of_range", "not_numbers"],
)
def test_shard_auto_without_a_ci_share_is_a_usage_error_saying_what_it_read(environment, message):
    with pytest.raises(typer.BadParameter) as error:
        option_groups.shard_of("auto", environment)
    assert message in str(error.value)
