"""Each case's buffer contents made one case ahead: what the kernel sees is what a fill made in place
would give, a fill that cannot be made fails its own case as before, and the next case's contents are
drawn while the case before it launches."""

import threading
from dataclasses import replace
from pathlib import Path

import numpy as np
from fake_launcher import FakeLauncher
from planned_arguments import planned_args, planned_buffer

from ncuverify.runner import ahead as ahead_module
from ncuverify.runner.ahead import ContentsAhead
from ncuverify.runner.fills import host_contents
from ncuverify.runner.plan import NpyContents, Plan, PlannedBuffer, PlannedCase
from ncuverify.runner.run import run_plan

# How long a launch waits for the next case's contents: only contents never made ahead take it.
WAIT_S = 30.0
RANDOM = {"buffer": "float32", "count": 1000, "fill": "random", "seed": 5, "name": "out"}


def planned(name: str, *args: dict) -> PlannedCase:
    return PlannedCase(name, f"/{name}.cubin", f"k_{name}", (1, 1, 1), (32, 1, 1), 0, planned_args(args))


def test_contents_made_ahead_are_those_made_in_place_and_zeros_stay_a_memset():
    zeros = {"buffer": "int32", "count": 8}
    cases = [planned("a", RANDOM, zeros), planned("b", {**RANDOM, "seed": 6})]
    ahead = ContentsAhead(cases)
    for case in cases:
        contents = ahead.contents(cases.index(case))
        for position, arg in enumerate(case.args):
            assert isinstance(arg, PlannedBuffer)
            made, here = contents(position, arg), host_contents(arg)
            assert (made is None and here is None) or np.array_equal(made, here)
    ahead.close()


def test_a_fill_that_cannot_be_made_fails_its_case_with_what_making_it_raised(tmp_path: Path):
    # the .npy file the check read is gone: the plan still names it
    checked = planned_buffer({"buffer": "float32", "count": 4})
    broken = replace(checked, fill=NpyContents(str(tmp_path / "gone.npy"), "0"))
    cases = [planned("first", RANDOM), replace(planned("broken"), args=[broken]), planned("after", RANDOM)]
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
    events: list[str] = []
    made = {count: threading.Event() for count in ("10", "20", "30")}
    real = ahead_module.host_contents

    def noted(arg: PlannedBuffer) -> np.ndarray | None:
        events.append(f"making {arg.count} on {threading.current_thread().name.split('_')[0]}")
        contents = real(arg)
        made[str(arg.count)].set()
        return contents

    monkeypatch.setattr(ahead_module, "host_contents", noted)

    class Replaying(FakeLauncher):
        def launch(self, kernel, case, args) -> None:
            # ncu replaying the kernel, until the next case's contents are made: a wait bounded far
            # beyond any machine's pace, which only contents not made meanwhile run into
            following = {"a": "20", "b": "30"}.get(case.name)
            if following is not None and not made[following].wait(WAIT_S):
                events.append(f"{following} not made while {case.name} launched")
            events.append(f"launched {case.name}")
            super().launch(kernel, case, args)

    cases = [planned(name, {**RANDOM, "count": count}) for name, count in (("a", 10), ("b", 20), ("c", 30))]
    statuses = run_plan(Plan(0, str(tmp_path / "status.json"), cases), lambda device: Replaying(0))
    assert all(s.ok for s in statuses)
    assert events == [
        "making 10 on contents",
        "making 20 on contents",  # while a launched
        "launched a",
        "making 30 on contents",  # once a had ended (one case ahead), while b launched
        "launched b",
        "launched c",
    ]


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
    assert np.array_equal(contents(0, planned_buffer(RANDOM)), real(planned_buffer(RANDOM)))
    ahead.contents(1)
    assert sorted(threads) == ["MainThread", "contents_0"], "the large made as it fills, the small ahead"
    ahead.close()
