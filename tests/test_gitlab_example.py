"""docs/ci/gitlab-ci.yml, the GitLab CI example: each job's JUnit report is the file its script writes
with --junit-xml, and its artifacts keep the folder the other outputs go to, even when the job fails."""

import re
import shlex
from pathlib import Path

import yaml
from typer.main import get_command

from ncuverify.cli import app

EXAMPLE = Path(__file__).resolve().parent.parent / "docs" / "ci" / "gitlab-ci.yml"
PIPELINE = yaml.safe_load(EXAMPLE.read_text())


def _jobs() -> dict[str, dict]:
    """The jobs that run, each with what it extends merged in (as GitLab merges `extends`)."""
    jobs = {}
    for name, job in PIPELINE.items():
        if name.startswith(".") or name in ("variables", "stages", "default") or not isinstance(job, dict):
            continue
        jobs[name] = {**PIPELINE.get(job.get("extends", ""), {}), **job}
    return jobs


def _written(job: dict, option: str) -> str:
    """The path the job's check writes with option, its variables expanded."""
    variables = PIPELINE["variables"]
    (command,) = [line for line in job["script"] if line.startswith("ncuverify check")]
    words = shlex.split(command)
    path = words[words.index(option) + 1]
    return re.sub(r"\$(\w+)", lambda found: variables[found.group(1)], path)


def test_every_job_reports_the_junit_file_its_check_writes():
    jobs = _jobs()
    assert set(jobs) == {"static", "gpu"}
    for name, job in jobs.items():
        assert job["artifacts"]["reports"]["junit"] == _written(job, "--junit-xml"), name
        assert job["artifacts"]["when"] == "always", name  # the failures are the point
        kept = job["artifacts"]["paths"]
        for option in ("--json", "--html", "--markdown"):
            assert any(_written(job, option).startswith(folder) for folder in kept), (name, option)


def test_the_options_it_uses_are_checks():
    options = {opt for param in get_command(app).commands["check"].params for opt in param.opts}
    for job in _jobs().values():
        (command,) = [line for line in job["script"] if line.startswith("ncuverify check")]
        used = {word for word in shlex.split(command) if word.startswith("--")}
        assert used <= options, used - options


def test_no_exit_code_is_let_through():
    # exit 3 on a GPU runner means the runner cannot measure: a gate that allows it never gates
    for name, job in _jobs().items():
        assert "allow_failure" not in job, name
