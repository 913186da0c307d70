"""The pass model: ncu's replay passes of a launch from the metrics it is asked for, against what ncu
reported on an H200 (the 17 measured lists, and every launch of the committed recordings)."""

import json
from pathlib import Path

import pytest
from conftest import DATA, FIXTURES, ROOT

from ncuverify.names import PASSES_METRIC
from ncuverify.profile import perfworks
from ncuverify.profile.passes import PassModel, model_for, ncu_passes, table_passes
from ncuverify.profile.schedule import PassCounts, ProfiledCase, Unit, launch_passes
from ncuverify.profile.table import tidy_rows
from ncuverify.profile.work import is_driver_command

LD_REQUESTS = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
LD_SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"


def measured_lists() -> list[tuple[str, int, int, list[str]]]:
    """tests/data/passes-h200.tsv: name, ncu's passes, perfworks' hardware passes, the metrics."""
    rows = []
    for line in (DATA / "passes-h200.tsv").read_text().splitlines():
        if line and not line.startswith("#"):
            name, ncu, hardware, metrics = line.split("\t")
            rows.append((name, int(ncu), int(hardware), metrics.split(",")))
    return rows


def test_the_rule_adds_ncu_s_own_passes_to_the_hardware_ones():
    assert [ncu_passes(k, patched=False) for k in (0, 1, 2, 4)] == [1, 1, 3, 5]
    assert [ncu_passes(k, patched=True) for k in (0, 1, 2, 4)] == [1, 3, 4, 6]


def test_the_table_predicts_ncu_s_passes_for_each_measured_list():
    lists = measured_lists()
    assert len(lists) == 17
    model = PassModel()  # no chip: the table alone
    assert [(name, model.passes(metrics)) for name, _, _, metrics in lists] == [
        (name, ncu) for name, ncu, _, _ in lists
    ]
    assert model.source == "the table of counter groups"


def test_perfworks_predicts_ncu_s_passes_for_each_measured_list():
    model = model_for("sm_90")
    model.passes(["dram__bytes_read.sum"])  # loads perfworks, where it is here
    if model.source != "perfworks":
        pytest.skip("no libnvperf_host.so here (pip install nvidia-cuda-cupti, or a CUDA toolkit)")
    lists = measured_lists()
    assert [(name, model.passes(metrics)) for name, _, _, metrics in lists] == [
        (name, ncu) for name, ncu, _, _ in lists
    ]


def recorded_launches(folder: Path) -> list[tuple[list[str], int]]:
    """Every launch of a recording that ncu profiled: its process's metrics (commands.json) and ncu's
    passes for it (a process of the runner alone has neither)."""
    commands = json.loads((folder / "commands.json").read_text())
    launches = []
    for index, command in enumerate(commands):
        if is_driver_command(command):
            continue
        log = folder / ("ncu.log" if index == 0 else f"ncu.{index}.log")
        metrics = command[command.index("--metrics") + 1].split(",")
        rows = tidy_rows(log.read_text())
        launches += [(metrics, int(value)) for _, _, name, value, _ in rows if name == PASSES_METRIC]
    return launches


@pytest.mark.parametrize("chip", [None, "sm_90"])
def test_the_model_predicts_every_recorded_launch_s_passes(chip):
    """recordings/h200 and the tests' captures; not the faults capture,
    whose faulting launches end after their first pass."""
    model = model_for(chip)
    folders = [ROOT / "recordings" / "h200", *(FIXTURES / n for n in ("sample", "explain", "static"))]
    launches = [launch for folder in folders for launch in recorded_launches(folder)]
    assert len(launches) >= 187
    wrong = [(sorted(m), ncu, model.passes(m)) for m, ncu in launches if model.passes(m) != ncu]
    assert wrong == []
    assert {ncu for _, ncu in launches} >= {1, 3, 4}


def test_the_schedule_predicts_from_the_first_run():
    """No pass counts remembered: L1 requests beside L1 sectors take 2 hardware passes and ncu's own."""
    assert PassCounts().passes(frozenset({LD_REQUESTS, LD_SECTORS, "gpu__time_duration.sum"})) == 3
    assert PassCounts().passes(frozenset({"smsp__inst_executed_op_global_ld.sum", LD_SECTORS})) == 1


def test_a_library_that_is_not_perfworks_leaves_the_table(tmp_path: Path, monkeypatch):
    fake = tmp_path / "libnvperf_host.so"
    fake.write_text("not a library")
    monkeypatch.setenv(perfworks.LIBRARY_VARIABLE, str(fake))
    model = model_for("sm_90")
    assert model.passes([LD_REQUESTS, LD_SECTORS]) == 3 and model.source == "the table of counter groups"
    monkeypatch.setenv(perfworks.LIBRARY_VARIABLE, "none")
    assert perfworks.find_library() is None


def test_perfworks_is_never_looked_for_in_the_working_folder(tmp_path: Path, monkeypatch):
    """A pull request controls the working folder: a library there would run its code once loaded."""
    planted = tmp_path / "nvidia" / "cu13" / "lib"
    planted.mkdir(parents=True)
    (planted / "libnvperf_host.so").write_text("planted")
    monkeypatch.delenv(perfworks.LIBRARY_VARIABLE, raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    found = perfworks.find_library()
    assert found is None or tmp_path not in found.parents


def test_an_unknown_l1tex_counter_takes_a_pass_of_its_own():
    assert table_passes({"l1tex__x.sum", LD_SECTORS, "dram__bytes_read.sum"}) == 2
    assert table_passes({"dram__bytes_read.sum", "smsp__inst_executed.sum"}) == 1
    assert table_passes(set()) == 0


def test_a_process_s_launch_passes_are_its_launches_times_its_passes():
    counted = ProfiledCase("f::a", 3, frozenset({LD_REQUESTS, LD_SECTORS}))
    sequence = ProfiledCase("f::s#1", 2, frozenset({LD_SECTORS}), steps=("f::s#1", "f::s#2"))
    repeats = ProfiledCase("f::a (repeats)", 10, frozenset({"gpu__time_duration.sum"}))
    cases = [counted, sequence, repeats]
    unit = Unit(0, counted.metrics | sequence.metrics, ("f::a", "f::s#1", "f::s#2"))
    assert launch_passes(unit, cases, PassCounts()) == (3 + 2) * 3
    timing = Unit(0, repeats.metrics, ("f::a (repeats)",))
    assert launch_passes(timing, cases, PassCounts()) == 10


def test_a_perfworks_that_fails_unexpectedly_is_asked_no_more():
    asked = []

    class Broken:
        def passes(self, hardware):
            asked.append(hardware)
            raise TypeError("an answer of another shape")

    model = model_for("sm_90")
    model._tried, model._perfworks = True, Broken()  # as if loaded
    assert model.passes([LD_REQUESTS, LD_SECTORS]) == 3  # the table's count
    assert model.passes([LD_REQUESTS]) == 1 and len(asked) == 1
    assert model.source == "the table of counter groups"


def test_the_time_beside_sass_patched_counts_alone_takes_a_hardware_pass():
    """On an H200 (2026-12-03) a process asked for the time and four SASS-patched shared-memory counts
    took 3 passes: the time rides along in another counter's pass, but takes one where there is none."""
    model = PassModel()
    sass = [
        "smsp__sass_inst_executed_op_shared_ld.sum",
        "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    ]
    assert model.passes(["gpu__time_duration.sum", *sass]) == 3
    assert model.passes(sass) == 1 and model.passes(["gpu__time_duration.sum"]) == 1
    assert (
        model.passes(
            ["gpu__time_duration.sum", "launch__grid_size", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"]
        )
        == 1
    )
