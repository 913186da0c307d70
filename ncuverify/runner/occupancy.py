"""The launch facts that need no profiler: what ncu reports of a launch's geometry, resources and
theoretical occupancy, worked out from the driver's device and function attributes the way the CUDA
occupancy calculator works them out, under ncu's metric names and in its units.

Pure: the runner asks the driver for the attributes (`runner/launch.py`) and this module alone turns
them into figures, so that the same rule is checked against every launch of a recording's ncu rows
(tests/test_runner_occupancy.py) and, on a GPU, against the driver's own occupancy.

Only the metrics of FACT_UNITS are computed. `launch__occupancy_limit_shared_mem` and
`launch__shared_mem_config_size` are not among them: ncu reports them for the shared memory carveout
the driver chose for the launch, which no driver attribute tells (it is not the smallest carveout
that keeps the launch's occupancy). The overall occupancy does not depend on it: the driver picks a
carveout that does not lower the occupancy, which the full carveout gives.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

# Registers are allocated per warp in units of this many (every architecture since Kepler).
REGISTER_ALLOCATION_UNIT = 256
# An SM's register file is split between its sub-partitions (warp schedulers): a warp's registers lie
# in one of them, so that registers bound the warps of each, not the SM's total.
SUB_PARTITIONS = 4

# A metric ncu reports of every launch, the unit its raw page gives it ('' for none).
FACT_UNITS: dict[str, str] = {
    "launch__grid_size": "",
    "launch__block_size": "",
    "launch__thread_count": "thread",
    "launch__sm_count": "SM",
    "launch__registers_per_thread": "register/thread",
    "launch__registers_per_thread_allocated": "register/thread",
    "launch__shared_mem_per_block_static": "byte/block",
    "launch__shared_mem_per_block_dynamic": "byte/block",
    "launch__shared_mem_per_block_driver": "byte/block",
    "launch__shared_mem_per_block": "byte/block",
    "launch__shared_mem_per_block_allocated": "byte/block",
    "launch__occupancy_limit_registers": "block",
    "launch__occupancy_limit_warps": "block",
    "launch__occupancy_limit_blocks": "block",
    "launch__waves_per_multiprocessor": "",
    "sm__maximum_warps_avg_per_active_cycle": "warp",
    "sm__maximum_warps_per_active_cycle_pct": "%",
}

# The device attributes the runner reads from the driver (CU_DEVICE_ATTRIBUTE_<NAME>), which ncu
# reports as device__attribute_<name> with the driver's value.
DRIVER_DEVICE_ATTRIBUTES = (
    "multiprocessor_count",
    "max_threads_per_block",
    "max_threads_per_multiprocessor",
    "max_blocks_per_multiprocessor",
    "max_registers_per_block",
    "max_registers_per_multiprocessor",
    "max_shared_memory_per_block",
    "max_shared_memory_per_block_optin",
    "max_shared_memory_per_multiprocessor",
    "reserved_shared_memory_per_block",
    "warp_size",
    "l2_cache_size",
    "compute_capability_major",
    "compute_capability_minor",
    "global_memory_bus_width",
    "async_engine_count",
    "total_constant_memory",
)
DEVICE_PREFIX = "device__attribute_"
# ncu's, derived from two of the driver's.
MAX_WARPS_ATTRIBUTE = "max_warps_per_multiprocessor"

# Every metric the runner computes without ncu: a case whose claims read these (or nothing but buffers)
# needs no ncu process.
DRIVER_METRICS: frozenset[str] = frozenset(
    [
        *FACT_UNITS,
        *(DEVICE_PREFIX + name for name in (*DRIVER_DEVICE_ATTRIBUTES, MAX_WARPS_ATTRIBUTE)),
    ]
)
# What a process of cases whose claims read only buffers computes, so that each launch has a row (as
# ncu is asked for the time where no metric is named).
DEFAULT_FACT = "launch__grid_size"


def unit_of(metric: str) -> str:
    """The unit of a metric of DRIVER_METRICS, as ncu's raw page gives it."""
    return FACT_UNITS.get(metric, "")


# The fewest registers a thread is given. A kernel whose cubin says 8 (device.yaml's smem4 on an H200)
# has 16 per thread in ncu's `launch__registers_per_thread` and a register limit of 128 blocks of 32
# threads, not the 256 that 8 would allow; every kernel of the suite's recordings reads 16 or more.
MIN_REGISTERS_PER_THREAD = 16


@dataclass(frozen=True)
class FunctionAttributes:
    """What the driver tells of a kernel: its registers per thread and its static shared memory."""

    registers: int
    static_shared: int

    @classmethod
    def of_driver(cls, registers: int, static_shared: int) -> FunctionAttributes:
        """As the driver's NUM_REGS and SHARED_SIZE_BYTES give them: its registers as allocated (no
        fewer than MIN_REGISTERS_PER_THREAD; a kernel of none keeps none)."""
        return cls(max(registers, MIN_REGISTERS_PER_THREAD) if registers else 0, static_shared)


@dataclass(frozen=True)
class Occupancy:
    """A launch's theoretical occupancy: the blocks per SM that each resource allows, and the blocks
    that all of them allow together (at the full shared memory carveout)."""

    registers: int
    warps: int
    blocks: int
    shared_mem: int

    @property
    def active_blocks(self) -> int:
        return min(self.registers, self.warps, self.blocks, self.shared_mem)


