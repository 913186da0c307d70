"""--shard auto from Slurm job arrays and Kubernetes Indexed Jobs, read exactly as each defines them;
and auto/N, the count where the system gives none, checked against the count where it does."""

import pytest
import typer

from ncuverify.cli import option_groups


def slurm(
    task: int, low: int, high: int, step: int | None = None, count: int | None = None
) -> dict[str, str]:
    environment = {
        "SLURM_ARRAY_TASK_ID": str(task),
        "SLURM_ARRAY_TASK_MIN": str(low),
        "SLURM_ARRAY_TASK_MAX": str(high),
    }
    if step is not None:
        environment["SLURM_ARRAY_TASK_STEP"] = str(step)
    if count is not None:
        environment["SLURM_ARRAY_TASK_COUNT"] = str(count)
    return environment


@pytest.mark.parametrize(
    ("text", "environment", "share"),
    [
        ("auto", slurm(3, 1, 4, 1, 4), (3, 4)),  # --array=1-4
        ("auto", slurm(0, 0, 3, count=4), (1, 4)),  # --array=0-3, no step set
        ("auto", slurm(8, 0, 12, 4, 4), (3, 4)),  # --array=0-12:4: tasks 0, 4, 8, 12
        ("auto/4", slurm(4, 1, 4), (4, 4)),
        ("auto/4", {"JOB_COMPLETION_INDEX": "0"}, (1, 4)),  # Kubernetes counts from 0
        ("auto/4", {"JOB_COMPLETION_INDEX": "3"}, (4, 4)),
        ("auto/3", {"CI_NODE_INDEX": "2", "CI_NODE_TOTAL": "3"}, (2, 3)),
    ],
    ids=["slurm", "slurm_from_0", "slurm_step", "slurm_auto_n", "k8s_first", "k8s_last", "gitlab_auto_n"],
)
def test_shard_auto_reads_slurm_and_kubernetes(text, environment, share):
    assert option_groups.shard_of(text, environment) == share


@pytest.mark.parametrize(
    ("text", "environment", "message"),
    [
        (
            "auto",
            {"JOB_COMPLETION_INDEX": "1"},
            "gives the Indexed Job's JOB_COMPLETION_INDEX=1 but not its completions: write --shard auto/N",
        ),
        ("auto/4", {"JOB_COMPLETION_INDEX": "4"}, "make no share K/N with 1 <= K <= N"),
        (
            "auto/2",
            slurm(1, 1, 4),
            "Slurm's SLURM_ARRAY_TASK_ID=1, SLURM_ARRAY_TASK_MIN=1, SLURM_ARRAY_TASK_MAX=4, SLURM_ARRAY_TASK_STEP=1 make 4 shares, not 2",
        ),
        ("auto", slurm(4, 1, 9, count=3), "are not the tasks of one array MIN-MAX:STEP"),  # --array=1,4,9
        ("auto", slurm(3, 0, 12, 4), "are not the tasks of one array MIN-MAX:STEP"),
        (
            "auto",
            {"SLURM_ARRAY_TASK_ID": "2"},
            "Slurm's SLURM_ARRAY_TASK_ID is set but not SLURM_ARRAY_TASK_MIN",
        ),
        ("auto", {**slurm(1, 1, 2), "SLURM_ARRAY_TASK_MAX": "²"}, "are not numbers"),
        ("auto/0", {"JOB_COMPLETION_INDEX": "0"}, "auto/0: N must be 1 to 10000"),
        (
            "auto",
            {},
            "Slurm's SLURM_ARRAY_TASK_ID with SLURM_ARRAY_TASK_MIN and SLURM_ARRAY_TASK_MAX; Kubernetes' JOB_COMPLETION_INDEX, with auto/N",
        ),
    ],
    ids=[
        "k8s_no_count",
        "k8s_past_count",
        "slurm_other_n",
        "slurm_list",
        "slurm_off_step",
        "slurm_no_min",
        "slurm_not_digits",
        "auto_0",
        "none",
    ],
)
def test_shard_auto_refuses_what_is_not_one_share(text, environment, message):
    with pytest.raises(typer.BadParameter) as error:
        option_groups.shard_of(text, environment)
    assert message in str(error.value)
