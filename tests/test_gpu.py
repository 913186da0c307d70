"""End to end on a real GPU under Nsight Compute. Skipped, with the reason, where there is none."""

import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import DATA, EXPECTATIONS, ROOT

from ncuverify.errors import ExitCode
from ncuverify.judge import Verdict
from ncuverify.pipeline import CheckOptions, check_file

pytestmark = pytest.mark.gpu


def run_check(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ncuverify", "check", *args], capture_output=True, text=True, cwd=ROOT
    )


def test_coalescing_claims_all_measured_and_hold(gpu_environment):
    result = check_file(EXPECTATIONS / "coalescing.yaml", CheckOptions(), gpu_environment)
    assert result.input_error is None
    assert len(result.claims) >= 20
    not_passed = {
        r.claim.id: (r.verdict, r.measured, r.reason) for r in result.claims if r.verdict != Verdict.PASSED
    }
    assert not_passed == {}
    assert all(r.measured is not None for r in result.claims)


def test_sample_cli_exits_zero_and_prints_the_table(gpu_environment):
    completed = run_check(str(DATA / "sample.yaml"))
    assert completed.returncode == ExitCode.OK, completed.stdout + completed.stderr
    assert "contiguous_four_sectors" in completed.stdout
    assert "6 passed, 0 failed, 0 errors, 0 skipped" in completed.stdout


def test_a_wrong_figure_fails_that_claim_and_exits_one(gpu_environment, tmp_path: Path):
    content = yaml.safe_load((DATA / "sample.yaml").read_text())
    content["claims"][0]["expect"] = {"equals": 5}  # the hardware gives 4
    edited = tmp_path / "edited.yaml"
    edited.write_text(yaml.safe_dump(content))
    completed = run_check(str(edited))
    assert completed.returncode == ExitCode.CLAIM_FAILED, completed.stdout + completed.stderr
    assert "failed contiguous_four_sectors: measured 4, expected == 5" in completed.stdout
    assert "5 passed, 1 failed" in completed.stdout


def test_a_case_that_cannot_launch_errs_alone(gpu_environment):
    result = check_file(DATA / "launch_failure.yaml", CheckOptions(), gpu_environment)
    verdicts = {r.claim.id: r for r in result.claims}
    assert verdicts["too_big_stores"].verdict == Verdict.ERROR
    assert "CUDA_ERROR" in (verdicts["too_big_stores"].reason or "")
    assert verdicts["fits_stores"].verdict == Verdict.PASSED
    assert verdicts["fits_stores"].measured == 128


def test_ncu_reports_the_kernels_and_no_runner_output(gpu_environment, tmp_path: Path):
    result = check_file(DATA / "sample.yaml", CheckOptions(keep_dir=tmp_path), gpu_environment)
    assert result.ncu_command is not None and "--clock-control" in result.ncu_command
    assert result.ncu_command[result.ncu_command.index("--clock-control") + 1] == "none"
    log = (tmp_path / "sample" / "ncu.log").read_text()
    assert '"ID"' in log
    assert "_Z11read_strideILi32EEvPKfPf" in log