def shared_allocation_unit(major: int) -> int:
    """The granularity of a block's shared memory: 128 bytes from Ampere (sm_80) on, 256 before."""
    return 128 if major >= 8 else 256


def round_up(value: int, unit: int) -> int:
    return -(-value // unit) * unit


def allocated_shared(device: Mapping[str, int], function: FunctionAttributes, dynamic: int) -> int:
    """A block's shared memory as allocated: static, dynamic and the driver's reserve, rounded up."""
    used = function.static_shared + dynamic + device["reserved_shared_memory_per_block"]
    return round_up(used, shared_allocation_unit(device["compute_capability_major"]))


def occupancy(
    device: Mapping[str, int], function: FunctionAttributes, block_threads: int, dynamic: int
) -> Occupancy:
    """The blocks per SM each resource allows, by the CUDA occupancy calculator: registers are
    allocated per warp in units of 256 and bound the warps of each sub-partition; warps count whole
    (a block of 33 threads takes two); shared memory is allocated per block with the driver's reserve,
    against the SM's whole shared memory."""
    warp_size = device["warp_size"]
    warps_per_block = -(-block_threads // warp_size)
    max_warps = device["max_threads_per_multiprocessor"] // warp_size
    max_blocks = device["max_blocks_per_multiprocessor"]
    return Occupancy(
        registers=_register_limit(device, function.registers, warps_per_block, max_blocks),
        warps=max_warps // warps_per_block,
        blocks=max_blocks,
        shared_mem=_shared_limit(device, allocated_shared(device, function, dynamic), max_blocks),
    )


def _register_limit(device: Mapping[str, int], registers: int, warps_per_block: int, max_blocks: int) -> int:
    if registers == 0:  # a kernel of no registers is bound by the other limits alone
        return max_blocks
    per_warp = _registers_per_warp(device, registers)
    if per_warp * warps_per_block > device["max_registers_per_block"]:
        return 0
    per_sub_partition = device["max_registers_per_multiprocessor"] // SUB_PARTITIONS
    warps = (per_sub_partition // per_warp) * SUB_PARTITIONS
    return warps // warps_per_block


def _registers_per_warp(device: Mapping[str, int], registers: int) -> int:
    return round_up(registers * device["warp_size"], REGISTER_ALLOCATION_UNIT)


def _shared_limit(device: Mapping[str, int], allocated: int, max_blocks: int) -> int:
    if allocated == 0:
        return max_blocks
    return device["max_shared_memory_per_multiprocessor"] // allocated


def launch_facts(
    device: Mapping[str, int],
    function: FunctionAttributes,
    grid: tuple[int, int, int],
    block: tuple[int, int, int],
    dynamic: int,
) -> dict[str, float]:
    """Every metric of FACT_UNITS of a launch, as ncu reports it (before its CSV rounds it).
    device: the driver's attributes by their names in DRIVER_DEVICE_ATTRIBUTES."""
    block_threads = math.prod(block)
    grid_blocks = math.prod(grid)
    limits = occupancy(device, function, block_threads, dynamic)
    warps_per_block = -(-block_threads // device["warp_size"])
    max_warps = device["max_threads_per_multiprocessor"] // device["warp_size"]
    active_warps = limits.active_blocks * warps_per_block
    sms = device["multiprocessor_count"]
    used_shared = function.static_shared + dynamic + device["reserved_shared_memory_per_block"]
    per_wave = limits.active_blocks * sms
    return {
        "launch__grid_size": grid_blocks,
        "launch__block_size": block_threads,
        "launch__thread_count": grid_blocks * block_threads,
        "launch__sm_count": sms,
        "launch__registers_per_thread": function.registers,
        # a block's registers as allocated (whole warps of them), per thread it runs
        "launch__registers_per_thread_allocated": _registers_per_warp(device, function.registers)
        * warps_per_block
        / block_threads,
        "launch__shared_mem_per_block_static": function.static_shared,
        "launch__shared_mem_per_block_dynamic": dynamic,
        "launch__shared_mem_per_block_driver": device["reserved_shared_memory_per_block"],
        "launch__shared_mem_per_block": used_shared,
        "launch__shared_mem_per_block_allocated": allocated_shared(device, function, dynamic),
        "launch__occupancy_limit_registers": limits.registers,
        "launch__occupancy_limit_warps": limits.warps,
        "launch__occupancy_limit_blocks": limits.blocks,
        "launch__waves_per_multiprocessor": grid_blocks / per_wave if per_wave else math.nan,
        "sm__maximum_warps_avg_per_active_cycle": active_warps,
        "sm__maximum_warps_per_active_cycle_pct": 100 * active_warps / max_warps,
    }


def device_facts(device: Mapping[str, int]) -> dict[str, float]:
    """The device__attribute_* metrics of the driver's attributes, as ncu reports them."""
    facts: dict[str, float] = {DEVICE_PREFIX + name: device[name] for name in DRIVER_DEVICE_ATTRIBUTES}
    facts[DEVICE_PREFIX + MAX_WARPS_ATTRIBUTE] = (
        device["max_threads_per_multiprocessor"] // device["warp_size"]
    )
    return facts


def ncu_text(value: float) -> str:
    """A value as ncu's CSV prints it: a whole number without decimals, any other with two."""
    if math.isnan(value):
        return "n/a"
    if value == int(value):
        return str(int(value))
    return f"{value:.2f}"
