"""A whole run's profile: every file's cases in few ncu processes, over the GPUs, within the case timeout."""

import itertools
import json
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import COMPILE_CACHE, DATA, NO_GPU

from ncuverify.build import BuildLimits, build_spec
from ncuverify.environment import Environment, Gpu
from ncuverify.names import REPEATS, QualifiedCase
from ncuverify.options import CheckOptions
from ncuverify.pipeline import check_files
from ncuverify.processes import group_ended
from ncuverify.profile import NcuOptions, schedule, session
from ncuverify.profile.plan import FileCases, case_metrics
from ncuverify.profile.schedule import PassCounts
from ncuverify.profile.work import is_driver_command
from ncuverify.results import FileResult, Verdict, exit_code, file_key
from ncuverify.spec import load
from ncuverify.stages.prepare import split_claims

FAKE_NCU = DATA / "fake_ncu" / "ncu"


def fake_run(tmp_path: Path, monkeypatch, gpus: tuple[int, ...]) -> tuple[list, list[dict]]:
    """Check three files with a stand-in for ncu on a machine said to have two GPUs."""
    notes = tmp_path / f"notes-{len(gpus)}.jsonl"
    monkeypatch.setenv("FAKE_NCU_NOTES", str(notes))
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    environment = Environment(Gpu(0, "Fake GPU", "sm_90", "13.0"), str(FAKE_NCU), None, gpu_count=2)
    options = CheckOptions(
        cache=COMPILE_CACHE,
        ncu=NcuOptions(executable=str(FAKE_NCU)),
        gpus=gpus,
        explain=False,
        save_profile=tmp_path / f"saved{len(gpus)}",
    )
    files = [DATA / "sample.yaml", DATA / "static.yaml", DATA / "shared.yaml"]
    results = check_files(files, options, environment)
    return results, [json.loads(line) for line in notes.read_text().splitlines()]


def test_a_run_profiles_every_file_in_few_processes_and_splits_the_results_back(tmp_path: Path, monkeypatch):
    results, processes = fake_run(tmp_path, monkeypatch, (0,))
    assert all(r.input_error is None for r in results)
    profiled = [name for process in processes for name in process["cases"] if not name.endswith(REPEATS)]
    assert sorted(profiled) == sorted(
        str(QualifiedCase(file_key(path), case))
        for path in (DATA / "sample.yaml", DATA / "static.yaml", DATA / "shared.yaml")
        for case in case_metrics(load(path), split_claims(load(path).content.claims)[1])
    )
    assert len(processes) < 3, "fewer processes than files"
    assert {p["gpu"] for p in processes} == {"0"}
    # Each file's measurements carry its own case names, with the fake's values (a metric's name length).
    sample = results[0].measurements
    sectors = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
    assert sample is not None and sample.value("stride1", sectors) == len(sectors)


def test_two_gpus_share_the_cases_and_give_the_verdicts_of_one(tmp_path: Path, monkeypatch):
    one, _ = fake_run(tmp_path, monkeypatch, (0,))
    two, processes = fake_run(tmp_path, monkeypatch, (0, 1))
    assert {p["gpu"] for p in processes} == {"0", "1"}
    profiled = [name for process in processes for name in process["cases"]]
    assert len(profiled) == len(set(profiled)), "every case once"
    assert [[(c.claim.id, c.verdict, c.measured) for c in r.claims] for r in two] == [
        [(c.claim.id, c.verdict, c.measured) for c in r.claims] for r in one
    ]
    # The recording of the two-GPU run replays to the same verdicts without a GPU.
    replayed = check_files(
        [DATA / "sample.yaml", DATA / "static.yaml", DATA / "shared.yaml"],
        CheckOptions(cache=COMPILE_CACHE, from_profile=tmp_path / "saved2"),
        NO_GPU,
    )
    assert [[(c.claim.id, c.verdict) for c in r.claims] for r in replayed] == [
        [(c.claim.id, c.verdict) for c in r.claims] for r in two
    ]


