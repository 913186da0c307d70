"""Child processes bounded by a time limit: the whole group is killed, and has ended when a call returns;
nothing the command started outlives it, a daemon that left the group included."""

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT
from daemons import DAEMONS, assert_none_running, daemon_pids, running

from ncuverify.processes import (
    GROUP_END_S,
    SUBREAPER,
    Finished,
    TimedOut,
    group_ended,
    kill_group,
    run_bounded,
    start_group,
)


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
    # A zombie counts as ended: kill_group returns at once, not after GROUP_END_S (30 s) waiting for
    # init, whatever the machine's load.
    assert time.monotonic() - started < GROUP_END_S / 3, "kill_group waited for init to reap the orphan"
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


def test_daemons_that_left_the_group_end_with_the_command(tmp_path):
    finished = run_bounded(["sh", "-c", DAEMONS.format(folder=tmp_path) + "echo done"], 30)
    assert finished.returncode == 0 and finished.stdout == "done\n"
    assert_none_running(daemon_pids(tmp_path))


def test_daemons_that_left_the_group_end_when_the_command_times_out(tmp_path):
    with pytest.raises(TimedOut):
        run_bounded(["sh", "-c", DAEMONS.format(folder=tmp_path) + "sleep 60"], 1)
    assert_none_running(daemon_pids(tmp_path))


def test_daemons_that_left_the_group_end_on_an_exception_while_waiting(tmp_path):
    class Interrupted(Exception):
        pass

    def interrupt(signum, frame):
        raise Interrupted

    previous = signal.signal(signal.SIGALRM, interrupt)
    script = DAEMONS.format(folder=tmp_path) + f"touch {tmp_path}/started; sleep 60"
    try:
        signal.setitimer(signal.ITIMER_REAL, 1.0)
        with pytest.raises(Interrupted):
            run_bounded(["sh", "-c", script], 60)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert (tmp_path / "started").exists(), "interrupted before the daemons started: a longer timer"
    assert_none_running(daemon_pids(tmp_path))


def test_daemons_end_when_ncuverify_itself_is_killed(tmp_path):
    # A Python process that starts the command and ends with no clean-up, as when killed.
    script = (
        "import os, sys\n"
        "from ncuverify.processes import start_group\n"
        f"start_group(['sh', '-c', {DAEMONS.format(folder=tmp_path) + 'sleep 60'!r}], -3, -3)\n"
        f"while not os.path.exists({str(tmp_path / 'orphan')!r}): pass\n"
        "os._exit(0)\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60, cwd=ROOT)
    pids = daemon_pids(tmp_path)
    for _ in range(500):  # the launcher is told of its parent's end with SIGTERM, and kills at once
        if not any(running(pid) for pid in pids):
            break
        time.sleep(0.01)
    assert_none_running(pids)


@pytest.mark.slow
def test_a_daemon_started_while_the_tree_is_killed_is_killed_too(tmp_path):
    # The command's child keeps starting daemons after the command has ended.
    script = (
        f"sh -c 'trap \"\" TERM; while :; do setsid sleep 1000 & echo $! >> {tmp_path}/pids; done' &"
        " sleep 0.3"
    )
    run_bounded(["sh", "-c", script], 30)
    pids = [int(line) for line in (tmp_path / "pids").read_text().split()]
    assert pids
    assert_none_running(pids)


def test_the_command_s_status_output_and_signals_come_through_the_launcher(tmp_path):
    assert run_bounded(["sh", "-c", "echo out; echo err >&2; exit 3"], 30) == Finished(3, "out\n", "err\n")
    assert run_bounded(["sh", "-c", "kill -SEGV $$"], 30).returncode == -signal.SIGSEGV
    # SIGPIPE is the default again in the command (Python ignores it): yes ends quietly on it.
    assert run_bounded(["sh", "-c", "yes | head -n 1"], 30) == Finished(0, "y\n", "")
    environment = run_bounded(["env"], 30, env={"ONLY": "this"}, cwd=tmp_path)
    assert environment.stdout == "ONLY=this\n"
    assert run_bounded(["pwd"], 30, cwd=tmp_path).stdout == f"{tmp_path}\n"


def test_a_command_that_cannot_start_raises_as_popen_would(tmp_path):
    with pytest.raises(FileNotFoundError):
        run_bounded([str(tmp_path / "absent")], 30)
    with pytest.raises(FileNotFoundError):
        run_bounded(["no-such-program-anywhere"], 30)
    (tmp_path / "plain").write_text("#!/bin/sh\n")
    with pytest.raises(PermissionError):
        run_bounded([str(tmp_path / "plain")], 30)


def imported_by(arguments: list[str]) -> set[str]:
    """The modules Python imports for the arguments (STATUS in them: a pipe's write end), as
    -X importtime lists them on standard error."""
    read_end, write_end = os.pipe()
    try:
        ran = subprocess.run(
            [
                sys.executable,
                "-I",
                "-S",
                "-X",
                "importtime",
                *(str(write_end) if a == "STATUS" else a for a in arguments),
            ],
            capture_output=True,
            text=True,
            check=False,  # the launcher given no parent of its own stops after its imports: 127
            pass_fds=(write_end,),
        )
    finally:
        os.close(read_end)
        os.close(write_end)
    lines = [line.split("|") for line in ran.stderr.splitlines() if line.startswith("import time:")]
    return {fields[-1].strip() for fields in lines[1:]}


def test_the_launcher_imports_nothing_of_ncuverify_and_nothing_heavy():
    launcher = imported_by([str(SUBREAPER), "STATUS", "0", "--", "true"])
    assert "ctypes" in launcher
    assert launcher <= imported_by(["-c", "import __future__, _signal, ctypes, os, sys"])
