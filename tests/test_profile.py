"""Parsing real ncu captures (tests/fixtures, remade by scripts/capture-fixtures.sh), building the
command, and keeping every ncu process within the case timeout (with stand-ins for ncu)."""

import contextlib
import json
import math
import os
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import DATA, FIXTURES, assert_group_ends
from hypothesis import given, settings
from hypothesis import strategies as st

from ncuverify.errors import EnvironmentProblem
from ncuverify.profile import (
    NcuOptions,
    Run,
    diagnose,
    measurements,
    ncu_command,
    parse_csv,
    parse_number,
    run_ncu,
)
from ncuverify.profile.pages import MAX_CSV_COLUMNS
from ncuverify.runner import CaseStatus, PlannedCase, Progress, read_statuses

SAMPLE_SYMBOLS = {
    "stride1": "_Z11read_strideILi1EEvPKfPf",
    "stride32": "_Z11read_strideILi32EEvPKfPf",
    "scale_2d": "scale",
    "misaligned": "_Z11read_strideILi1EEvPKfPf",
}


def capture(name: str) -> tuple[str, list[CaseStatus]]:
    """A fixture's log and status, its cases named without their file (as `measurements` sees them
    once a run's cases are split back per file, and as these tests name them)."""
    folder = FIXTURES / name
    status = read_statuses((folder / "status.json").read_text())
    plain = [replace(s, case=s.case.split("::")[-1]) for s in status]
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
    status[2] = CaseStatus("scale_2d", False, "CUDA_ERROR_ILLEGAL_ADDRESS")  # its row stays
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
    status[0] = replace(status[0], values={"buffer__cycles.mean": 4.5, "buffer__cycles.max": 9.0})
    measured = measurements(parse_csv(log), status, SAMPLE_SYMBOLS)
    assert measured.value("stride1", "buffer__cycles.mean") == 4.5
    assert measured.value("stride1", "buffer__cycles.max") == 9.0
    with pytest.raises(
        KeyError, match=r"no buffer__cycles\.mean \(the runner read no such buffer back\) for case stride32"
    ):
        measured.value("stride32", "buffer__cycles.mean")


def test_buffer_metrics_are_not_asked_of_ncu(tmp_path: Path):
    from ncuverify.expression import MetricRef
    from ncuverify.profile.plan import is_ncu_metric

    assert not is_ncu_metric(MetricRef("buffer__cycles.mean"))
    assert not is_ncu_metric(MetricRef("static__registers_per_thread"))
    assert is_ncu_metric(MetricRef("device__attribute_multiprocessor_count"))
    command = ncu_command(NcuOptions(), [], ["k"], tmp_path / "l", tmp_path / "p")
    assert command[command.index("--metrics") + 1] == "gpu__time_duration.sum"


# --- every process within the case timeout ----------------------------------------------------------------


def test_the_running_case_is_told_as_it_starts(tmp_path: Path):
    import subprocess
    import sys

    from ncuverify.profile.process import wait

    progress = tmp_path / "progress.json"
    steps = [
        Progress(case, running, False, n)
        for n, (case, running) in enumerate([("first", True), ("first", False), ("second", True)])
    ]
    script = (
        "import time, sys\n"
        f"for text in {[step.to_json() for step in steps]!r}:\n"
        f"    open({str(progress)!r}, 'w').write(text)\n"
        "    time.sleep(0.6)\n"
    )
    process = subprocess.Popen([sys.executable, "-c", script], start_new_session=True)
    told: list[str] = []
    watched = wait(process, progress, ["first", "second"], 30, NcuOptions(on_case=told.append))
    assert not watched.stalled and watched.last == steps[-1]
    assert told == ["first", "second"]


STALLING_NCU = DATA / "fake_ncu" / "stalling_ncu"
CASES = [
    PlannedCase(name, "/none.cubin", f"k_{name}", (1, 1, 1), (32, 1, 1), 0, []) for name in ("a", "b", "c")
]


def stalled(tmp_path: Path, monkeypatch, stall: str, timeout_s: float = 1) -> tuple[Run, int]:
    """A run of the stalling stand-in for ncu, stopped where FAKE_NCU_STALL says; and its process group."""
    notes = tmp_path / "notes.jsonl"
    monkeypatch.setenv("FAKE_NCU_NOTES", str(notes))
    monkeypatch.setenv("FAKE_NCU_STALL", stall)
    options = NcuOptions(executable=str(STALLING_NCU), case_timeout_s=timeout_s)
    run = run_ncu(tmp_path / "run", CASES, ["a.sum"], options)
    return run, json.loads(notes.read_text().splitlines()[0])["pgid"]