def test_ncu_s_pass_counts_are_remembered_for_the_next_run(tmp_path: Path, monkeypatch):
    passes = PassCounts.load(tmp_path / "passes.json")
    monkeypatch.setenv("FAKE_NCU_NOTES", str(tmp_path / "notes.jsonl"))
    environment = Environment(Gpu(0, "Fake GPU", "sm_90", "13.0"), str(FAKE_NCU), None, gpu_count=1)
    options = CheckOptions(
        cache=COMPILE_CACHE, ncu=NcuOptions(executable=str(FAKE_NCU)), passes=passes, explain=False
    )
    check_files([DATA / "sample.yaml"], options, environment)
    saved = json.loads((tmp_path / "passes.json").read_text())
    assert saved and set(saved.values()) == {4}  # what the fake ncu reported


def test_ctrl_c_while_profiling_keeps_the_static_verdicts(monkeypatch):
    from ncuverify.pipeline import Interrupted
    from ncuverify.profile import session

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(session, "profile_files", interrupted)
    environment = Environment(Gpu(0, "Fake GPU", "sm_90", "13.0"), str(FAKE_NCU), None, gpu_count=1)
    try:
        check_files([DATA / "static.yaml"], CheckOptions(cache=COMPILE_CACHE, explain=False), environment)
    except Interrupted as stopped:
        [result] = stopped.results
    else:
        raise AssertionError("the interrupt was swallowed")
    by_verdict = {c.verdict for c in result.claims}
    assert by_verdict == {Verdict.PASSED, Verdict.SKIPPED}
    skipped = [c for c in result.claims if c.verdict is Verdict.SKIPPED]
    assert all("interrupted before these claims were profiled" in (c.reason or "") for c in skipped)
    assert exit_code([result]) == 3


def test_each_case_gets_its_own_launches_values(tmp_path: Path, monkeypatch):
    """With values that differ per case, a launch given to the wrong case would show."""
    import zlib

    monkeypatch.setenv("FAKE_NCU_VALUES", "by_case")
    results, _ = fake_run(tmp_path, monkeypatch, (0,))
    sectors = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
    for result in results:
        measured = result.measurements
        assert measured is not None
        for case in measured.frame[measured.frame["metric"] == sectors]["case"]:
            own = zlib.crc32(str(QualifiedCase(file_key(result.path), case)).encode()) % 997
            assert measured.value(case, sectors) == len(sectors) + 1000 * own, case


def test_a_repeated_case_takes_its_time_from_its_repeats_and_its_counters_from_one_launch(
    tmp_path: Path, monkeypatch
):
    import zlib

    monkeypatch.setenv("FAKE_NCU_VALUES", "by_case")
    results, processes = fake_run(tmp_path, monkeypatch, (0,))
    stride32 = str(QualifiedCase(file_key(DATA / "sample.yaml"), "stride32"))
    launched = [case for process in processes for case in process["cases"]]
    assert stride32 in launched and stride32 + REPEATS in launched  # repeat: 3, time beside sectors
    plans = [json.loads(p.read_text()) for p in (tmp_path / "saved1" / "runs").glob("*/*/plan.json")]
    repeats = {c["name"]: c["repeat"] for plan in plans for c in plan["cases"]}
    assert repeats[stride32] == 1 and repeats[stride32 + REPEATS] == 3
    measured = results[0].measurements
    assert measured is not None and "stride32 (repeats)" not in measured.cases
    time, sectors = "gpu__time_duration.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"

    def own(name: str) -> int:
        return zlib.crc32(name.encode()) % 997

    assert measured.value("stride32", time) == len(time) + 1000 * own(stride32 + REPEATS)
    assert measured.value("stride32", sectors) == len(sectors) + 1000 * own(stride32)
    # a case with repeat 1 is launched once, with all its metrics
    assert measured.value("stride1", time) == len(time) + 1000 * own(
        str(QualifiedCase(file_key(DATA / "sample.yaml"), "stride1"))
    )
    # its recording replays to the same figures, the repeats' time included
    files = [DATA / "sample.yaml", DATA / "static.yaml", DATA / "shared.yaml"]
    options = CheckOptions(cache=COMPILE_CACHE, from_profile=tmp_path / "saved1")
    replayed = check_files(files, options, NO_GPU)[0].measurements
    assert replayed is not None and sorted(replayed.rows) == sorted(measured.rows)


