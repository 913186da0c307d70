"""Each case's buffer contents made one case ahead: what the kernel sees is what a fill made in place
would give, a fill that cannot be made fails its own case as before, and the next case's contents are
drawn while the case before it launches."""

import threading
import time
from pathlib import Path

import numpy as np
from fake_launcher import FakeLauncher

from ncuverify.runner import ahead as ahead_module
from ncuverify.runner.ahead import ContentsAhead
from ncuverify.runner.fills import host_contents
from ncuverify.runner.plan import Plan, PlannedCase
from ncuverify.runner.run import run_plan

RANDOM = {"buffer": "float32", "count": 1000, "fill": "random", "seed": 5, "name": "out"}


def planned(name: str, *args: dict) -> PlannedCase:
    return PlannedCase(name, f"/{name}.cubin", f"k_{name}", (1, 1, 1), (32, 1, 1), 0, list(args))


def test_contents_made_ahead_are_those_made_in_place_and_zeros_stay_a_memset():
    zeros = {"buffer": "int32", "count": 8}
    cases = [planned("a", RANDOM, zeros), planned("b", {**RANDOM, "seed": 6})]
    ahead = ContentsAhead(cases)
    for case in cases:
        contents = ahead.contents(cases.index(case))
        for position, arg in enumerate(case.args):
            made, here = contents(position, arg), host_contents(arg)
            assert (made is None and here is None) or np.array_equal(made, here)
    ahead.close()


def test_a_fill_that_cannot_be_made_fails_its_case_with_what_making_it_raised(tmp_path: Path):
    broken = {"buffer": "float32", "count": 4, "fill": {"npy": str(tmp_path / "gone.npy"), "sha256": "0"}}
    cases = [planned("first", RANDOM), planned("broken", broken), planned("after", RANDOM)]
    fake = FakeLauncher(0)
    statuses = run_plan(Plan(0, str(tmp_path / "status.json"), cases), lambda device: fake)
    assert [s.ok for s in statuses] == [True, False, True]
    try:
        host_contents(broken)
    except Exception as error:
        in_place = f"{type(error).__name__}: {error}"
    assert statuses[1].error == in_place, "the error a fill made in place gives"
    assert fake.launches == ["first", "after"]
    assert sorted(fake.freed) == sorted(fake.memory), "the broken case's buffers freed too"


def test_the_next_case_s_contents_are_made_while_a_case_launches(tmp_path: Path, monkeypatch):
    made: list[tuple[str, str, float]] = []  # count, thread, when
    real = ahead_module.host_contents

    def noted(arg: dict) -> np.ndarray | None:
        made.append((str(arg["count"]), threading.current_thread().name, time.monotonic()))
        return real(arg)

    monkeypatch.setattr(ahead_module, "host_contents", noted)
    launched: list[tuple[str, float]] = []

    class Slow(FakeLauncher):
        def launch(self, kernel, case, args) -> None:
            launched.append((case.name, time.monotonic()))
            time.sleep(0.2)  # ncu replaying the kernel
            super().launch(kernel, case, args)

    cases = [planned(name, {**RANDOM, "count": count}) for name, count in (("a", 10), ("b", 20), ("c", 30))]
    statuses = run_plan(Plan(0, str(tmp_path / "status.json"), cases), lambda device: Slow(0))
    assert all(s.ok for s in statuses)
    assert [count for count, _, _ in made] == ["10", "20", "30"], "each case's contents made once, in order"
    assert all(thread.startswith("contents") for _, thread, _ in made), "on the thread that makes them"
    (_, _, made_b), (_, _, made_c) = made[1], made[2]
    ends = [when + 0.2 for _, when in launched]
    assert made_b < ends[0], "b's made before a's launch ended"
    assert ends[0] < made_c < ends[1], "c's once a had ended (one case ahead), before b's launch ended"


def test_a_case_whose_contents_take_more_than_the_limit_makes_them_as_it_fills(monkeypatch):
    threads: list[str] = []
    real = ahead_module.host_contents
    monkeypatch.setattr(
        ahead_module,
        "host_contents",
        lambda arg: threads.append(threading.current_thread().name) or real(arg),
    )
    large, small = planned("large", RANDOM), planned("small", {**RANDOM, "count": 10})
    ahead = ContentsAhead([large, small], limit_bytes=100)  # 1000 float32: 4000 bytes; 10: 40
    contents = ahead.contents(0)
    assert np.array_equal(contents(0, RANDOM), real(RANDOM))
    ahead.contents(1)
    assert sorted(threads) == ["MainThread", "contents_0"], "the large made as it fills, the small ahead"
    ahead.close()
