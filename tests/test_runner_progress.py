"""The runner's progress file: what it reads back, and what it refuses."""

from ncuverify.runner.progress import Progress


def test_the_progress_reads_back_and_refuses_what_the_runner_does_not_write():
    progress = Progress("f::a", running=True, done=False, step=3)
    assert Progress.from_json(progress.to_json()) == progress
    for text in (
        "",
        "[]",
        '{"case": 1, "running": true, "done": false, "step": 1}',
        '{"case": "a"}',
        "[" * 10**5,
    ):
        assert Progress.from_json(text) is None