STALLING_NCU = DATA / "fake_ncu" / "stalling_ncu"


def stalled_check(tmp_path: Path, monkeypatch, stall: str) -> list:
    """Check sample.yaml with an ncu that stops where stall says, under a 1 s case timeout, its
    temporary folder in tmp_path/tmp."""
    import tempfile

    monkeypatch.setenv("FAKE_NCU_NOTES", str(tmp_path / "notes.jsonl"))
    monkeypatch.setenv("FAKE_NCU_STALL", stall)
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    environment = Environment(Gpu(0, "Fake GPU", "sm_90", "13.0"), str(STALLING_NCU), None, gpu_count=1)
    options = CheckOptions(
        cache=COMPILE_CACHE, ncu=NcuOptions(executable=str(STALLING_NCU), case_timeout_s=1), explain=False
    )
    [result] = check_files([DATA / "sample.yaml"], options, environment)
    started = [json.loads(line) for line in (tmp_path / "notes.jsonl").read_text().splitlines()]
    for group in {start["pgid"] for start in started if start["argument"] != "--version"}:
        assert group_ended(group)  # a profiling ncu's group has ended once check returns
    assert list((tmp_path / "tmp").iterdir()) == [], "the work folder is gone"
    return [c for c in result.claims if c.verdict is not Verdict.PASSED or "static__" in c.claim.metric]


def test_a_check_with_an_ncu_that_never_starts_the_runner_ends_with_why(tmp_path: Path, monkeypatch):
    judged = stalled_check(tmp_path, monkeypatch, "before_runner")
    errors = [c for c in judged if c.verdict is Verdict.ERROR]
    assert errors and all(
        c.reason == f"case {c.claim.case} did not run: ncu did not start the runner within 1 s; stopped"
        for c in errors
        if c.claim.case
    )


def test_a_check_with_an_ncu_that_hangs_after_the_runner_without_a_report_ends_with_why(
    tmp_path: Path, monkeypatch
):
    monkeypatch.setenv("FAKE_NCU_CSV", "none")
    judged = stalled_check(tmp_path, monkeypatch, "after_runner")
    errors = [c for c in judged if c.verdict is Verdict.ERROR]
    why = "ncu did not end within 1 s after the runner's last case; stopped"
    assert errors and all(
        c.reason == f"case {c.claim.case} did not run: {why}" for c in errors if c.claim.case
    )


def test_a_check_with_an_ncu_that_hangs_after_a_whole_report_keeps_its_figures(tmp_path: Path, monkeypatch):
    judged = stalled_check(tmp_path, monkeypatch, "after_runner")
    assert not [c for c in judged if c.verdict is Verdict.ERROR]


def test_a_kept_profile_s_folder_used_again_profiles_today_s_kernels(tmp_path: Path, monkeypatch):
    stale = tmp_path / "saved1" / "cubins" / "0.read_stride1.cubin"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"an earlier build")
    results, _ = fake_run(tmp_path, monkeypatch, (0,))
    assert all(r.input_error is None for r in results)
    assert stale.read_bytes() != b"an earlier build" and stale.read_bytes().startswith(b"\x7fELF")


