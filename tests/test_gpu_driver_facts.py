"""On a real GPU under Nsight Compute: every case of the suite that the schedule sends to the process
without ncu measures through it exactly what ncu measures of it, and the suite's verdicts are those of
a run in which ncu profiles every case. Skipped, with the reason, where there is no GPU."""

import json
import math
from pathlib import Path

import pytest
from conftest import COMPILE_CACHE, EXPECTATIONS

from ncuverify.names import BUFFER_PREFIX, QualifiedCase
from ncuverify.options import CheckOptions
from ncuverify.pipeline import check_files
from ncuverify.profile import recording
from ncuverify.profile.work import is_driver_command
from ncuverify.results import FileResult, run_keys
from ncuverify.runner.occupancy import DRIVER_METRICS

pytestmark = pytest.mark.gpu

PATHS = sorted(EXPECTATIONS.glob("*.yaml"))
# Files whose kernels time themselves (clock64): what they write back differs from launch to launch,
# under ncu or not; their launch facts are compared, not their buffers.
CLOCKED = {"latency.yaml"}


@pytest.fixture(scope="module")
def runs(gpu_environment, tmp_path_factory) -> tuple[list[FileResult], list[FileResult], Path]:
    """The suite checked as a run checks it, and again with ncu profiling every case; and where the
    first run's recording is."""
    saved = tmp_path_factory.mktemp("with-driver")
    options = CheckOptions(cache=COMPILE_CACHE, save_profile=saved, explain=False, driver_facts=True)
    with_driver = check_files(PATHS, options, gpu_environment)
    ncu_only = CheckOptions(
        cache=COMPILE_CACHE, save_profile=tmp_path_factory.mktemp("ncu-only"), explain=False
    )
    return with_driver, check_files(PATHS, ncu_only, gpu_environment), saved


def driver_cases(saved: Path) -> list[tuple[str, str, bool, str | None]]:
    """Each case of the recording's processes without ncu: its file's key, its name, whether it ran,
    and why not."""
    recorded = recording.load(saved, run_keys(PATHS))
    commands = json.loads((saved / recording.COMMANDS).read_text())
    assert len(commands) == len(recorded.runs)
    found = []
    for run, command in zip(recorded.runs, commands, strict=True):
        if is_driver_command(command):
            for status in run.cases:
                identity = QualifiedCase.parse(status.case)
                found.append((str(identity.file), str(identity.in_file(None)), status.ok, status.error))
    return found


def values(results: list[FileResult]) -> dict[tuple[str, str, str], float]:
    """(file key, case, metric) -> value, of every file's measurements."""
    return {
        (result.key, case, metric): value
        for result in results
        if result.measurements is not None
        for case, _, metric, value, _ in result.measurements.rows
    }


def test_the_cases_that_need_no_ncu_ran_without_it_and_none_was_left_to_ncu(runs):
    _, _, saved = runs
    cases = driver_cases(saved)
    assert len(cases) >= 10, "the suite's occupancy, device and read-back cases"
    assert [(key, case, error) for key, case, ok, error in cases if not ok] == []


def test_each_figure_of_those_cases_is_the_one_ncu_gives(runs):
    with_driver, ncu_only, saved = runs
    ours, ncu = values(with_driver), values(ncu_only)
    compared, wrong = 0, []
    for key, case, _, _ in driver_cases(saved):
        for (file, name, metric), value in ours.items():
            if (file, name) != (key, case) or (file, name, metric) not in ncu:
                continue
            buffer = metric.startswith(BUFFER_PREFIX)
            if not (metric in DRIVER_METRICS or (buffer and Path(key).name not in CLOCKED)):
                continue
            compared += 1
            theirs = ncu[file, name, metric]
            if not (value == theirs or (math.isnan(value) and math.isnan(theirs))):
                wrong.append((file, name, metric, value, theirs))
    assert compared >= 20
    assert wrong == []


def test_the_verdicts_are_those_of_a_run_in_which_ncu_profiles_every_case(runs):
    with_driver, ncu_only, saved = runs
    assert [r.input_error or r.internal_error for r in with_driver] == [None] * len(PATHS)

    def verdicts(results: list[FileResult]) -> list[tuple[str, str, str]]:
        return [(r.key, c.claim.id, c.verdict.value) for r in results for c in r.claims]

    assert verdicts(with_driver) == verdicts(ncu_only)
    # and the claims on the cases without ncu measured the same, where their kernels do not time themselves
    ours = {(key, case) for key, case, _, _ in driver_cases(saved) if Path(key).name not in CLOCKED}

    def measured(results: list[FileResult]) -> list[tuple[str, str, str]]:
        return [  # as text: a NaN equals a NaN
            (r.key, c.claim.id, repr(c.measured))
            for r in results
            for c in r.claims
            if (r.key, c.claim.case) in ours
        ]

    assert measured(with_driver) == measured(ncu_only) != []
