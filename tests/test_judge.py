import json
import math

import pandas as pd
import pytest
from conftest import COMPILE_CACHE, DATA, EXPECTATIONS, FIXTURES, NO_GPU, RECORDINGS

from ncuverify import export
from ncuverify.judge.claims import describe, format_number, holds, judge_claim, skip_all
from ncuverify.measurements import Measurements
from ncuverify.options import CheckOptions
from ncuverify.pipeline import check_file
from ncuverify.profile import recording
from ncuverify.results import ClaimResult, Verdict, file_key, run_keys
from ncuverify.spec import Claim, Expectation, load


def expectation(**kwargs) -> Expectation:
    return Expectation(**kwargs)


@pytest.mark.parametrize(
    ("expect", "inside", "outside"),
    [
        (expectation(equals=4), [4.0, 4.0 + 1e-12], [4.0001, 3.9999]),
        (expectation(at_least=2.5), [2.5, 100], [2.4999]),
        (expectation(at_most=1), [1, -5], [1.0001]),
        (expectation(between=(4, 9)), [4, 6.5, 9], [3.99, 9.01]),
        (expectation(approx=100, rel=0.1), [90, 110, 100], [89.9, 110.1]),
        (expectation(approx=100, abs=2), [98, 102], [97.9, 102.1]),
    ],
)
def test_holds_at_and_beyond_the_bounds(expect, inside, outside):
    assert all(holds(expect, v) for v in inside)
    assert not any(holds(expect, v) for v in outside)


@pytest.mark.parametrize(
    ("expect", "text"),
    [
        (expectation(equals=4), "== 4"),
        (expectation(at_least=2.5), ">= 2.5"),
        (expectation(at_most=1e6), "<= 1,000,000"),
        (expectation(between=(4, 9)), "in [4, 9]"),
        (expectation(approx=16, rel=0.1), "≈ 16 ± 10%"),
        (expectation(approx=16, abs=0.5), "≈ 16 ± 0.5"),
    ],
)
def test_describe(expect, text):
    assert describe(expect) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [(4.0, "4"), (5.98765, "5.988"), (16780544.0, "16,780,544"), (1234.56, "1,234.6"), (math.nan, "n/a")],
)
def test_format_number(value, text):
    assert format_number(value) == text


def claim(metric: str, case: str | None = "a", **expect) -> Claim:
    return Claim(
        id="c",
        case=case,
        metric=metric,
        expect=Expectation(**(expect or {"equals": 4})),
        cite={"document": "d", "section": "1", "figure": "f"},
    )


MEASURED = Measurements.of_frame(
    pd.DataFrame(
        {
            "case": ["a", "a", "b", "a"],
            "kernel": ["k", "k", "k", "k"],
            "metric": ["sectors.sum", "requests.sum", "sectors.sum", "empty.sum"],
            "value": [400.0, 100.0, 3200.0, math.nan],
            "unit": ["sector", "", "sector", ""],
        }
    ),
    failed_cases={"broken": "CUDAError: CUDA_ERROR_ILLEGAL_ADDRESS"},
)


def test_passes_and_fails_with_the_measured_value():
    passed = judge_claim(claim("sectors.sum / requests.sum"), MEASURED)
    assert (passed.verdict, passed.measured) == (Verdict.PASSED, 4.0)
    failed = judge_claim(claim("sectors.sum / requests.sum", equals=32), MEASURED)
    assert (failed.verdict, failed.measured) == (Verdict.FAILED, 4.0)
    assert failed.reason == "measured 4, expected == 32"


def test_cross_case_ratio():
    result = judge_claim(claim("sectors.sum@b / sectors.sum@a", case=None, equals=8), MEASURED)
    assert (result.verdict, result.measured) == (Verdict.PASSED, 8.0)


@pytest.mark.parametrize(
    ("metric", "case", "reason"),
    [
        ("missing.sum", "a", "no value of missing.sum from ncu for case a"),
        (
            "static__registers_per_thread",
            "a",
            "no static fact static__registers_per_thread (the build did not report it) for case a",
        ),
        ("empty.sum", "a", "ncu reported empty.sum as n/a for case a"),
        ("sectors.sum", "broken", "case broken did not run: CUDAError: CUDA_ERROR_ILLEGAL_ADDRESS"),
        ("sectors.sum", "never", "case never was not measured"),
        ("sectors.sum / (requests.sum - 100)", "a", "division by zero: requests.sum - 100 is 0"),
    ],
)
def test_unevaluable_claims_are_errors_with_the_reason(metric, case, reason):
    result = judge_claim(claim(metric, case=case), MEASURED)
    assert result.verdict == Verdict.ERROR
    assert result.reason == reason
    assert result.measured is None