def test_a_kept_profile_s_folder_is_never_written_through_a_link(tmp_path: Path, monkeypatch):
    victim = tmp_path / "victim"
    victim.write_bytes(b"keep me")
    link = tmp_path / "saved1" / "cubins" / "0.read_stride1.cubin"
    link.parent.mkdir(parents=True)
    link.symlink_to(victim)
    (tmp_path / "notes-1.jsonl").touch()  # ncu never runs
    results, processes = fake_run(tmp_path, monkeypatch, (0,))
    assert processes == []
    refused = f"{link}: a symbolic link; refusing to write the recording through it"
    assert [r.input_error for r in results if r.path.stem == "sample"] == [refused]
    assert victim.read_bytes() == b"keep me"


def copy_file(first: str) -> str:
    """An expectation file's kernel and its first case, a launch of the copy kernel named `&launch`."""
    return f"""kernels:
  copy: {{file: copy.cu, entry: copy}}
cases:
  {first}: &launch
    kernel: copy
    grid: 1
    block: 32
    args: [{{buffer: float32, count: 32}}, {{buffer: float32, count: 32, name: out}}, {{int32: 32}}]
"""


SEQUENCE_FILE = (
    copy_file("before")
    + """  reduce:
    steps:
      - *launch
      - {kernel: copy, grid: 1, block: 32, args: [{use: out}, {buffer: float32, count: 32}, {int32: 32}]}
  after: *launch
claims:
"""
)


def checked_with_fake_ncu(folder: Path, text: str, monkeypatch, **options) -> tuple[FileResult, list[dict]]:
    """An expectation file of copy kernels written in folder and checked with the stand-in ncu (options:
    CheckOptions' own, ncu's executable already the stand-in): its result, and each ncu process's notes."""
    from sweep_files import KERNEL

    folder.mkdir(exist_ok=True)
    (folder / "copy.cu").write_text(KERNEL)
    (folder / ".ncuverify-root").touch()
    (folder / "checked.yaml").write_text(text)
    monkeypatch.setenv("FAKE_NCU_NOTES", str(folder / "notes.jsonl"))
    environment = Environment(Gpu(0, "Fake GPU", "sm_90", "13.0"), str(FAKE_NCU), None, gpu_count=1)
    run = CheckOptions(**{"cache": COMPILE_CACHE, "ncu": NcuOptions(executable=str(FAKE_NCU)), **options})
    [result] = check_files([folder / "checked.yaml"], run, environment)
    notes = [json.loads(line) for line in (folder / "notes.jsonl").read_text().splitlines()]
    return result, [note for note in notes if "cases" in note]


def sequence_check(
    tmp_path: Path, monkeypatch, faulting: str, metric: str = "dram__bytes_read.sum", explain: bool = False
) -> tuple[dict, list[list[str]]]:
    """A sequence between two cases, checked with a stand-in ncu under which `faulting` faults: each
    claim's verdict and reason, and the cases of each ncu process."""
    from sweep_files import claim

    claims = "".join(
        claim(name, case, metric) for name, case in [("b", "before"), ("r", "reduce#2"), ("a", "after")]
    )
    monkeypatch.setenv("FAKE_NCU_FAULT", faulting)
    result, notes = checked_with_fake_ncu(
        tmp_path, SEQUENCE_FILE + claims, monkeypatch, explain=explain, save_profile=tmp_path / "saved"
    )
    processes = [[c.rsplit("::", 1)[1] for c in note["cases"]] for note in notes]
    return {c.claim.id: (c.verdict, c.reason) for c in result.claims}, processes


def test_a_sequence_runs_after_its_earlier_steps_and_again_whole_after_a_fault_before_it(
    tmp_path: Path, monkeypatch
):
    verdicts, processes = sequence_check(tmp_path, monkeypatch, "before")
    # reduce#1 has no claim of its own, but runs before reduce#2; after `before` faulted, the rest
    # ran again in a fresh process, the sequence whole and in order
    assert processes == [["before", "reduce#1", "reduce#2", "after"], ["reduce#1", "reduce#2", "after"]]
    assert verdicts["b"][0] is Verdict.ERROR
    assert verdicts["r"][0] is not Verdict.ERROR and verdicts["a"][0] is not Verdict.ERROR


