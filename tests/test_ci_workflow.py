"""docs/ci/gpu-runner.yml, the workflow users copy: its gate is ncuverify's own action (action.yml),
which compares every pull request with the baseline committed to the repository, and nothing can hide
that gate's failure (no baseline downloaded from another run, which a pull request's job cannot find;
no continue-on-error; no condition on the gate)."""

import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import ROOT

WORKFLOW = ROOT / "docs" / "ci" / "gpu-runner.yml"
COMMITTED = "baselines/h200.json"


@pytest.fixture(scope="module")
def jobs() -> dict[str, Any]:
    return yaml.safe_load(WORKFLOW.read_text())["jobs"]


def steps(jobs: dict[str, Any]) -> list[dict[str, Any]]:
    return [step for job in jobs.values() for step in job["steps"]]


ACTION = "your-org/ncuverify@"  # the action of action.yml, as the workflow names it


def checks(jobs: dict[str, Any]) -> list[dict[str, Any]]:
    return [step for step in steps(jobs) if step.get("uses", "").startswith(ACTION)]


def test_no_baseline_comes_from_an_artifact(jobs):
    for step in steps(jobs):
        uses = step.get("uses", "")
        if uses.startswith(("actions/download-artifact", "dawidd6/action-download-artifact")):
            assert "baseline" not in str(step).lower(), step
        if uses.startswith("actions/upload-artifact"):
            assert "baseline" not in str(step.get("with", {})).lower(), step


def test_every_check_compares_with_the_committed_baseline_and_fails_its_job(jobs):
    assert len(checks(jobs)) == 2  # the GPU runner's, and the static facts' on a hosted runner
    for job in jobs.values():
        assert "continue-on-error" not in job
    for step in checks(jobs):
        assert "continue-on-error" not in step and "if" not in step, step
        assert step["with"]["baseline"] == COMMITTED
        assert "--baseline" not in shlex.split(step["with"].get("args", "")), (
            "one baseline, the committed one"
        )
        assert not Path(COMMITTED).is_absolute()
    assert not any("ncuverify check" in step.get("run", "") for step in steps(jobs)), "the action checks"


def test_the_committed_baseline_is_written_by_no_step_and_saved_by_the_command_shown(jobs):
    """What the pull request is compared with is the file its branch holds: no step makes it, and the
    workflow says how a reviewed pull request updates it."""
    for step in steps(jobs):
        if step not in checks(jobs):
            assert COMMITTED not in str(step), step
    assert f"ncuverify baseline save {COMMITTED} expectations/" in WORKFLOW.read_text()
