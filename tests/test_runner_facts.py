"""The runner run without ncu, driven by a launcher that plays a GPU and its driver's attributes: each
case launched as under ncu, its launch facts written as the rows of ncu's raw page, one per launch, that
the profile stage reads as it reads ncu's; a case whose occupancy is not the driver's left to ncu."""

from dataclasses import dataclass
from pathlib import Path

from fake_launcher import FakeLauncher, case_number
from planned_arguments import planned_args
from test_runner_occupancy import H200

from ncuverify.profile.run import Run
from ncuverify.profile.work import run_measurements
from ncuverify.runner.occupancy import FunctionAttributes, device_facts, launch_facts, occupancy
from ncuverify.runner.plan import Plan, PlannedCase
from ncuverify.runner.run import run_plan
from ncuverify.runner.status import NEEDS_NCU, read_statuses

OUT = {"buffer": "int32", "count": 4, "fill": "iota", "name": "out"}
FUNCTION = FunctionAttributes(registers=33, static_shared=4096)
FACTS = [
    "launch__block_size",
    "launch__occupancy_limit_registers",
    "sm__maximum_warps_per_active_cycle_pct",
    "launch__waves_per_multiprocessor",
    "device__attribute_max_warps_per_multiprocessor",
]


@dataclass
class FactsFake(FakeLauncher):
    """A fake GPU whose driver gives H200's attributes, FUNCTION's for every kernel, and its
    occupancy as worked out, or one block fewer for the cases of wrong_occupancy."""

    wrong_occupancy: frozenset[str] = frozenset()

    def device_attributes(self) -> dict[str, int]:
        return dict(H200)

    def function_attributes(self, kernel: object) -> FunctionAttributes:
        return FUNCTION

    def active_blocks(self, kernel: object, block_threads: int, dynamic_shared: int) -> int:
        blocks = occupancy(H200, FUNCTION, block_threads, dynamic_shared).active_blocks
        symbol = self.kernels[-1].symbol
        return blocks - 1 if symbol.removeprefix("k_") in self.wrong_occupancy else blocks


def planned(name: str, repeat: int = 1) -> PlannedCase:
    return PlannedCase(
        name, f"/{name}.cubin", f"k_{name}", (1000, 1, 1), (256, 1, 1), 0, planned_args((OUT,)), repeat
    )


def run_facts(tmp_path: Path, fake: FakeLauncher, *cases: PlannedCase, facts: list[str] = FACTS) -> Run:
    """The plan run without ncu; its status and report as the profile stage reads them."""
    report = tmp_path / "ncu.log"
    opens = tmp_path / "next.gate"
    plan = Plan(
        0, str(tmp_path / "status.json"), list(cases), opens=str(opens), report=str(report), facts=facts
    )
    run_plan(plan, lambda device: fake)
    text = report.read_text() if report.exists() else ""
    return Run(text, tuple(read_statuses((tmp_path / "status.json").read_text())))


def test_each_launch_has_its_row_of_facts_as_ncu_gives_them_and_its_buffers_are_read_back(tmp_path: Path):
    fake = FactsFake(0)
    run = run_facts(tmp_path, fake, planned("once"), planned("thrice", repeat=3))
    assert fake.launches == ["once", "thrice", "thrice", "thrice"], "launched as under ncu"
    measured = run_measurements(run, {"once": "k_once", "thrice": "k_thrice"})
    assert measured.failed_cases == {} and measured.unmeasured == ()
    expected = launch_facts(H200, FUNCTION, (1000, 1, 1), (256, 1, 1), 0) | device_facts(H200)
    assert measured.value("once", "launch__occupancy_limit_registers") == 6
    assert measured.value("once", "sm__maximum_warps_per_active_cycle_pct") == 75
    assert measured.value("thrice", "launch__block_size") == expected["launch__block_size"] == 256
    assert measured.value("thrice", "launch__waves_per_multiprocessor") == 1.26, (
        "as ncu prints it: 2 decimals"
    )
    assert measured.value("once", "device__attribute_max_warps_per_multiprocessor") == 64
    units = {metric: unit for _, _, metric, _, unit in measured.rows}
    assert units["sm__maximum_warps_per_active_cycle_pct"] == "%"
    assert measured.value("once", "buffer__out.first") == case_number("once")
    lines = run.report.splitlines()
    assert lines[0].startswith('"ID","Kernel Name",') and len(lines) == 2 + 4, "header, units, 4 launches"
    assert [line.split(",")[0] for line in lines[2:]] == ['"0"', '"1"', '"2"', '"3"']
    assert (tmp_path / "next.gate").exists(), "every case ran: the next process may launch"


def test_a_case_whose_occupancy_is_not_the_driver_s_is_left_to_ncu_unlaunched(tmp_path: Path):
    fake = FactsFake(0, wrong_occupancy=frozenset({"odd"}))
    run = run_facts(tmp_path, fake, planned("odd"), planned("even"))
    assert fake.launches == ["even"]
    odd, even = run.cases
    assert not odd.ok and str(odd.error).startswith(
        f"{NEEDS_NCU}: the occupancy worked out (6 blocks per SM)"
    )
    assert even.ok
    measured = run_measurements(run, {"odd": "k_odd", "even": "k_even"})
    assert measured.value("even", "launch__block_size") == 256
    assert not (tmp_path / "next.gate").exists(), "ncu runs the case before the next process launches"


def test_a_metric_beyond_the_set_is_left_to_ncu(tmp_path: Path):
    run = run_facts(tmp_path, FactsFake(0), planned("a"), facts=["launch__occupancy_limit_shared_mem"])
    assert run.cases[0].error == f"{NEEDS_NCU}: launch__occupancy_limit_shared_mem is not computed without it"


def test_a_launcher_without_the_driver_s_attributes_leaves_every_case_to_ncu(tmp_path: Path):
    fake = FakeLauncher(0)
    run = run_facts(tmp_path, fake, planned("a"))
    assert fake.launches == []
    assert run.cases[0].error == f"{NEEDS_NCU}: this launcher reads no driver attributes"


def test_the_plan_carries_its_report_and_facts(tmp_path: Path):
    plan = Plan(0, "status.json", [planned("a")], report=str(tmp_path / "ncu.log"), facts=FACTS)
    plan.write(tmp_path / "plan.json")
    assert Plan.read(tmp_path / "plan.json") == plan