def test_the_steps_after_a_step_that_faulted_are_not_run_again_alone(tmp_path: Path, monkeypatch):
    verdicts, processes = sequence_check(tmp_path, monkeypatch, "reduce#1")
    assert processes == [["before", "reduce#1", "reduce#2", "after"], ["after"]]
    assert (
        verdicts["r"][0] is Verdict.ERROR
        and "not run: an earlier step of its sequence failed" in verdicts["r"][1]
    )
    assert verdicts["b"][0] is not Verdict.ERROR and verdicts["a"][0] is not Verdict.ERROR


def test_a_step_is_explained_from_a_pass_that_runs_the_steps_before_it(tmp_path: Path, monkeypatch):
    # the stand-in's figures fail every coalescing claim
    verdicts, processes = sequence_check(
        tmp_path, monkeypatch, "", "global_ld_sectors_per_request", explain=True
    )
    assert {verdict for verdict, _ in verdicts.values()} == {Verdict.FAILED}
    assert processes[-1] == ["before", "reduce#1", "reduce#2", "after"], "one pass, reduce#1 before reduce#2"
    kept = json.loads((tmp_path / "saved" / "explain.json").read_text())
    assert [(name.rsplit("::", 1)[1], topic) for name, topic in kept.items()] == [
        ("before", "global"),
        ("reduce#1", None),
        ("reduce#2", "global"),
        ("after", "global"),
    ]


OVERLAP_FILE = """kernels:
  copy: {file: copy.cu, entry: copy}
  timed:
    source: |
      extern "C" __global__ void timed(const float* in, long long* cycles, int n) {
          long long start = clock64();
          float x = in[threadIdx.x % n];
          cycles[threadIdx.x] = clock64() - start + (x > 1e30f);
      }
    entry: timed
cases:
  a: &launch
    kernel: copy
    grid: 1
    block: 32
    args: [{buffer: float32, count: 32}, {buffer: float32, count: 32}, {int32: 32}]
  b: *launch
  timed: &timed
    kernel: timed
    grid: 1
    block: 32
    args: [{buffer: float32, count: 32}, {buffer: int64, count: 32, name: cycles}, {int32: 32}]
  timed2: *timed
claims:
"""


def overlap_check(tmp_path: Path, monkeypatch, per_gpu: int) -> tuple[list, list[dict]]:
    """Four cases that ncu profiles in four processes (their metrics cost too many passes together;
    timed and timed2 read back what a clock-reading kernel wrote), each process taking 0.3 s to start
    CUDA, 1 s to profile and 0.5 s more to end: the verdicts, and each process's notes."""
    from sweep_files import claim

    metrics = {
        "a": "dram__bytes_read.sum",
        "b": "dram__bytes_write.sum",
        "timed": "gpu__time_duration.sum",
        "timed2": "sm__cycles_elapsed.max",
    }
    claims = "".join(claim(case, case, metric) for case, metric in metrics.items())
    monkeypatch.setenv("FAKE_NCU_SLEEP", "1")
    monkeypatch.setenv("FAKE_NCU_END_SLEEP", "0.5")
    monkeypatch.setenv("FAKE_NCU_CUDA_SLEEP", "0.3")
    passes = PassCounts()
    for metric in metrics.values():
        passes.remember(frozenset({metric}), 1)
    for first, second in itertools.combinations(metrics, 2):
        passes.remember(frozenset({metrics[first], metrics[second]}), 1000)
    result, notes = checked_with_fake_ncu(
        tmp_path / str(per_gpu),
        OVERLAP_FILE + claims,
        monkeypatch,
        ncu=NcuOptions(executable=str(FAKE_NCU), processes_per_gpu=per_gpu),
        passes=passes,
        explain=False,
    )
    return [(c.claim.id, c.verdict, c.measured) for c in result.claims], notes