def assert_no_process_of(group: int) -> None:
    """No process of the group is left: run_ncu returns only once the killed group is gone."""
    with pytest.raises(ProcessLookupError):
        os.killpg(group, 0)


def test_an_ncu_that_never_starts_the_runner_is_stopped_and_its_cases_say_why(tmp_path, monkeypatch):
    run, group = stalled(tmp_path, monkeypatch, "before_runner")
    reason = "ncu did not start the runner within 1 s; stopped"
    assert run.cases == tuple(CaseStatus(name, False, reason) for name in ("a", "b", "c"))
    assert run.stopped is None and run.returncode == -9
    assert_no_process_of(group)


def test_a_runner_that_never_starts_a_case_is_stopped_and_its_cases_say_why(tmp_path, monkeypatch):
    run, group = stalled(tmp_path, monkeypatch, "before_cases")
    reason = "the runner did not start its first case within 1 s (is CUDA stuck?); stopped"
    assert run.cases == tuple(CaseStatus(name, False, reason) for name in ("a", "b", "c"))
    assert_no_process_of(group)


def test_a_case_that_never_ends_is_stopped_and_the_cases_after_it_run_again(tmp_path, monkeypatch):
    run, group = stalled(tmp_path, monkeypatch, "in_case")
    error = "did not finish within 1 s under the profiler; stopped"
    assert run.cases == (CaseStatus("a", False, error, context_lost=True, not_run=("b", "c")),)
    assert_no_process_of(group)


def test_an_ncu_that_stops_between_cases_is_stopped_and_the_cases_left_say_why(tmp_path, monkeypatch):
    run, group = stalled(tmp_path, monkeypatch, "between_cases")
    reason = "ncu made no progress within 1 s after case a ended; stopped"
    assert run.cases == (
        CaseStatus("a", True, None, "k_a", 1),
        CaseStatus("b", False, reason),
        CaseStatus("c", False, reason),
    )
    assert_no_process_of(group)


def test_an_ncu_that_hangs_after_the_runner_is_stopped_and_its_report_kept(tmp_path, monkeypatch):
    run, group = stalled(tmp_path, monkeypatch, "after_runner")
    assert run.stopped == "ncu did not end within 1 s after the runner's last case; stopped"
    assert [s.ok for s in run.cases] == [True, True, True]
    assert list(parse_csv(run.report)["kernel"]) == ["k_a", "k_b", "k_c"]
    assert_no_process_of(group)


def test_nothing_writes_into_the_work_folder_once_a_run_returns(tmp_path, monkeypatch):
    import time

    stalled(tmp_path, monkeypatch, "before_runner")
    before = {path: path.stat().st_mtime_ns for path in (tmp_path / "run").iterdir()}
    time.sleep(0.5)
    assert {path: path.stat().st_mtime_ns for path in (tmp_path / "run").iterdir()} == before


def test_a_fault_rerun_that_never_ends_is_stopped(tmp_path, monkeypatch):
    import sys

    from ncuverify.profile import faults

    hang = tmp_path / "hang.py"
    hang.write_text("import os, time\nos.fork()\nprint(os.getpgid(0), flush=True)\ntime.sleep(600)\n")
    real_start = faults.start
    monkeypatch.setattr(
        faults,
        "start",
        lambda command, output, device=None: real_start([sys.executable, str(hang)], output, device),
    )
    assert faults.name_the_fault(tmp_path / "fault", CASES[0], 1) is None
    assert_no_process_of(int((tmp_path / "fault" / "output.txt").read_text().split()[0]))


def test_what_an_earlier_run_in_the_folder_left_is_not_taken_for_this_one_s(tmp_path, monkeypatch):
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "status.json").write_text(json.dumps([CaseStatus("a", True, None, "k_a", 1).to_json()]))
    (folder / "progress.json").write_text(Progress("c", False, True, 9).to_json())
    run, _ = stalled(tmp_path, monkeypatch, "before_runner")
    reason = "ncu did not start the runner within 1 s; stopped"
    assert run.cases == tuple(CaseStatus(name, False, reason) for name in ("a", "b", "c"))


