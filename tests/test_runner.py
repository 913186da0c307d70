"""The runner's host side: buffer contents, the plan's round trip, the per-case status it writes and
its progress (launching needs a GPU: test_gpu)."""

import contextlib
import json
from pathlib import Path

import numpy as np
import pytest
from conftest import FIXTURES, RECORDINGS
from hypothesis import given, settings
from hypothesis import strategies as st

from ncuverify.runner import (
    MAX_LAUNCHES,
    PROGRESS_FILE,
    RANDOM_INT_LIMIT,
    CaseStatus,
    Plan,
    PlannedCase,
    Progress,
    StatusError,
    host_contents,
    read_statuses,
    run_plan,
    statuses_json,
)


def test_fills():
    assert host_contents({"buffer": "float32", "count": 4}) is None  # zeros: a memset on the device
    assert host_contents({"buffer": "int32", "count": 4, "fill": "iota"}).tolist() == [0, 1, 2, 3]
    constant = host_contents({"buffer": "float16", "count": 3, "fill": "constant", "value": 2.5})
    assert constant.dtype == np.float16 and constant.tolist() == [2.5, 2.5, 2.5]


def test_random_fills_are_seeded_and_bounded():
    first = host_contents({"buffer": "float32", "count": 1000, "fill": "random", "seed": 7})
    again = host_contents({"buffer": "float32", "count": 1000, "fill": "random", "seed": 7})
    other = host_contents({"buffer": "float32", "count": 1000, "fill": "random", "seed": 8})
    assert np.array_equal(first, again) and not np.array_equal(first, other)
    assert first.min() >= 0 and first.max() < 1
    integers = host_contents({"buffer": "uint8", "count": 10000, "fill": "random"})
    assert integers.dtype == np.uint8 and integers.max() < 256
    wide = host_contents({"buffer": "int64", "count": 10000, "fill": "random"})
    assert wide.min() >= 0 and wide.max() < RANDOM_INT_LIMIT


def test_the_plan_survives_its_round_trip(tmp_path):
    case = PlannedCase(
        "c",
        "/k.cubin",
        "_Z1kPf",
        (4, 2, 1),
        (32, 4, 1),
        1024,
        [{"buffer": "float32", "count": 8, "name": "out"}, {"int32": 3}],
        repeat=2,
    )
    plan = Plan(device=0, status_path=str(tmp_path / "status.json"), cases=[case])
    plan.write(tmp_path / "plan.json")
    assert Plan.read(tmp_path / "plan.json") == plan


# --- the per-case outcome ------------------------------------------------------------------------------------


def committed_statuses() -> list[Path]:
    return sorted([*RECORDINGS.glob("status*.json"), *FIXTURES.glob("*/status*.json")])


@pytest.mark.parametrize("path", committed_statuses(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_committed_status_reads_and_writes_back_the_same(path: Path):
    data = json.loads(path.read_text())
    statuses = read_statuses(path.read_text())
    assert [status.to_json() for status in statuses] == data
    assert json.loads(statuses_json(statuses, indent=1)) == data


def test_a_status_says_what_the_runner_wrote():
    [ran, faulted] = read_statuses(
        json.dumps(
            [
                {
                    "case": "a",
                    "kernel": "k",
                    "ok": True,
                    "error": None,
                    "launches": 3,
                    "values": {"buffer__t.max": 2},
                },
                {
                    "case": "b",
                    "ok": False,
                    "error": "CUDA_ERROR_ILLEGAL_ADDRESS",
                    "context_lost": True,
                    "not_run": ["c"],
                },
            ]
        )
    )
    assert ran == CaseStatus("a", True, None, "k", 3, {"buffer__t.max": 2.0})
    assert ran.launch_count == 3 and CaseStatus("x", True).launch_count == 1
    assert faulted.context_lost and faulted.not_run == ("c",) and faulted.kernel is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", "not JSON (Expecting property name enclosed in double quotes: line 1 column 2 (char 1))"),
        ("[" * 100_000, "not JSON (nested too deeply)"),
        ('{"case": "a"}', "not a list of cases"),
        ("[0]", "[0]: not an object"),
        ('[{"case": "a", "ok": 1, "error": null}]', "[0].ok: not true or false"),
        ('[{"case": "a", "ok": "yes"}]', "[0].ok: not true or false"),
        ('[{"ok": true}]', "[0].case: not a name"),
        ('[{"case": ["a"], "ok": true}]', "[0].case: not a name"),
        ('[{"case": "a", "ok": false}]', "[0].error: a case that did not run needs its error"),
        ('[{"case": "a", "ok": false, "error": 7}]', "[0].error: not a string or null"),
        ('[{"case": "a", "ok": true, "kernel": {}}]', "[0].kernel: not a string or null"),
        ('[{"case": "a", "ok": true, "launches": 1e12}]', "[0].launches: not a whole number from 1 to 10000"),
        (
            '[{"case": "a", "ok": true, "launches": 10000000000}]',
            "[0].launches: not a whole number from 1 to 10000",
        ),
        ('[{"case": "a", "ok": true, "launches": true}]', "[0].launches: not a whole number from 1 to 10000"),
        ('[{"case": "a", "ok": true, "launches": 0}]', "[0].launches: not a whole number from 1 to 10000"),
        ('[{"case": "a", "ok": true, "values": [1]}]', "[0].values: not an object"),
        (
            '[{"case": "a", "ok": true, "values": {"gpu__time_duration.sum": 1}}]',
            "[0].values: 'gpu__time_duration.sum' is not a buffer read back (buffer__NAME.STATISTIC)",
        ),
        (
            '[{"case": "a", "ok": true, "values": {"buffer__t.max": "2"}}]',
            "[0].values.buffer__t.max: not a number",
        ),
        (
            '[{"case": "a", "ok": true, "values": {"buffer__t.max": false}}]',
            "[0].values.buffer__t.max: not a number",
        ),
        (
            '[{"case": "a", "ok": false, "error": "e", "context_lost": "yes"}]',
            "[0].context_lost: not true or false",
        ),
        (
            '[{"case": "a", "ok": false, "error": "e", "not_run": "b"}]',
            "[0].not_run: not a list of case names",
        ),
        (
            '[{"case": "a", "ok": false, "error": "e", "not_run": [""]}]',
            "[0].not_run: not a list of case names",
        ),
        ('[{"case": "a", "ok": true, "okay": true}]', "[0].'okay': not a field of a runner status"),
        ('[{"case": "a", "ok": true}, {"case": "a", "ok": true}]', "[1].case: 'a' appears twice"),
        (json.dumps([{"case": "a" * 5000, "ok": True}]), "[0].case: longer than 4096 characters"),
    ],
)
def test_a_status_the_runner_cannot_have_written_is_refused_with_its_field(text: str, message: str):
    with pytest.raises(StatusError) as refused:
        read_statuses(text)
    assert str(refused.value) == message


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4)
    ),
    max_leaves=20,
)
status_like = st.fixed_dictionaries(
    {},
    optional={
        key: json_values | st.sampled_from(samples)
        for key, samples in {
            "case": ["a", "f::b", ""],
            "ok": [True, False],
            "error": [None, "CUDA_ERROR_ILLEGAL_ADDRESS"],
            "kernel": ["k", None],
            "launches": [1, 5, 0, MAX_LAUNCHES + 1],
            "values": [{"buffer__t.max": 1.5}, {}],
            "context_lost": [True, False],
            "not_run": [["c"], []],
        }.items()
    },
)