@pytest.mark.slow
def test_two_ncu_processes_start_at_once_on_a_gpu_but_launch_one_after_the_other(tmp_path, monkeypatch):
    verdicts, processes = overlap_check(tmp_path, monkeypatch, 2)
    by_case = {p["cases"][0].rsplit("::", 1)[1]: p for p in processes}
    assert sorted(by_case) == ["a", "b", "timed", "timed2"] and all(len(p["cases"]) == 1 for p in processes)
    order = sorted(processes, key=lambda p: p["profiled"])
    assert [p["cases"][0].rsplit("::", 1)[1] for p in order][:2] in (["a", "b"], ["b", "a"])
    for earlier, later in itertools.pairwise(order):
        assert later["started"] < earlier["ended"], "each process started while the one before profiled"
        assert later["profiled"] >= earlier["cases_done"], "but launched only once that one's cases had run"
        assert later["profiled"] < earlier["ended"], "while that one's ncu was still ending"
    first_timed, second_timed = order[2:]
    assert [p["waited_for"] for p in order] == [0, 0, 1, 0], (
        "only the first of timed, timed2 (kernels that time themselves) waits for a later process"
    )
    assert [p["says_ready"] for p in order] == [False, False, False, True], "only where one waits for it"
    assert second_timed["started"] < order[1]["ended"], "the second timed one started with the first"
    for timed in (first_timed, second_timed):
        assert timed["started"] < order[0]["cases_done"], (
            "the timed ones started with the last process before them (here the first two), not once"
            " the first had run its cases"
        )
        assert timed["profiled"] >= order[1]["cases_done"], "but launched only once the others had run"
    assert first_timed["profiled"] >= second_timed["ready"], (
        "the first timed one launched only once the second one's CUDA had started"
    )
    one_at_a_time, processes = overlap_check(tmp_path, monkeypatch, 1)
    ordered = sorted(processes, key=lambda p: p["started"])
    assert all(later["started"] >= earlier["ended"] for earlier, later in itertools.pairwise(ordered))
    assert not any(p["waited_for"] for p in processes)
    assert one_at_a_time == verdicts


