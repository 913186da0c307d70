"""Parsing real ncu captures (tests/fixtures, remade by scripts/capture-fixtures.sh) and building the command."""

import json
import math
from pathlib import Path

import pytest
from conftest import FIXTURES

from ncuverify.errors import EnvironmentProblem
from ncuverify.profile import (
    NcuOptions,
    ProfileRun,
    diagnose,
    measurements,
    ncu_command,
    parse_csv,
    parse_number,
)

SAMPLE_SYMBOLS = {
    "stride1": "_Z11read_strideILi1EEvPKfPf",
    "stride32": "_Z11read_strideILi32EEvPKfPf",
    "scale_2d": "scale",
    "misaligned": "_Z11read_strideILi1EEvPKfPf",
}


def capture(name: str) -> tuple[str, list[dict]]:
    """A fixture's log and status, its cases named without their file (as `measurements` sees them
    once a run's cases are split back per file, and as these tests name them)."""
    folder = FIXTURES / name
    status = json.loads((folder / "status.json").read_text())
    plain = [{**s, "case": s["case"].split("::")[-1]} for s in status]
    return (folder / "ncu.log").read_text(), plain


def test_raw_page_becomes_one_row_per_launch_and_metric():
    log, _ = capture("sample")
    table = parse_csv(log)
    assert list(table.columns) == ["launch", "kernel", "metric", "value", "unit"]
    # stride1, stride32 three times (repeat: 3), scale_2d, misaligned
    assert sorted(table["launch"].unique()) == [0, 1, 2, 3, 4, 5]
    sectors = table[table["metric"] == "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"].set_index("launch")
    # 262,144 threads: 8,192 warps, 4 sectors each contiguous, 32 at stride 32; printed with separators.
    assert sectors.loc[0, "value"] == 32768 and sectors.loc[1, "value"] == 262144
    assert sectors.loc[0, "unit"] == "sector"
    assert set(table["kernel"]) == set(SAMPLE_SYMBOLS.values())
    # The device attributes come along on the raw page: they are metrics too.
    name = table[(table["metric"] == "device__attribute_display_name") & (table["launch"] == 0)]
    assert math.isnan(name["value"].iloc[0])


def test_preamble_and_units_row_are_not_data():
    log, _ = capture("sample")
    assert log.startswith("==")  # ncu's own lines come first
    table = parse_csv(log)
    assert table["launch"].min() == 0  # the units row (empty ID) is gone
    assert not table["metric"].str.startswith("==").any()


def test_details_page_with_thousands_separators_and_demangled_names():
    text = (FIXTURES / "sample" / "details.csv").read_text()
    table = parse_csv(text)
    sectors = table[table["metric"] == "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"].set_index("launch")
    assert sectors.loc[1, "value"] == 262144
    assert '"262,144"' in text
    assert "void read_stride<32>(const float *, float *)" in set(table["kernel"])


