"""The loop over a plan's cases, driven by a launcher that plays a GPU (launching on one: test_gpu): each
case's outcome, what a refused launch, a fault and a failed readback mean for it and for the cases after
it, CUDA that cannot start, and the progress written on the way."""

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
from fake_launcher import ILLEGAL_ADDRESS, TOO_MANY_RESOURCES, FakeLauncher, case_number
from planned_arguments import planned_args

from ncuverify.runner import progress as progress_module
from ncuverify.runner.__main__ import main
from ncuverify.runner.plan import Plan, PlannedCase
from ncuverify.runner.progress import PROGRESS_FILE, Progress
from ncuverify.runner.run import run_plan
from ncuverify.runner.status import CUDA_DID_NOT_START, CaseStatus, read_statuses

OUT = {"buffer": "int32", "count": 4, "fill": "iota", "name": "out"}


def planned(name: str, repeat: int = 1, args: tuple[dict, ...] = (OUT,)) -> PlannedCase:
    args_planned = planned_args(args)
    return PlannedCase(name, f"/{name}.cubin", f"k_{name}", (1, 1, 1), (32, 1, 1), 0, args_planned, repeat)


def plan_of(tmp_path: Path, *cases: PlannedCase) -> Plan:
    return Plan(device=0, status_path=str(tmp_path / "status.json"), cases=list(cases))


def read_out(values: list[float]) -> dict[str, float]:
    """What run_case records of the buffer out holding values."""
    return {
        "buffer__out.first": values[0],
        "buffer__out.sum": sum(values),
        "buffer__out.mean": sum(values) / len(values),
        "buffer__out.min": min(values),
        "buffer__out.max": max(values),
        "buffer__out.median": float(np.median(values)),
    }


def run_with(tmp_path: Path, fake: FakeLauncher, *cases: PlannedCase) -> list[CaseStatus]:
    """The plan run on fake; what it returns is also what it left in its status file."""
    statuses = run_plan(plan_of(tmp_path, *cases), lambda device: fake)
    assert read_statuses((tmp_path / "status.json").read_text()) == statuses
    assert not list(tmp_path.glob("*.partial")), "every file written whole, then renamed"
    assert sorted(fake.freed) == sorted(fake.memory), "every buffer freed"
    return statuses


def test_each_case_records_what_its_own_launches_left_in_its_named_buffers(tmp_path: Path):
    fake = FakeLauncher(0)
    once, thrice = planned("once"), planned("thrice", repeat=3)
    statuses = run_with(tmp_path, fake, once, thrice)
    assert fake.launches == ["once", "thrice", "thrice", "thrice"]
    own = case_number("once")
    assert statuses[0] == CaseStatus("once", True, None, "k_once", 1, read_out([own + i for i in range(4)]))
    # Each launch adds the case's number again: the median launch is the second.
    own = case_number("thrice")
    assert statuses[1] == CaseStatus(
        "thrice", True, None, "k_thrice", 3, read_out([2 * own + i for i in range(4)])
    )


def test_a_launch_cuda_refuses_fails_its_case_with_the_error_and_the_next_cases_run(tmp_path: Path):
    fake = FakeLauncher(0, refused=frozenset({"refused"}))
    statuses = run_with(tmp_path, fake, planned("refused"), planned("after"))
    assert statuses[0] == CaseStatus("refused", False, f"CUDAError: {TOO_MANY_RESOURCES}", "k_refused")
    assert statuses[1].ok and statuses[1].values == read_out([case_number("after") + i for i in range(4)])
    assert fake.launches == ["after"]


def test_a_fault_that_loses_the_context_fails_its_case_and_no_later_case_runs(tmp_path: Path):
    fake = FakeLauncher(0, faults=frozenset({"faults"}))
    cases = [planned("first"), planned("faults"), planned("never"), planned("nor_this")]
    statuses = run_with(tmp_path, fake, *cases)
    assert [s.ok for s in statuses] == [True, False]
    assert statuses[1] == CaseStatus(
        "faults",
        False,
        f"CUDAError: {ILLEGAL_ADDRESS}",
        "k_faults",
        context_lost=True,
        not_run=("never", "nor_this"),
    )
    assert fake.launches == ["first", "faults"]
    assert Progress.from_json((tmp_path / PROGRESS_FILE).read_text()) == Progress("faults", False, True, 5)


def test_a_fault_in_the_last_case_leaves_no_case_unrun(tmp_path: Path):
    fake = FakeLauncher(0, faults=frozenset({"last"}))
    [first, last] = run_with(tmp_path, fake, planned("first"), planned("last"))
    assert first.ok and last.context_lost and last.not_run == ()