def test_a_chain_starts_each_process_in_its_turn_and_a_failure_stops_those_not_begun():
    import threading
    import time
    from collections.abc import Callable

    from ncuverify.profile import session

    # An item holds until what it waits for has happened, not for a set time; each wait is bounded
    # far beyond any machine's pace, so that only an order the test rules out runs into the bound.
    bound_s = 30.0
    times: dict[str, tuple[float, float]] = {}
    names = ("first", "second", "third", "fourth", "slow", "never", "fails")
    begun = {name: threading.Event() for name in names}

    def timed(item: tuple[str, Callable[[], object]]) -> str:
        name, hold = item
        began = time.monotonic()
        begun[name].set()
        hold()
        times[name] = (began, time.monotonic())
        return name

    def until_begun(*waited: str) -> Callable[[], object]:
        return lambda: all(begun[name].wait(bound_s) for name in waited)

    def briefly() -> None:  # long enough for an item that did not wait its turn to begin meanwhile
        time.sleep(0.3)

    def at_once() -> None:
        pass

    def afresh() -> None:
        times.clear()
        for event in begun.values():
            event.clear()

    class Stop(threading.Event):
        """The run's stop, noting once an item waiting its turn has found it set."""

        def __init__(self) -> None:
            super().__init__()
            self.found = threading.Event()

        def is_set(self) -> bool:
            found = super().is_set()
            if found:
                self.found.set()
            return found

    items = [
        ("first", briefly),
        ("second", until_begun("third", "fourth")),
        ("third", at_once),
        ("fourth", at_once),
    ]
    stop = Stop()
    assert session._in_turn(timed, items, [0, 0, 1, 1], stop) == ["first", "second", "third", "fourth"]
    for late in ("third", "fourth"):
        assert times["first"][1] <= times[late][0] < times["second"][1], "once the first ended, not later"

    afresh()
    released = threading.Event()

    def released_then_ending() -> None:  # the first item's cases have run; its end takes longer
        released.set()
        until_begun("second")()

    items = [("first", released_then_ending), ("second", at_once)]
    assert session._in_turn(timed, items, [0, 1], stop, lambda at: at == 0 and released.is_set()) == [
        "first",
        "second",
    ]
    assert times["second"][0] < times["first"][1], "the second began once the first was released"

    def failing(item: tuple[str, Callable[[], object]]) -> str:
        if item[0] == "fails":
            begun["slow"].wait(bound_s)  # fails once the other chain's first process has begun
            raise ValueError("the ncu process failed")
        return timed(item)

    def chain(items: list[tuple[str, Callable[[], object]]]) -> list[str]:
        return session._in_turn(failing, items, list(range(len(items))), stop)

    afresh()

    def until_stopped() -> None:  # and an item waiting its turn has found the run stopped
        stop.wait(bound_s)
        stop.found.wait(5.0)  # a moment, should it look in another way than is_set

    chains = [[("slow", until_stopped), ("never", at_once)], [("fails", at_once)]]
    with pytest.raises(ValueError, match="the ncu process failed"):  # not the chain that was stopped
        session._in_turn(chain, chains, [0, 0], stop)
    assert stop.is_set() and sorted(times) == ["slow"], "after the failure, nothing more began"


def test_an_item_due_once_the_one_before_fails_is_not_begun():
    # The failing item sets stop, then ends: the item waiting on it is due and stopped at once.
    import threading
    import time

    from ncuverify.profile import session

    stop, begun = threading.Event(), []

    def call(item: str) -> str:
        if item == "fails":
            time.sleep(0.2)  # the next item is waiting by then
            raise ValueError("the ncu process failed")
        begun.append(item)
        return item

    with pytest.raises(ValueError, match="the ncu process failed"):
        session._in_turn(call, ["fails", "next"], [0, 1], stop)
    assert begun == []


def test_a_schedule_predicts_each_process_s_launch_passes_with_the_chip_s_model(tmp_path: Path):
    spec = load(DATA / "sample.yaml")
    builds = build_spec(spec, "sm_90", COMPILE_CACHE, BuildLimits(sass=True))
    _, profiler_claims = split_claims(spec.content.claims)
    files = [FileCases("sample", spec, builds, profiler_claims)]
    plan = session.scheduled(files, tmp_path, session.Settings(NcuOptions()))
    assert plan.passes.model.chip == "GH100"
    launches = [sum(c.launches for c in plan.cases if c.cases[0] in unit.cases) for unit in plan.units]
    each = [plan.passes.passes(unit.metrics) for unit in plan.units]
    assert plan.launch_passes() == [n * p for n, p in zip(launches, each, strict=True)]
    assert sum(launches) == sum(c.launches for c in plan.cases)
    asked = frozenset().union(*(unit.metrics for unit in plan.units))
    # ncu is asked for the metric the claims name (no stand-in: see docs/internals.md)
    assert "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum" in asked
    assert "smsp__inst_executed_op_global_ld.sum" not in asked


def test_units_that_must_be_alone_start_with_the_last_unit_before_them():
    def unit(alone: bool) -> tuple[int, schedule.Unit]:
        return (0, schedule.Unit(0, frozenset(), (), alone))

    chain = [unit(False)] * 4 + [unit(True)] * 3
    # two at once: each unit starts once all but one before it have run their cases; the three alone
    # start with the fourth, so that their starts hide behind the third's and fourth's launches
    assert session._starts_after(chain, 2) == [0, 0, 1, 2, 2, 2, 2]
    assert session._starts_after(chain, 3) == [0, 0, 0, 1, 1, 1, 1]
    assert session._starts_after(chain, 1) == list(range(7))  # one after another
    assert session._starts_after([unit(True)] * 2, 2) == [0, 0]


