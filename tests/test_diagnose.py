"""What ncu's log says went wrong: a machine that cannot measure, a metric ncu does not know."""

import pytest
from ncu_captures import capture

from ncuverify.errors import EnvironmentProblem
from ncuverify.profile import Run, diagnose
from ncuverify.runner import CaseStatus


@pytest.mark.parametrize(
    ("report", "expected"),
    [
        (
            "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters",
            "ERR_NVGPUCTRPERM",
        ),
        ("==ERROR== Failed to initialize the profiler: LibraryNotLoaded", "LibraryNotLoaded"),
        ("==ERROR== Something else broke", "ncu failed: Something else broke"),
    ],
)
def test_environment_problems_are_recognised(report, expected):
    run = Run(report=report, cases=(), command=["ncu"], output="", returncode=1)
    with pytest.raises(EnvironmentProblem, match=expected):
        diagnose(run)


def test_an_unknown_metric_is_an_input_error():
    from ncuverify.errors import InputError

    run = Run("==ERROR== Failed to find metric sm__bogus.sum", (), ["ncu"], "", 1)
    with pytest.raises(InputError, match=r"ncu knows no metric sm__bogus\.sum on this GPU"):
        diagnose(run)


def test_no_kernels_profiled_after_launches_is_said():
    run = Run("==PROF== No kernels were profiled.", (CaseStatus("a", True),), ["ncu"], "", 0)
    with pytest.raises(EnvironmentProblem, match="ncu profiled no kernel although the runner launched"):
        diagnose(run)


def test_ncu_errors_after_the_runner_reported_belong_to_the_cases():
    status = [CaseStatus("a", False, "CUDA_ERROR_ILLEGAL_ADDRESS", context_lost=True)]
    diagnose(Run("==ERROR== An error was reported by the driver", tuple(status), ["ncu"], "", 1))


def test_a_clean_capture_is_no_problem():
    log, status = capture("sample")
    diagnose(Run(report=log, cases=tuple(status), command=["ncu"], output="", returncode=0))
