"""`check` inside a GitHub Actions job: annotations after the table (--annotate github or none), and
the Markdown summary appended to the job's step summary, cut to what GitHub keeps."""

import json
import re

import pytest
from cli_invoke import invoke, invoke_command
from conftest import DATA, FIXTURES

from ncuverify.cli.github import STEP_SUMMARY_MAX_BYTES
from ncuverify.errors import ExitCode

EXPLAINED = ("--from-profile", str(FIXTURES), str(DATA / "explain.yaml"))


@pytest.fixture
def in_github_actions(monkeypatch, tmp_path):
    """A GitHub Actions job whose step summary already holds another tool's line."""
    summary = tmp_path / "step_summary.md"
    summary.write_text("another tool's summary\n")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    return summary


STOP = re.compile(r"::stop-commands::([0-9a-f]{32})")


def test_in_github_actions_failing_claims_are_annotated_after_the_table_and_summarised(in_github_actions):
    result = invoke(*EXPLAINED)
    assert result.exit_code == ExitCode.CLAIM_FAILED
    lines = result.stdout.splitlines()
    stopped = STOP.fullmatch(lines[0])
    assert stopped, "the runner reads no command from what the run shows"
    resumed = lines.index(f"::{stopped[1]}::")
    commands = [n for n, line in enumerate(lines) if line.startswith("::")]
    assert commands == [0, *range(len(lines) - 5, len(lines))], "the last lines, after the table"
    assert resumed == len(lines) - 5, "resumed for ncuverify's own annotations only"
    assert [lines[n].split(" ", 1)[0] for n in commands[2:]] == ["::error", "::notice", "::error", "::notice"]
    assert "gather_is_coalesced" in "\n".join(lines[1:resumed])
    assert "::error file=tests/data/explain.yaml,line=26," in lines[resumed + 1]
    summary = in_github_actions.read_text()
    assert summary.startswith("another tool's summary\n## ncuverify: claims failed\n")
    assert "| `explain.yaml` | `gather_is_coalesced` |" in summary
    again = STOP.fullmatch(invoke(*EXPLAINED).stdout.splitlines()[0])
    assert again and again[1] != stopped[1], "a token of its own each run: nothing shown can guess it"


def test_annotate_none_writes_no_command_and_github_writes_them_anywhere(in_github_actions, monkeypatch):
    quiet = invoke(*EXPLAINED, "--annotate", "none")
    assert quiet.exit_code == ExitCode.CLAIM_FAILED
    assert not any(
        line.startswith(("::error", "::warning", "::notice")) for line in quiet.stdout.splitlines()
    )
    stopped = STOP.fullmatch(quiet.stdout.splitlines()[0])
    assert stopped and quiet.stdout.splitlines()[-1] == f"::{stopped[1]}::", "resumed at the end"
    assert in_github_actions.read_text().count("## ncuverify:") == 1, "the summary is still written"
    monkeypatch.delenv("GITHUB_ACTIONS")
    annotated = invoke(*EXPLAINED, "--annotate", "github")
    assert sum(line.startswith("::error ") for line in annotated.stdout.splitlines()) == 2
    assert "::stop-commands::" not in annotated.stdout, "outside GitHub Actions no runner reads them"
    assert in_github_actions.read_text().count("## ncuverify:") == 1, "no summary outside GitHub Actions"
    refused = invoke(*EXPLAINED, "--annotate", "gitlab")
    assert refused.exit_code == ExitCode.BAD_INPUT and "github or none" in refused.output


def test_the_step_summary_is_cut_to_what_github_keeps(in_github_actions):
    in_github_actions.write_text("x" * (STEP_SUMMARY_MAX_BYTES - 720) + "\n")
    assert invoke(*EXPLAINED).exit_code == ExitCode.CLAIM_FAILED
    assert in_github_actions.stat().st_size <= STEP_SUMMARY_MAX_BYTES
    added = in_github_actions.read_text().split("\n", 1)[1]
    assert added.startswith("## ncuverify: claims failed")
    assert added.endswith(f"1 more claims not shown: the summary is cut to fit in {720 - 1} bytes\n")


def test_a_step_summary_that_cannot_be_written_is_one_line_and_exit_2(in_github_actions, monkeypatch):
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(in_github_actions.parent / "gone" / "summary.md"))
    result = invoke(*EXPLAINED)
    assert result.exit_code == ExitCode.BAD_INPUT
    assert "$GITHUB_STEP_SUMMARY: " in result.stdout and "cannot write it" in result.stdout
    assert "Traceback" not in result.output


def test_a_baseline_regression_is_annotated_at_its_case(in_github_actions, tmp_path):
    saved = tmp_path / "main.json"
    sample = ("--from-profile", str(FIXTURES), str(DATA / "sample.yaml"))
    assert invoke_command("baseline", "save", str(saved), *sample).exit_code == ExitCode.OK
    data = json.loads(saved.read_text())
    data["files"]["tests/data/sample.yaml"]["stride1"]["gpu__time_duration.sum"] /= 2
    saved.write_text(json.dumps(data))
    result = invoke(*sample, "--baseline", str(saved))
    assert result.exit_code == ExitCode.CLAIM_FAILED
    regressed = [line for line in result.stdout.splitlines() if line.startswith("::error ")]
    assert len(regressed) == 1
    line = next(
        n for n, text in enumerate((DATA / "sample.yaml").read_text().splitlines(), 1) if text == "  stride1:"
    )
    assert regressed[0].startswith(
        f"::error file=tests/data/sample.yaml,line={line},title=ncuverify%3A regressed%3A gpu__time_duration.sum::"
        "stride1 gpu__time_duration.sum: "
    )