def as_written(entry: dict) -> str:
    """An entry as to_json writes it back: absent optional fields stay absent, error is always there."""
    kept = {k: v for k, v in entry.items() if v is not None or k == "error"}
    if kept.get("context_lost") is False:
        del kept["context_lost"]
    if "values" in kept:
        kept["values"] = {k: float(v) for k, v in kept["values"].items()}
    return json.dumps({"error": None, **kept}, sort_keys=True)


@settings(max_examples=200, deadline=None)
@given(st.lists(status_like | json_values, max_size=4))
def test_any_json_reads_as_statuses_or_fails_with_a_status_error(data):
    try:
        statuses = read_statuses(json.dumps(data))
    except StatusError as error:
        assert str(error)
        return
    assert [json.dumps(s.to_json(), sort_keys=True) for s in statuses] == [as_written(e) for e in data]


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=200))
def test_any_text_reads_as_statuses_or_fails_with_a_status_error(text):
    with contextlib.suppress(StatusError):
        read_statuses(text)


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


def test_where_cuda_cannot_start_every_case_fails_and_the_progress_says_the_plan_ended(
    tmp_path: Path, monkeypatch
):
    from ncuverify.runner import run as runner

    def no_cuda(device_index: int):
        raise RuntimeError("no CUDA here")

    monkeypatch.setattr(runner, "CudaLauncher", no_cuda)
    cases = [PlannedCase(name, "/none.cubin", "k", (1, 1, 1), (32, 1, 1), 0, []) for name in ("a", "b")]
    plan = Plan(device=0, status_path=str(tmp_path / "status.json"), cases=cases)
    statuses = run_plan(plan)
    assert statuses == [CaseStatus(name, False, "CUDA could not start: no CUDA here", "k") for name in "ab"]
    assert read_statuses((tmp_path / "status.json").read_text()) == statuses
    progress = Progress.from_json((tmp_path / PROGRESS_FILE).read_text())
    assert progress is not None and progress.done and not progress.running
    assert not list(tmp_path.glob("*.partial")), "every file written whole, then renamed"


def test_the_progress_tells_each_case_s_start_and_end_and_a_lost_context_ends_the_plan(
    tmp_path: Path, monkeypatch
):
    from ncuverify.runner import run as runner

    seen: list[Progress | None] = []

    class Launcher:
        def __init__(self, device_index: int) -> None:
            self.lost = False

        def run(self, case: PlannedCase) -> dict[str, float]:
            seen.append(Progress.from_json((tmp_path / PROGRESS_FILE).read_text()))
            if case.name == "faults":
                self.lost = True
                raise RuntimeError("CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access")
            return {"buffer__out.max": 7.0}

        def usable(self) -> bool:
            return not self.lost

    monkeypatch.setattr(runner, "CudaLauncher", Launcher)
    names = ("first", "faults", "never")
    cases = [PlannedCase(name, "/k.cubin", "k", (1, 1, 1), (32, 1, 1), 0, [], repeat=2) for name in names]
    statuses = run_plan(Plan(device=0, status_path=str(tmp_path / "status.json"), cases=cases))
    assert seen == [Progress("first", True, False, 2), Progress("faults", True, False, 4)]
    assert statuses == [
        CaseStatus("first", True, None, "k", 2, {"buffer__out.max": 7.0}),
        CaseStatus(
            "faults",
            False,
            "RuntimeError: CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access",
            "k",
            context_lost=True,
            not_run=("never",),
        ),
    ]
    assert read_statuses((tmp_path / "status.json").read_text()) == statuses
    assert Progress.from_json((tmp_path / PROGRESS_FILE).read_text()) == Progress("faults", False, True, 5)