def test_skip_all_keeps_the_reason():
    results = skip_all([claim("sectors.sum")], "no NVIDIA GPU")
    assert results == [ClaimResult(claim("sectors.sum"), Verdict.SKIPPED, reason="no NVIDIA GPU")]


def replay(spec_path, recordings=FIXTURES):
    """Judge a file's claims on its recorded profile and its static facts, as check --from-profile does:
    every stage after profiling, with no GPU."""
    result = check_file(spec_path, CheckOptions(cache=COMPILE_CACHE, from_profile=recordings), NO_GPU)
    assert result.input_error is None, result.input_error
    assert result.replayed and result.provenance is not None and result.warnings == []
    return {r.claim.id: r for r in result.claims}


def test_sample_capture_judged_without_a_gpu():
    results = replay(DATA / "sample.yaml")
    assert {r.verdict for r in results.values()} == {Verdict.PASSED}
    assert results["stride32_sector_ratio"].measured == 8
    assert results["misaligned_five_sectors"].measured == 5


def recorded_files() -> set[str]:
    """The expectation files (keys) of which the recording holds cases. It was made before files were
    known by their paths in the project: it names them by their stems, and loads under their keys."""
    runs = recording.load(RECORDINGS, run_keys(sorted(EXPECTATIONS.glob("*.yaml")))).runs
    return {s.case.split("::")[0] for run in runs for s in run.cases}


RECORDED = sorted(p for p in EXPECTATIONS.glob("*.yaml") if file_key(p) in recorded_files())


# Each file's claims in the JSON of `ncuverify check expectations/ --from-profile recordings/h200 --json F`
# for the recording re-made on 2026-12-03 (every claim as the one before, but for its measured figures):
# a replay must not change a byte.
REPLAYED_CLAIMS = json.loads((DATA / "h200-replay-claims.json").read_text())


@pytest.mark.parametrize("path", RECORDED, ids=[p.stem for p in RECORDED])
def test_every_recorded_expectation_file_holds_on_replay(path):
    """The H200 recording of every expectation file: each claim measured and holding, each negative
    control measured and failing the assertion its claim passes, and the claims' JSON as it was."""
    result = check_file(path, CheckOptions(cache=COMPILE_CACHE, from_profile=RECORDINGS), NO_GPU)
    assert result.input_error is None and result.replayed and result.warnings == []
    (record,) = json.loads(export.to_json([result]))["files"]
    assert json.dumps(record["claims"]) == json.dumps(REPLAYED_CLAIMS[result.key])
    results = {r.claim.id: r for r in result.claims if r.verdict != Verdict.OTHER_ARCH}
    assert {claim_id: r.reason for claim_id, r in results.items() if r.verdict != Verdict.PASSED} == {}
    assert all(r.measured is not None for r in results.values())
    for r in results.values():
        if r.claim.control is not None:
            assert r.control_measured is not None and not holds(r.claim.expect, r.control_measured), (
                r.claim.id
            )


def test_every_expectation_file_with_profiler_claims_is_recorded():
    from ncuverify.stages.prepare import split_claims

    profiled = {p.stem for p in EXPECTATIONS.glob("*.yaml") if split_claims(load(p).content.claims)[1]}
    assert profiled == {p.stem for p in RECORDED}


def test_coalescing_capture_judged_without_a_gpu():
    results = replay(EXPECTATIONS / "coalescing.yaml", RECORDINGS)
    assert len(results) >= 46
    assert {claim_id: r.reason for claim_id, r in results.items() if r.verdict != Verdict.PASSED} == {}
    # The documents' headline figures, as the H200 has them.
    assert results["s22_32_lines_32_sectors"].measured == 32
    assert results["s33_aos_28_sectors"].measured == 28
    assert 4 <= results["s01_stride32_time_ratio"].measured <= 9  # the document says 32


def test_a_wrong_figure_fails_on_the_capture(tmp_path):
    text = (DATA / "sample.yaml").read_text().replace("expect: {equals: 32}", "expect: {equals: 33}")
    edited = tmp_path / "sample.yaml"
    edited.write_text(text)
    results = replay(edited)
    assert results["stride32_sectors"].verdict == Verdict.FAILED
    assert results["stride32_sectors"].reason == "measured 32, expected == 33"


def test_a_control_that_fails_lets_the_claim_pass():
    controlled = claim("sectors.sum", equals=400).model_copy(update={"control": "b"})
    result = judge_claim(controlled, MEASURED)
    assert (result.verdict, result.measured, result.control_measured) == (Verdict.PASSED, 400, 3200)


def test_a_control_that_passes_too_fails_the_claim():
    controlled = claim("sectors.sum", at_least=100).model_copy(update={"control": "b"})
    result = judge_claim(controlled, MEASURED)
    assert result.verdict == Verdict.FAILED
    assert (
        result.reason
        == "the control b gives 3,200, which satisfies >= 100 too: the check cannot tell a from b"
    )