def test_an_ncu_that_cannot_be_started_is_an_environment_problem(tmp_path):
    not_executable = tmp_path / "ncu"
    not_executable.write_text("")
    with pytest.raises(
        EnvironmentProblem, match=r"^ncu could not be started \('.*/ncu'\): \[Errno 13\] Permission denied"
    ):
        run_ncu(tmp_path / "run", CASES, ["a.sum"], NcuOptions(executable=str(not_executable)))


def test_a_damaged_status_from_the_runner_is_an_environment_problem(tmp_path, monkeypatch):
    from ncuverify.profile.outcome import read_status

    path = tmp_path / "status.json"
    path.write_text('[{"case": "a", "ok": "yes"}]')
    with pytest.raises(EnvironmentProblem) as problem:
        read_status(path, ["a"])
    assert str(problem.value) == "the runner's status could not be read ([0].ok: not true or false)"
    path.write_text('[{"case": "z", "ok": true}]')
    with pytest.raises(EnvironmentProblem, match=r"\(case 'z' is not in its plan\)"):
        read_status(path, ["a"])


def test_an_import_that_never_ends_is_stopped(tmp_path, monkeypatch):
    from ncuverify.profile import saved_report

    notes = tmp_path / "notes.jsonl"
    monkeypatch.setenv("FAKE_NCU_NOTES", str(notes))
    monkeypatch.setenv("FAKE_NCU_STALL", "probes")
    monkeypatch.setattr(saved_report, "IMPORT_TIMEOUT_S", 1)
    report = tmp_path / "profile.ncu-rep"
    with pytest.raises(EnvironmentProblem) as problem:
        saved_report.import_report(NcuOptions(executable=str(STALLING_NCU)), report, "details")
    assert (
        str(problem.value)
        == f"ncu could not read its report {report}: stalling_ncu did not finish within 1 s; stopped"
    )
    assert_group_ends(json.loads(notes.read_text())["pgid"])


@pytest.mark.parametrize(
    ("visible", "index", "expected"),
    [
        (None, 1, "1"),
        ("2,3", 1, "3"),
        (" 4 , 5 ", 0, "4"),
        ("GPU-a1b2,MIG-c3", 1, "MIG-c3"),
        ("0,1,x,2", 1, "1"),
    ],
)
def test_the_gpu_given_to_ncu_is_the_one_cuda_visible_devices_lists(monkeypatch, visible, index, expected):
    from ncuverify.profile.process import visible_device

    if visible is None:
        monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    else:
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
    assert visible_device(index) == expected


@pytest.mark.parametrize("visible", ["", "-1", "0,,1", "0,x,1", "１", "0," + "9" * 5000 + "x", "\x1b[2J"])
def test_odd_cuda_visible_devices_name_the_gpu_that_is_not_there(monkeypatch, visible):
    from ncuverify.profile.process import visible_device
    from ncuverify.profile.shown import shown_output

    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
    with pytest.raises(EnvironmentProblem) as problem:
        visible_device(1)
    assert (
        str(problem.value)
        == f"no GPU 1 among those CUDA_VISIBLE_DEVICES makes visible ({shown_output(visible)})"
    )
    assert "\x1b" not in str(problem.value)


# --- ncu's CSV, whatever it holds -------------------------------------------------------------------------

HEADER = '"ID","Kernel Name","a.sum"\n"","","sector"\n'


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('"ID","Kernel Name","m","m"\n"0","k","1","2"\n', "the column 'm' appears twice"),
        ('"ID","Kernel","m"\n"0","k","1"\n', "no 'Kernel Name' column"),
        (HEADER + '"0","k"\n', "row 2 has 2 fields, the header 3"),
        (HEADER + '"0","k","1","2"\n', "row 2 has 4 fields, the header 3"),
        (HEADER + '"1e3","k","1"\n', "the launch ID '1e3' is not a number"),
        (
            HEADER + '"99999999999999999999999","k","1"\n',
            "the launch ID '99999999999999999999999' is not a number",
        ),
        (HEADER + '"-1","k","1"\n', "the launch ID '-1' is not a number"),
        (HEADER + '"٣","k","1"\n', "the launch ID '٣' is not a number"),
        (HEADER + '"","k","1"\n', "the launch ID '' is not a number"),
        (HEADER + '"0"x,"k","1"\n', "',' expected after '\"'"),
        (HEADER + '"0","' + "k" * 200_000 + '","1"\n', "field larger than field limit (131072)"),
        ('"ID","Kernel Name","Metric Name","Metric Value"\n"0","k","a.sum","1"\n', "no 'Metric Unit' column"),
        (
            '"ID","Kernel Name",' + ",".join(f'"m{i}"' for i in range(MAX_CSV_COLUMNS)) + "\n",
            "10002 columns, more than 10000",
        ),
    ],
)
def test_a_broken_csv_is_a_clear_problem(text, reason):
    with pytest.raises(EnvironmentProblem) as problem:
        parse_csv("==PROF== Disconnected from process 1\n" + text)
    assert str(problem.value) == f"ncu's CSV could not be read ({reason})"


