"""Launches to cases: each profiled launch given its case, in order, the median of repeats."""

from dataclasses import replace

import pytest
from ncu_captures import SAMPLE_SYMBOLS, capture

from ncuverify.errors import EnvironmentProblem
from ncuverify.profile import measurements
from ncuverify.profile.per_file import by_file
from ncuverify.profile.table import tidy_rows
from ncuverify.runner import CaseStatus


def test_measurements_map_launches_to_cases_in_order():
    log, status = capture("sample")
    measured = measurements(tidy_rows(log), status, SAMPLE_SYMBOLS)
    assert measured.value("stride32", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum") == 8192
    assert measured.value("misaligned", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum") == 5 * 8192
    assert measured.failed_cases == {}


def test_a_case_that_failed_is_skipped_in_the_mapping_and_reported():
    log, status = capture("launch_failure")
    measured = measurements(tidy_rows(log), status, {"too_big": "bounded", "fits": "bounded"})
    assert measured.value("fits", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum") == 128
    with pytest.raises(KeyError, match="case too_big did not run: CUDAError: CUDA_ERROR_INVALID_VALUE"):
        measured.value("too_big", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum")
    with pytest.raises(KeyError, match=r"no value of nonexistent\.sum from ncu for case fits"):
        measured.value("fits", "nonexistent.sum")


def test_a_launch_of_the_wrong_kernel_is_refused():
    log, status = capture("sample")
    wrong = {**SAMPLE_SYMBOLS, "stride32": "scale"}
    with pytest.raises(EnvironmentProblem, match="launch 1 ran _Z11read_strideILi32EEvPKfPf, expected scale"):
        measurements(tidy_rows(log), status, wrong)


def test_launches_beyond_the_cases_that_ran_are_refused():
    log, status = capture("sample")
    with pytest.raises(
        EnvironmentProblem, match="launch 5 ran _Z11read_strideILi1EEvPKfPf, expected no further launch"
    ):
        measurements(tidy_rows(log), status[:3], SAMPLE_SYMBOLS)


def test_cases_beyond_the_end_of_the_report_are_unmeasured():
    log, status = capture("sample")
    early_end = [row for row in tidy_rows(log) if row[0] <= 2]  # ncu stopped after stride32's second launch
    measured = measurements(early_end, status, SAMPLE_SYMBOLS)
    assert measured.unmeasured == ("stride32", "scale_2d", "misaligned")
    assert measured.value("stride1", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum") == 8192
    with pytest.raises(KeyError, match="case scale_2d ran, but ncu's report ended before it"):
        measured.value("scale_2d", "gpu__time_duration.sum")


def test_a_row_for_a_failed_launch_is_passed_over():
    log, status = capture("sample")
    status[2] = CaseStatus("scale_2d", False, "CUDA_ERROR_ILLEGAL_ADDRESS")  # its row stays
    measured = measurements(tidy_rows(log), status, SAMPLE_SYMBOLS)
    assert measured.failed_cases == {"scale_2d": "CUDA_ERROR_ILLEGAL_ADDRESS"}
    assert measured.value("misaligned", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum") == 5 * 8192


def test_repeated_launches_give_the_median():
    log, status = capture("sample")
    rows = tidy_rows(log)
    times = {launch: value for launch, _, metric, value, _ in rows if metric == "gpu__time_duration.sum"}
    measured = measurements(rows, status, SAMPLE_SYMBOLS)
    assert measured.value("stride32", "gpu__time_duration.sum") == sorted(times[n] for n in (1, 2, 3))[1]
    assert measured.value("scale_2d", "gpu__time_duration.sum") == times[4]
    assert len(measured.frame[measured.frame["metric"] == "gpu__time_duration.sum"]) == 4  # one per case


def test_buffers_read_back_become_measurements():
    log, status = capture("sample")
    status[0] = replace(status[0], values={"buffer__cycles.mean": 4.5, "buffer__cycles.max": 9.0})
    measured = measurements(tidy_rows(log), status, SAMPLE_SYMBOLS)
    assert measured.value("stride1", "buffer__cycles.mean") == 4.5
    assert measured.value("stride1", "buffer__cycles.max") == 9.0
    with pytest.raises(
        KeyError, match=r"no buffer__cycles\.mean \(the runner read no such buffer back\) for case stride32"
    ):
        measured.value("stride32", "buffer__cycles.mean")


def test_a_status_naming_a_case_of_unknown_kernel_is_a_clear_problem():
    log, status = capture("sample")
    with pytest.raises(
        EnvironmentProblem, match=r"^the runner reported case 'stride1', whose kernel is not known$"
    ):
        measurements(tidy_rows(log), status, {})


def test_a_run_that_measured_nothing_combines_and_splits_cleanly():
    from ncuverify.measurements import Measurements

    nothing = measurements(tidy_rows(""), [CaseStatus("f::a", False, "ncu did not start the runner")], {})
    combined = Measurements.empty().combined(nothing)
    split = by_file(combined, ["f", "g"])
    assert split["f"].failed_cases == {"a": "ncu did not start the runner"} and split["f"].frame.empty
    assert "g" not in split, "a file of which nothing was measured, failed or left unmeasured"
