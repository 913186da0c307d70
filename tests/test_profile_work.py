"""What a process profiles, whatever its kind: kernel cases for the runner under ncu, a program's cases,
kernel cases for the runner alone."""

import sys
from pathlib import Path

import pytest
from conftest import FIXTURES

from ncuverify.errors import EnvironmentProblem
from ncuverify.profile.command import NcuOptions, ncu_command
from ncuverify.profile.outcome import read_status
from ncuverify.profile.program_command import program_ncu_command
from ncuverify.profile.program_work import PlannedProgram, ProgramWork, program_works
from ncuverify.profile.run import Run
from ncuverify.profile.work import DriverWork, KernelWork, is_driver_command, refused
from ncuverify.runner import CaseStatus, PlannedCase
from ncuverify.runner.occupancy import DEFAULT_FACT
from ncuverify.spec.programs import ProgramCase

SAMPLE = FIXTURES / "sample"  # a real H200 run of tests/data/sample.yaml
NAMES = ("sample::stride1", "sample::stride32", "sample::scale_2d", "sample::misaligned")


def test_kernel_work_s_command_profiles_its_cases_kernels_with_its_metrics(tmp_path):
    cases = [_case("f::a", "_Z1av"), _case("f::b", "_Z1bv")]
    work = KernelWork.of(cases, ["dram__bytes_read.sum"], tmp_path / "plan.json")
    options = NcuOptions()
    assert work.names == ("f::a", "f::b") and work.metrics == {"dram__bytes_read.sum"}
    log = tmp_path / "ncu.log"
    expected = ncu_command(options, ["dram__bytes_read.sum"], ["_Z1av", "_Z1bv"], log, tmp_path / "plan.json")
    assert work.command(options, log) == expected


def test_kernel_work_splits_a_real_report_back_into_its_cases():
    status = read_status(SAMPLE / "status.json", list(NAMES))
    run = Run((SAMPLE / "ncu.log").read_text(), tuple(status))
    measured = KernelWork.of([], [], Path("plan.json")).measurements(run)
    assert set(measured.cases) == set(NAMES) and not measured.failed_cases


def test_program_work_s_command_is_its_case_s_command_under_ncu(tmp_path):
    case = ProgramCase.model_validate({"program": {"command": ["python3", "add.py"]}, "kernel": "add"})
    work = ProgramWork((PlannedProgram("f::add", case, tmp_path, frozenset({"launch__grid_size"})),))
    argv = work.argv()
    assert isinstance(argv, list) and argv[1:] == ["add.py"]
    log = tmp_path / "ncu.log"
    options = NcuOptions()
    assert work.command(options, log) == program_ncu_command(options, case, {"launch__grid_size"}, log, argv)


def test_work_that_does_not_run_fails_every_case_with_why(tmp_path):
    case = ProgramCase.model_validate({"program": {"command": ["./missing"]}, "kernel": "add"})
    planned = [PlannedProgram(f"f::{name}", case, tmp_path, frozenset()) for name in ("a", "b")]
    work = ProgramWork(tuple(planned))
    assert isinstance(work.argv(), str)  # not there: the run fails its cases before it asks for a command
    assert refused(work, "not allowed").failed_cases == {"f::a": "not allowed", "f::b": "not allowed"}


def _case(name: str, symbol: str) -> PlannedCase:
    return PlannedCase(name, "k.cubin", symbol, (1, 1, 1), (32, 1, 1), 0, [])


def planned(name: str, folder: Path, **fields: object) -> PlannedProgram:
    written = {"program": {"command": ["python3", "ranges.py"]}, "kernel": "elementwise", **fields}
    return PlannedProgram(name, ProgramCase.model_validate(written), folder, frozenset({name[-1]}))


def test_program_cases_on_one_command_are_one_work_that_selects_their_union(tmp_path):
    cases = [
        planned("f::a", tmp_path, nvtx_include=["add/"]),
        planned("f::b", tmp_path, nvtx_include=["mul/"], kernel="gemm", launch_count=2),
        planned("f::c", tmp_path, nvtx_include=["add/"], launch_skip=1),  # skips: alone
        planned("f::d", tmp_path, nvtx_include=["add/"], nvtx_exclude=["x/"]),  # excludes: apart
    ]
    works = program_works(cases, device=None)
    assert [work.names for work in works] == [("f::a", "f::b"), ("f::c",), ("f::d",)]
    selector = works[0].selector
    assert (selector.kernel, selector.nvtx_include, selector.launch_count) == (
        "(elementwise)|(gemm)",
        ["add/", "mul/"],
        3,
    )
    assert works[0].metrics == {"a", "b"}
    assert [work.names for work in program_works(cases, device=None, shared=False)] == [
        ("f::a",),
        ("f::b",),
        ("f::c",),
        ("f::d",),
    ]


def test_a_recorded_run_whose_cases_could_not_share_a_process_is_refused(tmp_path):
    work = ProgramWork((planned("f::a", tmp_path), planned("f::c", tmp_path, launch_skip=1)))
    run = Run("", (CaseStatus("f::a", True, launches=1), CaseStatus("f::c", True, launches=1)))
    with pytest.raises(EnvironmentProblem, match="share no process"):
        work.measurements(run)


def test_driver_work_s_command_is_the_runner_alone_and_says_so(tmp_path):
    cases = [_case("f::a", "_Z1av")]
    work = DriverWork.of(cases, ["launch__block_size"], tmp_path / "plan.json")
    command = work.command(NcuOptions(executable="/opt/ncu/ncu"), tmp_path / "ncu.log")
    assert command == [sys.executable, "-m", "ncuverify.runner", str(tmp_path / "plan.json")]
    assert is_driver_command(command)
    kernel = KernelWork.of(cases, ["launch__block_size"], tmp_path / "plan.json")
    assert not is_driver_command(kernel.command(NcuOptions(), tmp_path / "ncu.log"))
    # cases that read only buffers still get a row per launch
    assert DriverWork.of(cases, [], tmp_path / "plan.json").metrics == {DEFAULT_FACT}