def test_a_control_that_cannot_be_evaluated_is_an_error():
    controlled = claim("sectors.sum / requests.sum").model_copy(update={"control": "b"})
    result = judge_claim(controlled, MEASURED)
    assert result.verdict == Verdict.ERROR
    assert result.reason == "control b: no value of requests.sum from ncu for case b"


def test_expected_failures_on_the_named_architecture_only():
    from ncuverify.spec import ExpectedFailure

    wrong = claim("sectors.sum / requests.sum", equals=32).model_copy(
        update={"xfail": ExpectedFailure(reason="32 on Volta", arch=["sm_70"])}
    )
    assert judge_claim(wrong, MEASURED, "sm_90").verdict == Verdict.FAILED
    xfailed = judge_claim(wrong, MEASURED, "sm_70")
    assert xfailed.verdict == Verdict.XFAILED
    assert xfailed.reason == "expected to fail: 32 on Volta (measured 4, expected == 32)"
    right = claim("sectors.sum / requests.sum", equals=4).model_copy(
        update={"xfail": ExpectedFailure(reason="why")}
    )
    xpassed = judge_claim(right, MEASURED, "sm_90")
    assert xpassed.verdict == Verdict.XPASSED
    assert xpassed.reason == "expected to fail (why), but it holds"


def test_exit_codes_for_expected_failures():
    from pathlib import Path

    from ncuverify.errors import ExitCode
    from ncuverify.results import FileResult, exit_code

    def run(*verdicts):
        return [FileResult(Path("f.yaml"), [ClaimResult(claim("m"), v) for v in verdicts])]

    assert exit_code(run(Verdict.PASSED, Verdict.XFAILED)) == ExitCode.OK
    assert exit_code(run(Verdict.PASSED, Verdict.XPASSED)) == ExitCode.CLAIM_FAILED
    assert exit_code(run(Verdict.SKIPPED, Verdict.FAILED)) == ExitCode.CLAIM_FAILED
    assert exit_code(run(Verdict.SKIPPED, Verdict.PASSED)) == ExitCode.NOT_MEASURABLE
    assert exit_code(run(Verdict.ERROR)) == ExitCode.CLAIM_FAILED
    assert (
        exit_code([FileResult(Path("f.yaml"), [], input_error="bad"), *run(Verdict.FAILED)])
        == ExitCode.BAD_INPUT
    )


def test_claims_about_another_architecture_are_set_aside():
    from ncuverify.judge.claims import applies_to, other_arch

    hopper_only = claim("sectors.sum").model_copy(update={"arch": ["sm_90", "sm_90a"]})
    assert applies_to(hopper_only, "sm_90") and not applies_to(hopper_only, "sm_80")
    assert applies_to(claim("sectors.sum"), "sm_80")
    (result,) = other_arch([hopper_only], "sm_80")
    assert result.verdict == Verdict.OTHER_ARCH
    assert result.reason == "about sm_90, sm_90a; this run is for sm_80"


def test_other_architecture_claims_do_not_fail_the_run():
    from pathlib import Path

    from ncuverify.errors import ExitCode
    from ncuverify.results import FileResult, exit_code

    results = [
        FileResult(
            Path("f.yaml"),
            [ClaimResult(claim("m"), Verdict.PASSED), ClaimResult(claim("m"), Verdict.OTHER_ARCH)],
        )
    ]
    assert exit_code(results) == ExitCode.OK


def test_a_recording_of_several_runs_replays_whole():
    """The faults file took five ncu runs on the H200: each fault and the hang sent the rest to a new one."""
    results = replay(DATA / "faults.yaml")
    assert {i for i, r in results.items() if r.verdict == Verdict.PASSED} == {
        "first_stores",
        "second_stores",
        "last_stores",
        "hung_kernel_still_built",
    }
    assert "CUDA_ERROR_ILLEGAL_ADDRESS" in (results["bad_address_stores"].reason or "")
    assert "CUDA_ERROR_MISALIGNED_ADDRESS" in (results["bad_alignment_loads"].reason or "")
    assert "did not finish within 30 s" in (results["hung_stores"].reason or "")


def test_judging_needs_no_profiler():
    """The judge and the values it reads come without the profile stage: a recorded profile, a baseline
    or a shard is judged without loading ncu's process control or the runner."""
    import subprocess
    import sys

    script = (
        "import sys, ncuverify.judge.claims, ncuverify.measurements, ncuverify.results\n"
        "print(sorted(m for m in sys.modules if m.startswith(('ncuverify.profile', 'ncuverify.runner'))))"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