FACTS_FILE = (
    copy_file("counted")
    + """  limited: *launch
claims:
"""
)


def test_a_case_that_needs_no_ncu_runs_in_the_runner_alone_and_is_recorded_so(tmp_path: Path, monkeypatch):
    from sweep_files import claim

    claims = claim("c", "counted", "dram__bytes_read.sum") + claim(
        "l", "limited", "launch__occupancy_limit_warps"
    )
    # No GPU for the runner, here or on a machine with one: CUDA cannot start in the process without ncu.
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-00000000-0000-0000-0000-000000000000")
    saved = tmp_path / "saved"
    result, notes = checked_with_fake_ncu(
        tmp_path, FACTS_FILE + claims, monkeypatch, save_profile=saved, explain=False, driver_facts=True
    )
    assert [[c.rsplit("::", 1)[1] for c in note["cases"]] for note in notes] == [["counted"]], "ncu's alone"
    verdicts = {c.claim.id: c for c in result.claims}
    assert verdicts["c"].verdict is not Verdict.ERROR
    assert verdicts["l"].verdict is Verdict.ERROR and "CUDA could not start" in str(verdicts["l"].reason)
    commands = json.loads((saved / "commands.json").read_text())
    assert [is_driver_command(command) for command in commands] == [False, True]
    assert commands[1][1:] == ["-m", "ncuverify.runner", str(saved / "runs" / "1" / "0" / "plan.json")]
    plan = json.loads((saved / "runs" / "1" / "0" / "plan.json").read_text())
    assert plan["facts"] == ["launch__occupancy_limit_warps"] and plan["report"].endswith("ncu.log")
    provenance = json.loads((saved / "provenance.json").read_text())
    assert provenance["ncu_command"] == commands[0], "ncu's own command"
    _, notes = checked_with_fake_ncu(
        tmp_path,
        FACTS_FILE + claims,
        monkeypatch,
        save_profile=tmp_path / "again",
        explain=False,
    )
    assert [[c.rsplit("::", 1)[1] for c in note["cases"]] for note in notes][-1] == ["counted", "limited"]


def test_a_recorded_process_without_ncu_replays_its_facts(tmp_path: Path, monkeypatch):
    from sweep_files import claim
    from test_runner_facts import FactsFake

    from ncuverify.runner.plan import Plan
    from ncuverify.runner.run import run_plan

    claims = claim("c", "counted", "dram__bytes_read.sum") + claim(
        "l", "limited", "launch__occupancy_limit_warps"
    )
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-00000000-0000-0000-0000-000000000000")
    saved = tmp_path / "saved"
    checked_with_fake_ncu(
        tmp_path, FACTS_FILE + claims, monkeypatch, save_profile=saved, explain=False, driver_facts=True
    )
    # The process without ncu run again as on a GPU, on a stand-in for one, into the recording's files.
    plan = Plan.read(saved / "runs" / "1" / "0" / "plan.json")
    run_plan(
        replace(plan, status_path=str(saved / "status.1.json"), report=str(saved / "ncu.1.log")),
        lambda device: FactsFake(device),
    )
    options = CheckOptions(cache=COMPILE_CACHE, from_profile=saved, explain=False)
    [replayed] = check_files([tmp_path / "checked.yaml"], options, NO_GPU)
    verdicts = {c.claim.id: c for c in replayed.claims}
    # 32 threads a block: the warps allow 64 blocks an SM (the claim expects 4)
    assert (verdicts["l"].verdict, verdicts["l"].measured) == (Verdict.FAILED, 64)
    assert verdicts["c"].verdict is not Verdict.ERROR
