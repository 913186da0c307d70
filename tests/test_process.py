"""Starting and watching a process: each case told as it starts, the GPU it is given."""

from pathlib import Path

import pytest

from ncuverify.errors import EnvironmentProblem
from ncuverify.profile import NcuOptions
from ncuverify.runner import Progress

# --- every process within the case timeout ----------------------------------------------------------------


def test_the_running_case_is_told_as_it_starts(tmp_path: Path):
    import subprocess
    import sys

    from ncuverify.profile.process import wait

    progress = tmp_path / "progress.json"
    steps = [
        Progress(case, running, False, n)
        for n, (case, running) in enumerate([("first", True), ("first", False), ("second", True)])
    ]
    # Each case that starts waits to be told (a file the telling leaves) before the runner goes on, rather
    # than for a set time the watcher might miss it in: a wait bounded by the 30 s case timeout.
    marks = [str(tmp_path / f"told-{step.case}") if step.running else None for step in steps]
    script = (
        "import os, time\n"
        f"for text, mark in {list(zip([step.to_json() for step in steps], marks, strict=True))!r}:\n"
        f"    open({str(progress)!r}, 'w').write(text)\n"
        "    waited = time.monotonic() + 30\n"
        "    while mark and not os.path.exists(mark) and time.monotonic() < waited:\n"
        "        time.sleep(0.01)\n"
    )
    process = subprocess.Popen([sys.executable, "-c", script], start_new_session=True)
    told: list[str] = []

    def tell(case: str) -> None:
        told.append(case)
        (tmp_path / f"told-{case}").touch()

    watched = wait(process, progress, ["first", "second"], 30, NcuOptions(on_case=tell))
    assert not watched.stalled and watched.last == steps[-1]
    assert told == ["first", "second"]


@pytest.mark.parametrize(
    ("visible", "index", "expected"),
    [
        (None, 1, "1"),
        ("2,3", 1, "3"),
        (" 4 , 5 ", 0, "4"),
        ("GPU-a1b2,MIG-c3", 1, "MIG-c3"),
        ("0,1,x,2", 1, "1"),
    ],
)
def test_the_gpu_given_to_ncu_is_the_one_cuda_visible_devices_lists(monkeypatch, visible, index, expected):
    from ncuverify.profile.process import visible_device

    if visible is None:
        monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    else:
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
    assert visible_device(index) == expected


@pytest.mark.parametrize("visible", ["", "-1", "0,,1", "0,x,1", "１", "0," + "9" * 5000 + "x", "\x1b[2J"])
def test_odd_cuda_visible_devices_name_the_gpu_that_is_not_there(monkeypatch, visible):
    from ncuverify.profile.process import visible_device
    from ncuverify.profile.shown import shown_output

    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
    with pytest.raises(EnvironmentProblem) as problem:
        visible_device(1)
    assert (
        str(problem.value)
        == f"no GPU 1 among those CUDA_VISIBLE_DEVICES makes visible ({shown_output(visible)})"
    )
    assert "\x1b" not in str(problem.value)
