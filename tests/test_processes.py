"""Child processes bounded by a time limit: the whole group is killed, and has ended when a call returns."""

import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from ncuverify.processes import TimedOut, group_ended, kill_group, run_bounded, start_group


def states_of(group: int) -> list[str]:
    """The state letters of the group's processes, read from /proc apart from the code under test."""
    states = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == group:
            states.append(fields[0])
    return states


def test_a_running_group_has_not_ended_until_it_is_killed():
    leader = start_group(["sleep", "60"], subprocess.DEVNULL, subprocess.DEVNULL)
    try:
        assert not group_ended(leader.pid)
    finally:
        kill_group(leader)
    assert group_ended(leader.pid)
    assert all(state in "ZX" for state in states_of(leader.pid))


def test_a_killed_grandchild_counts_as_ended_before_init_reaps_it(tmp_path):
    # The shell's child outlives it; once killed it is init's to reap, which may take seconds.
    script = f"sleep 60 & echo $! > {tmp_path}/child; wait"
    leader = start_group(["sh", "-c", script], subprocess.DEVNULL, subprocess.DEVNULL)
    while not (tmp_path / "child").exists() or not (tmp_path / "child").read_text().strip():
        time.sleep(0.01)
    assert not group_ended(leader.pid)
    child = int((tmp_path / "child").read_text())
    assert os.getpgid(child) == leader.pid
    started = time.monotonic()
    kill_group(leader)
    assert time.monotonic() - started < 1.0, "kill_group waited for init to reap the orphan"
    assert all(state in "ZX" for state in states_of(leader.pid)), "a process of the group still runs"


def test_a_group_whose_members_outlive_the_limit_is_killed_whole(tmp_path):
    script = f"sleep 60 & echo $! > {tmp_path}/child; sleep 60"
    with pytest.raises(TimedOut, match=re.escape("sh did not finish within 0.5 s; stopped")):
        run_bounded(["sh", "-c", script], 0.5)
    child = int((tmp_path / "child").read_text())
    try:
        state = Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        state = "gone"
    assert state in ("Z", "X", "gone")


def test_a_group_that_is_gone_has_ended():
    leader = start_group(["true"], subprocess.DEVNULL, subprocess.DEVNULL)
    leader.wait()
    assert group_ended(leader.pid)
    with pytest.raises(ProcessLookupError):
        os.killpg(leader.pid, signal.SIGKILL)
