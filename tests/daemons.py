"""Daemons that leave a command's process group, for the tests that check none outlives its run: the
script that starts them, their pids, and whether any runs (killed where one does, to leave nothing)."""

import os
import signal
import time
from pathlib import Path

# Two daemons that leave the command's process group: one started with setsid, one whose parent (a
# shell) exits at once, leaving it to be reparented. Each writes its pid where the test can read it.
DAEMONS = (
    "setsid sleep 1000 & echo $! > {folder}/setsid\n"
    "sh -c 'setsid sleep 1000 & echo $! > {folder}/orphan' & wait $!\n"
)


def daemon_pids(folder: Path) -> list[int]:
    for _ in range(500):
        texts = [
            (folder / name).read_text() if (folder / name).exists() else "" for name in ("setsid", "orphan")
        ]
        if all(text.endswith("\n") for text in texts):
            return [int(text) for text in texts]
        time.sleep(0.01)
    raise AssertionError("the daemons did not start")


def running(pid: int) -> bool:
    """Whether the process is there and not a zombie: read from /proc now, without waiting."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def assert_none_running(pids: list[int]) -> None:
    """None of the processes runs now; any that does is killed, so that a failure leaves nothing."""
    left = [pid for pid in pids if running(pid)]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert left == []