def test_a_csv_of_too_many_values_is_refused_before_it_is_read(monkeypatch):
    from ncuverify.profile import pages

    monkeypatch.setattr(pages, "MAX_CSV_CELLS", 30)
    rows = "".join(f'"{i}","k","1"\n' for i in range(10))
    assert len(parse_csv(HEADER + rows[: rows.index('"9"')])) == 9  # 10 rows (units too) of 3: 30 values
    with pytest.raises(EnvironmentProblem) as problem:
        parse_csv(HEADER + rows + '"10","k","1"\n"11"x\n')  # the broken row is never read
    assert str(problem.value) == "ncu's CSV could not be read (13 rows of 3 columns, more than 30 values)"


def test_the_units_row_gives_each_metric_its_unit_and_the_columns_are_typed():
    table = parse_csv(HEADER + '"0","k","1,024"\n"1","k","n/a"\n')
    assert table.to_dict("list")["unit"] == ["sector", "sector"]
    assert table["launch"].dtype == "int64" and table["value"].dtype == "float64"
    assert table["value"].iloc[0] == 1024 and math.isnan(table["value"].iloc[1])


@pytest.mark.parametrize(
    ("text", "value"), [("-5", -5.0), ("1.5e3", 1500.0), ("65,850,789", 65850789.0), ("0.000", 0.0)]
)
def test_more_numbers(text, value):
    assert parse_number(text) == value


@pytest.mark.parametrize(
    "text",
    [
        "nan",
        "inf",
        "-inf",
        "Infinity",
        "NaN",
        "1_000",
        "１２",
        "1e999",
        "1,2",
        "1,0000",
        "0x10",
        "1" * 65,
        "+1",
        "1 2",
    ],
)
def test_what_only_python_reads_as_a_number_is_none(text):
    assert math.isnan(parse_number(text))


cells = st.text(alphabet=st.characters(blacklist_characters='"\n\r'), max_size=12) | st.sampled_from(
    ["0", "1", "1,024", "nan", "n/a", "inf", "1e999", "", "ID", "Kernel Name", "Metric Name"]
)
csv_rows = st.lists(st.lists(cells, min_size=1, max_size=5), max_size=6)


@settings(max_examples=150, deadline=None)
@given(csv_rows, st.booleans())
def test_any_csv_after_ncu_s_header_is_a_table_of_finite_numbers_or_a_clear_problem(rows, details):
    head = (
        '"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"'
        if details
        else '"ID","Kernel Name","a.sum"'
    )
    text = "\n".join([head, *(",".join(f'"{cell}"' for cell in row) for row in rows)])
    try:
        table = parse_csv(text)
    except EnvironmentProblem as problem:
        assert str(problem).startswith("ncu's CSV could not be read (")
        return
    assert list(table.columns) == ["launch", "kernel", "metric", "value", "unit"]
    assert not table["value"].map(math.isinf).any()


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=300))
def test_any_text_after_ncu_s_header_parses_or_is_a_clear_problem(text):
    with contextlib.suppress(EnvironmentProblem):
        parse_csv('"ID","Kernel Name","a.sum"\n' + text)


def test_a_status_naming_a_case_of_unknown_kernel_is_a_clear_problem():
    log, status = capture("sample")
    with pytest.raises(
        EnvironmentProblem, match=r"^the runner reported case 'stride1', whose kernel is not known$"
    ):
        measurements(parse_csv(log), status, {})


def test_a_run_that_measured_nothing_combines_and_splits_cleanly():
    from ncuverify.measurements import Measurements

    nothing = measurements(parse_csv(""), [CaseStatus("f::a", False, "ncu did not start the runner")], {})
    combined = Measurements.empty().combined(nothing)
    assert combined.of_prefix("f::").failed_cases == {"a": "ncu did not start the runner"}
    assert combined.of_prefix("g::").frame.empty
