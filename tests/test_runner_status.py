"""The per-case status the runner writes, and what reading one refuses."""

import contextlib
import json
from pathlib import Path

import pytest
from conftest import FIXTURES, RECORDINGS
from hypothesis import given, settings
from hypothesis import strategies as st

from ncuverify.runner.status import MAX_LAUNCHES, CaseStatus, StatusError, read_statuses, statuses_json


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
