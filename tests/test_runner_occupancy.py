"""The launch facts the runner computes without ncu, against ncu's own rows for every launch of the
committed recordings that holds their inputs (block and grid size, registers, shared memory and the
device's attributes): every figure the same as ncu's CSV gives it."""

from collections import defaultdict

import pytest
from conftest import ROOT

from ncuverify.ncu.numbers import parse_number
from ncuverify.profile.table import tidy_rows
from ncuverify.runner.occupancy import (
    DEFAULT_FACT,
    DEVICE_PREFIX,
    DRIVER_DEVICE_ATTRIBUTES,
    DRIVER_METRICS,
    FACT_UNITS,
    FunctionAttributes,
    device_facts,
    launch_facts,
    ncu_text,
    occupancy,
)

RECORDINGS = [ROOT / "recordings" / "h200", ROOT / "recordings" / "h200-examples"]
INPUTS = [
    "launch__block_size",
    "launch__grid_size",
    "launch__registers_per_thread",
    "launch__shared_mem_per_block_static",
    "launch__shared_mem_per_block_dynamic",
    *(DEVICE_PREFIX + name for name in DRIVER_DEVICE_ATTRIBUTES),
]
H200 = {
    "multiprocessor_count": 132,
    "max_threads_per_block": 1024,
    "max_threads_per_multiprocessor": 2048,
    "max_blocks_per_multiprocessor": 32,
    "max_registers_per_block": 65536,
    "max_registers_per_multiprocessor": 65536,
    "max_shared_memory_per_block": 49152,
    "max_shared_memory_per_block_optin": 232448,
    "max_shared_memory_per_multiprocessor": 233472,
    "reserved_shared_memory_per_block": 1024,
    "warp_size": 32,
    "l2_cache_size": 62914560,
    "compute_capability_major": 9,
    "compute_capability_minor": 0,
    "global_memory_bus_width": 6016,
    "async_engine_count": 3,
    "total_constant_memory": 65536,
}


def recorded_launches() -> list[tuple[str, dict[str, float], dict[str, str]]]:
    """Each launch of the recordings whose rows hold the inputs: where, its values, its units."""
    launches = []
    for folder in RECORDINGS:
        for log in sorted(folder.glob("ncu*.log")):
            values: dict[tuple[int, str], dict[str, float]] = defaultdict(dict)
            units: dict[str, str] = {}
            for launch, kernel, metric, value, unit in tidy_rows(log.read_text()):
                values[launch, kernel][metric] = value
                units[metric] = unit
            for (launch, kernel), found in values.items():
                if all(name in found for name in INPUTS):
                    launches.append((f"{log.relative_to(ROOT)} launch {launch} ({kernel})", found, units))
    return launches


def computed(found: dict[str, float]) -> dict[str, float]:
    device = {name: int(found[DEVICE_PREFIX + name]) for name in DRIVER_DEVICE_ATTRIBUTES}
    function = FunctionAttributes(
        int(found["launch__registers_per_thread"]), int(found["launch__shared_mem_per_block_static"])
    )
    grid = (int(found["launch__grid_size"]), 1, 1)
    block = (int(found["launch__block_size"]), 1, 1)
    dynamic = int(found["launch__shared_mem_per_block_dynamic"])
    return launch_facts(device, function, grid, block, dynamic) | device_facts(device)


def test_every_fact_equals_ncu_s_on_every_recorded_launch():
    launches = recorded_launches()
    assert len(launches) > 200, "the recordings' launches with the inputs of the facts"
    compared: dict[str, int] = defaultdict(int)
    wrong = []
    for where, found, _ in launches:
        for metric, value in computed(found).items():
            if metric in found:
                compared[metric] += 1
                if parse_number(ncu_text(value)) != found[metric]:
                    wrong.append((where, metric, ncu_text(value), found[metric]))
    assert wrong == []
    assert set(compared) == DRIVER_METRICS, "every metric of the set checked against ncu's"
    assert min(compared.values()) > 200


def test_the_units_are_ncu_s():
    units = {metric: unit for _, _, found in recorded_launches() for metric, unit in found.items()}
    assert {metric: units[metric] for metric in FACT_UNITS} == FACT_UNITS


def test_the_overall_occupancy_is_the_least_limit_at_the_full_carveout():
    # smem_48k_per_block: 256 threads, 16 registers, 48 KiB static: shared memory allows 4 blocks
    limits = occupancy(H200, FunctionAttributes(16, 49152), 256, 0)
    assert (limits.registers, limits.warps, limits.blocks, limits.shared_mem) == (16, 8, 32, 4)
    assert limits.active_blocks == 4
    # 33 registers take 40 a thread (256 a warp): 6 blocks of 8 warps
    assert occupancy(H200, FunctionAttributes(33, 0), 256, 0).active_blocks == 6
    # a block of 33 threads is two warps
    assert occupancy(H200, FunctionAttributes(16, 0), 33, 0).warps == 32


def test_a_block_beyond_the_registers_of_a_block_gets_none():
    assert occupancy(H200, FunctionAttributes(255, 0), 1024, 0).registers == 0


@pytest.mark.parametrize(
    ("value", "text"), [(4.0, "4"), (31.0303, "31.03"), (0.125, "0.12"), (0.0009, "0.00"), (18.75, "18.75")]
)
def test_values_print_as_ncu_prints_them(value: float, text: str):
    assert ncu_text(value) == text


def test_the_default_fact_is_one_of_the_set():
    assert DEFAULT_FACT in DRIVER_METRICS


def test_the_driver_s_registers_are_no_fewer_than_ncu_allocates():
    # device.yaml's smem4 on an H200: its cubin says 8 registers; ncu says 16, and a limit of 128
    # blocks of 32 threads
    smem4 = FunctionAttributes.of_driver(8, 4)
    assert smem4.registers == 16
    assert occupancy(H200, smem4, 32, 0).registers == 128
    assert FunctionAttributes.of_driver(40, 0).registers == 40