def test_measurements_map_launches_to_cases_in_order():
    log, status = capture("sample")
    measured = measurements(parse_csv(log), status, SAMPLE_SYMBOLS)
    assert measured.value("stride32", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum") == 8192
    assert measured.value("misaligned", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum") == 5 * 8192
    assert measured.failed_cases == {}


def test_a_case_that_failed_is_skipped_in_the_mapping_and_reported():
    log, status = capture("launch_failure")
    measured = measurements(parse_csv(log), status, {"too_big": "bounded", "fits": "bounded"})
    assert measured.value("fits", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum") == 128
    with pytest.raises(KeyError, match="case too_big did not run: CUDAError: CUDA_ERROR_INVALID_VALUE"):
        measured.value("too_big", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum")
    with pytest.raises(KeyError, match=r"no value of nonexistent\.sum from ncu for case fits"):
        measured.value("fits", "nonexistent.sum")


def test_a_launch_of_the_wrong_kernel_is_refused():
    log, status = capture("sample")
    wrong = {**SAMPLE_SYMBOLS, "stride32": "scale"}
    with pytest.raises(EnvironmentProblem, match="launch 1 ran _Z11read_strideILi32EEvPKfPf, expected scale"):
        measurements(parse_csv(log), status, wrong)


def test_launches_beyond_the_cases_that_ran_are_refused():
    log, status = capture("sample")
    with pytest.raises(
        EnvironmentProblem, match="launch 5 ran _Z11read_strideILi1EEvPKfPf, expected no further launch"
    ):
        measurements(parse_csv(log), status[:3], SAMPLE_SYMBOLS)


def test_cases_beyond_the_end_of_the_report_are_unmeasured():
    log, status = capture("sample")
    table = parse_csv(log)
    early_end = table[table["launch"] <= 2]  # ncu stopped after stride32's second launch
    measured = measurements(early_end, status, SAMPLE_SYMBOLS)
    assert measured.unmeasured == ("stride32", "scale_2d", "misaligned")
    assert measured.value("stride1", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum") == 8192
    with pytest.raises(KeyError, match="case scale_2d ran, but ncu's report ended before it"):
        measured.value("scale_2d", "gpu__time_duration.sum")


def test_a_row_for_a_failed_launch_is_passed_over():
    log, status = capture("sample")
    status = [dict(s) for s in status]
    status[2] = {"case": "scale_2d", "ok": False, "error": "CUDA_ERROR_ILLEGAL_ADDRESS"}  # its row stays
    measured = measurements(parse_csv(log), status, SAMPLE_SYMBOLS)
    assert measured.failed_cases == {"scale_2d": "CUDA_ERROR_ILLEGAL_ADDRESS"}
    assert measured.value("misaligned", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum") == 5 * 8192


@pytest.mark.parametrize(
    ("text", "value"), [("16,780,032", 16780032.0), ("4", 4.0), ("1,064.5", 1064.5), (" 0 ", 0.0)]
)
def test_numbers(text, value):
    assert parse_number(text) == value


@pytest.mark.parametrize("text", ["n/a", "N/A", "", "NVIDIA H200"])
def test_not_numbers(text):
    assert math.isnan(parse_number(text))


def test_no_csv_gives_an_empty_table():
    assert parse_csv("==PROF== No kernels were profiled.\n").empty


def test_command_asks_for_what_the_claims_need(tmp_path: Path):
    command = ncu_command(
        NcuOptions(executable="/opt/ncu"),
        ["b.sum", "a.sum", "b.sum"],
        ["scale", "_Z11read_strideILi1EEvPKfPf", "scale"],
        tmp_path / "ncu.log",
        tmp_path / "plan.json",
    )
    assert command[0] == "/opt/ncu"

    def option(name: str) -> str:
        return command[command.index(name) + 1]

    assert option("--metrics") == "a.sum,b.sum"
    assert option("--clock-control") == "none"
    assert option("--page") == "raw" and option("--print-units") == "base" and "--csv" in command
    assert option("--kernel-name-base") == "mangled"
    assert option("--kernel-name") == "regex:^(_Z11read_strideILi1EEvPKfPf|scale)$"
    assert option("--log-file") == str(tmp_path / "ncu.log")
    assert command[-3:] == ["-m", "ncuverify.runner", str(tmp_path / "plan.json")]


def test_clock_control_can_be_changed(tmp_path: Path):
    command = ncu_command(NcuOptions(clock_control="base"), ["a.sum"], ["k"], tmp_path / "l", tmp_path / "p")
    assert command[command.index("--clock-control") + 1] == "base"


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
    run = ProfileRun(command=["ncu"], returncode=1, report=report, output="", status=[])
    with pytest.raises(EnvironmentProblem, match=expected):
        diagnose(run)


def test_an_unknown_metric_is_an_input_error():
    from ncuverify.errors import InputError

    run = ProfileRun(["ncu"], 1, "==ERROR== Failed to find metric sm__bogus.sum", "", [])
    with pytest.raises(InputError, match=r"ncu knows no metric sm__bogus\.sum on this GPU"):
        diagnose(run)


def test_no_kernels_profiled_after_launches_is_said():
    run = ProfileRun(
        ["ncu"], 0, "==PROF== No kernels were profiled.", "", [{"case": "a", "ok": True, "error": None}]
    )
    with pytest.raises(EnvironmentProblem, match="ncu profiled no kernel although the runner launched"):
        diagnose(run)


def test_ncu_errors_after_the_runner_reported_belong_to_the_cases():
    status = [{"case": "a", "ok": False, "error": "CUDA_ERROR_ILLEGAL_ADDRESS", "context_lost": True}]
    diagnose(ProfileRun(["ncu"], 1, "==ERROR== An error was reported by the driver", "", status))


def test_a_clean_capture_is_no_problem():
    log, status = capture("sample")
    diagnose(ProfileRun(command=["ncu"], returncode=0, report=log, output="", status=status))


def test_repeated_launches_give_the_median():
    log, status = capture("sample")
    table = parse_csv(log)
    times = table[table["metric"] == "gpu__time_duration.sum"].set_index("launch")["value"]
    measured = measurements(table, status, SAMPLE_SYMBOLS)
    assert measured.value("stride32", "gpu__time_duration.sum") == sorted(times.loc[[1, 2, 3]])[1]
    assert measured.value("scale_2d", "gpu__time_duration.sum") == times.loc[4]
    assert len(measured.frame[measured.frame["metric"] == "gpu__time_duration.sum"]) == 4  # one per case


def test_buffers_read_back_become_measurements():
    log, status = capture("sample")
    status = [dict(s) for s in status]
    status[0]["values"] = {"buffer__cycles.mean": 4.5, "buffer__cycles.max": 9.0}
    measured = measurements(parse_csv(log), status, SAMPLE_SYMBOLS)
    assert measured.value("stride1", "buffer__cycles.mean") == 4.5
    assert measured.value("stride1", "buffer__cycles.max") == 9.0
    with pytest.raises(
        KeyError, match=r"no buffer__cycles\.mean \(the runner read no such buffer back\) for case stride32"
    ):
        measured.value("stride32", "buffer__cycles.mean")


def test_buffer_metrics_are_not_asked_of_ncu(tmp_path: Path):
    from ncuverify.expression import MetricRef
    from ncuverify.profile import is_ncu_metric

    assert not is_ncu_metric(MetricRef("buffer__cycles.mean"))
    assert not is_ncu_metric(MetricRef("static__registers_per_thread"))
    assert is_ncu_metric(MetricRef("device__attribute_multiprocessor_count"))
    command = ncu_command(NcuOptions(), [], ["k"], tmp_path / "l", tmp_path / "p")
    assert command[command.index("--metrics") + 1] == "gpu__time_duration.sum"


def test_the_running_case_is_told_as_it_starts(tmp_path: Path):
    import subprocess
    import sys

    from ncuverify.profile import _wait

    progress = tmp_path / "progress.json"
    script = (
        "import json, time, sys\n"
        "for case in ('first', 'second'):\n"
        f"    open({str(progress)!r}, 'w').write(json.dumps({{'case': case, 'started': time.time()}}))\n"
        "    time.sleep(0.6)\n"
    )
    process = subprocess.Popen([sys.executable, "-c", script], start_new_session=True)
    told: list[str] = []
    assert _wait(process, progress, 30, told.append) is None
    assert told == ["first", "second"]


def test_a_case_that_overruns_is_stopped_with_its_process_group(tmp_path: Path):
    import subprocess
    import sys
    import time

    from ncuverify.profile import _wait

    progress = tmp_path / "progress.json"
    progress.write_text(json.dumps({"case": "forever", "started": time.time()}))
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True)
    started = time.monotonic()
    assert _wait(process, progress, 1) == "forever"
    assert time.monotonic() - started < 10
    assert process.poll() is not None  # killed, not left behind