def test_a_readback_that_fails_fails_its_case_with_the_error_and_the_next_cases_run(tmp_path: Path):
    fake = FakeLauncher(0, unreadable=frozenset({"unreadable"}))
    statuses = run_with(tmp_path, fake, planned("unreadable", repeat=2), planned("after"))
    error = "RuntimeError: CUDA_ERROR_INVALID_VALUE: invalid argument"
    assert statuses[0] == CaseStatus("unreadable", False, error, "k_unreadable")
    assert statuses[1].ok and statuses[1].values == read_out([case_number("after") + i for i in range(4)])
    assert fake.launches == ["unreadable", "after"], "no launch after the failed readback"


def test_a_case_without_named_buffers_records_no_values(tmp_path: Path):
    unnamed = {"buffer": "float32", "count": 8}
    [status] = run_with(tmp_path, FakeLauncher(0), planned("plain", repeat=2, args=(unnamed, {"int32": 3})))
    assert status == CaseStatus("plain", True, None, "k_plain", 2, {})


def test_where_cuda_cannot_start_every_case_fails_and_the_progress_says_the_plan_ended(tmp_path: Path):
    def no_cuda(device_index: int) -> FakeLauncher:
        raise RuntimeError("no CUDA here")

    cases = [PlannedCase(name, "/none.cubin", "k", (1, 1, 1), (32, 1, 1), 0, []) for name in ("a", "b")]
    plan = Plan(device=0, status_path=str(tmp_path / "status.json"), cases=cases)
    statuses = run_plan(plan, no_cuda)
    assert statuses == [CaseStatus(name, False, "CUDA could not start: no CUDA here", "k") for name in "ab"]
    assert read_statuses((tmp_path / "status.json").read_text()) == statuses
    progress = Progress.from_json((tmp_path / PROGRESS_FILE).read_text())
    assert progress is not None and progress.done and not progress.running
    assert not list(tmp_path.glob("*.partial")), "every file written whole, then renamed"


def test_the_progress_tells_each_case_s_start_and_end_and_a_lost_context_ends_the_plan(tmp_path: Path):
    seen: list[Progress | None] = []

    class Watched(FakeLauncher):
        def launch(self, kernel, case, args) -> None:
            seen.append(Progress.from_json((tmp_path / PROGRESS_FILE).read_text()))
            super().launch(kernel, case, args)

    fake = Watched(0, faults=frozenset({"faults"}))
    cases = [planned("first", repeat=2, args=()), planned("faults", args=()), planned("never", args=())]
    statuses = run_with(tmp_path, fake, *cases)
    assert seen == [Progress("first", True, False, 2)] * 2 + [Progress("faults", True, False, 4)]
    assert statuses == [
        CaseStatus("first", True, None, "k_first", 2, {}),
        CaseStatus(
            "faults",
            False,
            f"CUDAError: {ILLEGAL_ADDRESS}",
            "k_faults",
            context_lost=True,
            not_run=("never",),
        ),
    ]
    assert Progress.from_json((tmp_path / PROGRESS_FILE).read_text()) == Progress("faults", False, True, 5)


def test_the_progress_is_written_at_the_start_at_each_case_s_start_and_end_and_at_the_plan_s_end(
    tmp_path: Path, monkeypatch
):
    written: list[Progress | None] = []
    write = progress_module.write_atomically

    def noted(path: Path, text: str) -> None:
        written.append(Progress.from_json(text))
        write(path, text)

    monkeypatch.setattr(progress_module, "write_atomically", noted)
    run_with(tmp_path, FakeLauncher(0, refused=frozenset({"b"})), planned("a"), planned("b"))
    assert written == [
        Progress(None, False, False, 1),
        Progress("a", True, False, 2),
        Progress("a", False, False, 3),
        Progress("b", True, False, 4),
        Progress("b", False, False, 5),
        Progress("b", False, True, 6),
    ]


def test_an_empty_plan_ends_at_once_and_writes_no_status(tmp_path: Path):
    assert run_plan(plan_of(tmp_path), lambda device: FakeLauncher(device)) == []
    assert not (tmp_path / "status.json").exists()
    assert Progress.from_json((tmp_path / PROGRESS_FILE).read_text()) == Progress(None, False, True, 2)


def test_the_command_line_wants_one_plan_and_fails_where_it_cannot_be_read(tmp_path: Path, capsys):
    assert main([]) == 2
    assert capsys.readouterr().err == "usage: python -m ncuverify.runner PLAN.json\n"
    assert main([str(tmp_path / "missing.json")]) == 1
    assert "FileNotFoundError" in capsys.readouterr().err


