"""The ratchet over kernel sets against a baseline: growth fails naming kernel and fact, shrinking is an
improvement, kernels added and removed are listed, the allow-list accepts a growth and warns when it
accepts nothing. The end-to-end test builds a source of its own with NVRTC (no GPU)."""

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml
from cli_invoke import invoke_command
from test_judge_sets import spec_of

from ncuverify.baseline import ratchet
from ncuverify.baseline import snapshot as baselines
from ncuverify.baseline.snapshot import Baseline
from ncuverify.measurements import MEASUREMENT_COLUMNS, Measurements
from ncuverify.results import FileResult

CITE = {"document": "d", "section": "1", "figure": "f"}


def result_of(tmp_path: Path, facts: dict[str, dict[str, float]], allow=()) -> FileResult:
    spec = spec_of(tmp_path, allow)
    rows = [(f"gemms[{k}]", f"_Z{k}", m, v, "") for k, values in facts.items() for m, v in values.items()]
    frame = pd.DataFrame(rows, columns=MEASUREMENT_COLUMNS)
    return FileResult(spec.path, [], measurements=Measurements.of_frame(frame), spec=spec, key="k.yaml")


def baseline_of(facts: dict[str, dict[str, float]]) -> Baseline:
    return baselines.baseline_of({"k.yaml": {f"gemms[{k}]": v for k, v in facts.items()}})


REGS = "static__registers_per_thread"
SMEM = "static__shared_static_bytes"
BEFORE = {"a<1>": {REGS: 32, SMEM: 0}, "a<2>": {REGS: 40, SMEM: 1024}, "gone<1>": {REGS: 8, SMEM: 0}}
NOW = {"a<1>": {REGS: 48, SMEM: 0}, "a<2>": {REGS: 32, SMEM: 2048}, "new<1>": {REGS: 8, SMEM: 0}}


def test_growth_regresses_shrinking_improves_and_moves_are_listed(tmp_path):
    compared = ratchet.compare(baseline_of(BEFORE), [result_of(tmp_path, NOW)], {})
    moved = {(c.case, c.metric): (c.before, c.after, c.worse) for c in compared.changes}
    assert moved == {
        ("gemms[a<1>]", REGS): (32, 48, True),
        ("gemms[a<2>]", REGS): (40, 32, False),
        ("gemms[a<2>]", SMEM): (1024, 2048, True),  # a set's kernel holds its shared memory too
    }
    assert compared.regressed
    assert [(m.case, m.added) for m in compared.moves] == [("gemms[new<1>]", True), ("gemms[gone<1>]", False)]


def test_an_allow_entry_accepts_a_growth_of_its_fact_only(tmp_path):
    allow = [
        {"kernel": "a<1>", "metric": REGS, "reason": "more tiles"},
        {"match": "^a<2>", "reason": "bigger tile"},
    ]
    compared = ratchet.compare(baseline_of(BEFORE), [result_of(tmp_path, NOW, allow)], {})
    allowed = {(c.case, c.metric): c.allowed for c in compared.changes if c.worse}
    assert allowed == {("gemms[a<1>]", REGS): "more tiles", ("gemms[a<2>]", SMEM): "bigger tile"}
    assert not compared.regressed


def test_an_entry_that_accepts_nothing_is_warned_about(tmp_path):
    allow = [{"kernel": "a<1>", "reason": "used"}, {"kernel": "fixed<1>", "reason": "stale"}]
    result = result_of(tmp_path, NOW, allow)
    compared = ratchet.compare(baseline_of(BEFORE), [result], {})
    warned = ratchet.with_stale_warnings([result], compared.changes)[0].warnings
    assert warned == ["allow[1] (kernel fixed<1>) accepts nothing in this run: remove it if it is fixed"]
    # without a baseline, an entry that could accept a growth is not judged stale
    assert ratchet.with_stale_warnings([result], None)[0].warnings == []


SOURCE = """
template <int N> __global__ void tile_gemm(float* a, const float* b) {
    float acc[N];
    for (int i = 0; i < N; i++) acc[i] = b[threadIdx.x * N + i];
    for (int i = 0; i < N; i++) a[threadIdx.x] += acc[i] * acc[(i * 7) % N];
}
extern "C" __global__ void grow_gemm(float* a, const float* b) { BODY }
"""
LIGHT = "a[threadIdx.x] = b[threadIdx.x];"
HEAVY = (
    "float acc[64]; for (int i = 0; i < 64; i++) acc[i] = b[threadIdx.x * 64 + i];"
    " for (int i = 0; i < 64; i++) a[threadIdx.x] += acc[i] * acc[(i * 7) % 64];"
)


@pytest.mark.slow
def test_save_grow_check_fails_then_an_allow_entry_lets_it_pass(tmp_path, monkeypatch, no_gpu):
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".ncuverify-root").write_text("")
    instances = "".join(
        f"template __global__ void tile_gemm<{n}>(float*, const float*);\n" for n in range(1, 31)
    )

    def write(body):
        return (tmp_path / "ops.cu").write_text(SOURCE.replace("BODY", body) + instances)

    content = {
        "arch": "sm_90",
        "kernels": {"gemms": {"file": "ops.cu", "match": "_gemm"}},
        "claims": [
            {
                "id": "no_spills",
                "kernels": "gemms",
                "metric": "static__spill_store_bytes",
                "expect": {"equals": 0},
                "cite": CITE,
            }
        ],
    }
    (tmp_path / "k.yaml").write_text(yaml.safe_dump(content))
    write(LIGHT)
    saved = invoke_command("baseline", "save", "base.json", "k.yaml")
    assert saved.exit_code == 0, saved.output
    recorded = json.loads((tmp_path / "base.json").read_text())["files"]["k.yaml"]
    assert len([case for case in recorded if case.startswith("gemms[")]) == 31
    write(HEAVY)
    grown = invoke_command("check", "k.yaml", "--baseline", "base.json")
    assert grown.exit_code == 1, grown.output
    assert "gemms[grow_gemm]" in grown.output and "static__registers_per_thread" in grown.output
    assert "worse" in grown.output and "baseline: 1 regressed" in grown.output
    content["allow"] = [
        {"kernel": "grow_gemm", "metric": "static__registers_per_thread", "reason": "unrolled on purpose"}
    ]
    (tmp_path / "k.yaml").write_text(yaml.safe_dump(content))
    allowed = invoke_command("check", "k.yaml", "--baseline", "base.json")
    assert allowed.exit_code == 0, allowed.output
    assert "allowed: unrolled on purpose" in allowed.output
    assert "accepts nothing" not in allowed.output


def test_the_toolkit_note_reaches_the_outputs_and_reads_back(tmp_path):
    from ncuverify.export import markdown, reading, results_json
    from ncuverify.export.outcome import RunOutcome

    note = "the baseline's kernels were compiled with nvcc 12.4.131 at /a, this run's with nvcc 13.0.88 at /b"
    outcome = RunOutcome([result_of(tmp_path, NOW)], ratchet.Comparison([], [], note))
    section = results_json.baseline_record(outcome)
    assert section["toolkits"] == note
    compared, error = reading.baseline_of({"baseline": section}, "run.json")
    assert compared is not None and compared.toolkits == note and error is None
    assert f"Note: {note}" in markdown.to_markdown(outcome)
    quiet = results_json.baseline_record(RunOutcome([result_of(tmp_path, NOW)], ratchet.Comparison([], [])))
    assert "toolkits" not in quiet  # a comparison of one toolkit writes what it wrote before