def test_python_m_ncuverify_runner_runs_a_plan_and_says_nothing(tmp_path: Path):
    plan = Plan(device=0, status_path=str(tmp_path / "status.json"), cases=[planned("a"), planned("b")])
    plan.write(tmp_path / "plan.json")
    ran = subprocess.run(
        [sys.executable, "-m", "ncuverify.runner", str(tmp_path / "plan.json")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (ran.returncode, ran.stdout) == (0, "")
    # No cubin exists (and here, maybe no GPU): every case fails, each with its error.
    statuses = read_statuses((tmp_path / "status.json").read_text())
    assert [s.case for s in statuses] == ["a", "b"] and not any(s.ok for s in statuses)
    assert json.loads((tmp_path / PROGRESS_FILE).read_text())["done"] is True


def test_the_runner_loads_nothing_of_the_expectation_file_s_model():
    """The runner starts in every ncu process and in the re-runs that name a fault: it packs structs
    from the layouts its plan holds and reads .npy files with numpy alone, so neither the spec, pydantic,
    YAML nor RE2 is loaded (nor needed where it runs)."""
    import subprocess
    import sys

    script = (
        "import sys, ncuverify.runner, ncuverify.runner.case, ncuverify.runner.launch\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pydantic', 're2', 'yaml')"
        " or m.startswith('ncuverify.spec')))"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def step(name: str, sequence: str, *args: dict) -> PlannedCase:
    return replace(planned(name, args=args), sequence=sequence)


def read_partial(values: list[float]) -> dict[str, float]:
    return {key.replace("__out.", "__partial."): value for key, value in read_out(values).items()}


MADE = {"buffer": "int32", "count": 4, "fill": "iota", "name": "partial"}
USED = {"use": "partial"}


def test_the_steps_of_a_sequence_share_their_buffers_until_its_last_step(tmp_path: Path):
    fake = FakeLauncher(0)
    first, second = step("s#1", "s", MADE), step("s#2", "s", USED)
    alone = planned("alone")
    statuses = run_with(tmp_path, fake, first, second, alone)
    assert [s.ok for s in statuses] == [True, True, True]
    one, two = case_number("s#1"), case_number("s#2")
    # the second step's kernel saw what the first left in partial, and added its own number to it
    assert statuses[0].values == read_partial([one + i for i in range(4)])
    assert statuses[1].values == read_partial([one + two + i for i in range(4)])
    # partial lived until the sequence ended: freed before the next case allocated its buffer
    [partial_base, alone_base] = fake.memory
    assert fake.freed.index(partial_base) == 0 and fake.freed[-1] == alone_base


def test_a_step_after_a_failed_step_of_its_sequence_does_not_run(tmp_path: Path):
    fake = FakeLauncher(0, refused=frozenset({"s#1"}))
    statuses = run_with(tmp_path, fake, step("s#1", "s", MADE), step("s#2", "s", USED), planned("next"))
    assert [s.ok for s in statuses] == [False, False, True]
    assert statuses[1].error == "not run: an earlier step of its sequence failed"
    assert fake.launches == ["next"]


def test_a_step_without_the_step_that_makes_its_buffer_fails_saying_so(tmp_path: Path):
    [status] = run_with(tmp_path, FakeLauncher(0), step("s#2", "s", USED))
    assert not status.ok
    assert "buffer 'partial': the earlier step that makes it did not run before this one" in str(status.error)


def test_two_sequences_in_a_row_do_not_share_buffers(tmp_path: Path):
    fake = FakeLauncher(0)
    cases = [step("a#1", "a", MADE), step("b#1", "b", MADE), step("b#2", "b", USED)]
    statuses = run_with(tmp_path, fake, *cases)
    assert all(s.ok for s in statuses)
    a_base, b_base = fake.memory
    assert fake.freed == [a_base, b_base], "a's buffer freed when b began"
    b = case_number("b#1") + case_number("b#2")
    assert statuses[2].values["buffer__partial.first"] == b, "b#2 saw b#1's buffer, not a#1's"


def test_with_a_gate_cuda_starts_but_nothing_launches_until_it_opens_and_the_wait_is_progress(
    tmp_path: Path, monkeypatch
):
    import threading
    import time

    from ncuverify.runner import run as run_module

    monkeypatch.setattr(run_module, "_GATE_PROGRESS_S", 0.05)
    gate = tmp_path / "gate"
    events: list[tuple[str, float]] = []

    class Noted(FakeLauncher):
        def launch(self, kernel, case, args) -> None:
            events.append(("launch", time.monotonic()))
            super().launch(kernel, case, args)

    def started(device: int) -> FakeLauncher:
        events.append(("cuda", time.monotonic()))
        return Noted(device)

    def open_gate() -> None:
        # Once CUDA has started and the wait has been written as progress a few times: each looked for
        # (not slept on) within a bound only a runner that never gets there reaches.
        looking_until = time.monotonic() + 30
        while time.monotonic() < looking_until and not (events and waited_steps() > 4):
            time.sleep(0.01)
        events.append(("open", time.monotonic()))
        gate.touch()

    def waited_steps() -> int:
        try:
            progress = Progress.from_json((tmp_path / PROGRESS_FILE).read_text())
        except FileNotFoundError:
            return 0
        return progress.step if progress is not None else 0

    opener = threading.Thread(target=open_gate)
    opener.start()
    plan = Plan(0, str(tmp_path / "status.json"), [planned("a", args=())], str(gate))
    statuses = run_plan(plan, started)
    opener.join()
    assert [name for name, _ in events] == ["cuda", "open", "launch"]
    assert statuses == [CaseStatus("a", True, None, "k_a", 1, {})]
    # rewritten while it waited (each step counts one write): more than start, case start, end, done
    assert Progress.from_json((tmp_path / PROGRESS_FILE).read_text()).step > 4
    plan.write(tmp_path / "plan.json")
    assert Plan.read(tmp_path / "plan.json").gate == str(gate)  # the profile stage's plan carries it


def test_the_runner_says_cuda_has_started_and_waits_for_later_processes_cuda_before_it_launches(
    tmp_path: Path,
):
    import threading
    import time

    ready, later = tmp_path / "this.ready", tmp_path / "later.ready"
    events: list[str] = []

    class Noted(FakeLauncher):
        def launch(self, kernel, case, args) -> None:
            events.append("launch")
            super().launch(kernel, case, args)

    def started(device: int) -> FakeLauncher:
        events.append("cuda")
        return Noted(device)

    def later_process() -> None:  # starts CUDA after this one's
        while not ready.exists():
            time.sleep(0.01)
        events.append("ready")
        time.sleep(0.3)
        events.append("later")
        later.touch()

    other = threading.Thread(target=later_process)
    other.start()
    gate = tmp_path / "gate"
    gate.touch()
    plan = Plan(0, str(tmp_path / "status.json"), [planned("a")], str(gate), str(ready), [str(later)])
    statuses = run_plan(plan, started)
    other.join()
    assert events == ["cuda", "ready", "later", "launch"] and statuses[0].ok
    plan.write(tmp_path / "plan.json")
    read = Plan.read(tmp_path / "plan.json")
    assert (read.ready, read.wait_ready) == (str(ready), [str(later)])


def test_a_runner_whose_cuda_does_not_start_still_says_so_and_launches_nothing(tmp_path: Path):
    ready = tmp_path / "ready"

    def fails(device: int) -> FakeLauncher:
        raise RuntimeError("CUDA_ERROR_NO_DEVICE")

    plan = Plan(0, str(tmp_path / "status.json"), [planned("a")], ready=str(ready))
    statuses = run_plan(plan, fails)
    assert ready.exists(), "a process before it must not wait for a CUDA that never starts"
    assert not statuses[0].ok and CUDA_DID_NOT_START in str(statuses[0].error)


class NotedLauncher(FakeLauncher):
    """A fake that notes, at each launch, whether the next process's gate was open already."""

    def __init__(self, gate: Path, **faults: frozenset[str]) -> None:
        super().__init__(0, **faults)
        self.gate = gate
        self.open_at_launch: list[bool] = []

    def launch(self, kernel: object, case: PlannedCase, args) -> None:
        self.open_at_launch.append(self.gate.exists())
        super().launch(kernel, case, args)


def test_once_every_case_has_run_the_runner_opens_the_next_process_s_gate(tmp_path: Path):
    opens = tmp_path / "next.gate"
    fake = NotedLauncher(opens, refused=frozenset({"refused"}))
    plan = replace(plan_of(tmp_path, planned("a"), planned("refused"), planned("b")), opens=str(opens))
    statuses = run_plan(plan, lambda device: fake)
    assert [s.ok for s in statuses] == [True, False, True]  # a refused launch leaves CUDA usable
    assert opens.exists() and fake.open_at_launch == [False, False, False]
    plan.write(tmp_path / "plan.json")
    assert Plan.read(tmp_path / "plan.json").opens == str(opens)  # the profile stage's plan carries it


def test_a_fault_that_loses_the_context_leaves_the_next_gate_to_the_profile_stage(tmp_path: Path):
    # the cases after the fault run again in a fresh process, before the next process may launch
    for faulting in ("b", "last"):
        opens = tmp_path / f"{faulting}.gate"
        fake = NotedLauncher(opens, faults=frozenset({faulting}))
        plan = replace(plan_of(tmp_path, planned("a"), planned(faulting), planned("z")), opens=str(opens))
        if faulting == "last":
            plan = replace(plan, cases=plan.cases[:2])
        statuses = run_plan(plan, lambda device, fake=fake: fake)
        assert statuses[-1].context_lost and not opens.exists()
