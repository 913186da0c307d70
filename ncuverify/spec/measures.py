"""Named measures: the right recipe for a quantity, by name, where the raw counter misleads.

A measure is an expression over raw metrics. In a claim it is used like a metric name (also with
`@case`); before profiling it is expanded into its raw counters, so ncu is asked only for those.
"""

from __future__ import annotations

from dataclasses import dataclass

from ncuverify import expression
from ncuverify.expression import Expr, MetricRef, map_refs
from ncuverify.names import TIME_METRIC


@dataclass(frozen=True)
class Measure:
    name: str
    formula: str
    unit: str
    description: str  # which counters, and why those


_LD_SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
_ST_SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"

MEASURES: dict[str, Measure] = {
    m.name: m
    for m in [
        Measure(
            "global_ld_sectors_per_request",
            f"{_LD_SECTORS} / l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
            "sector",
            "32 B sectors a warp's global load touches (4 for contiguous floats, 32 when every lane is in its "
            "own sector). L1 tag lookups, counted whether they hit or miss, so caching cannot change them.",
        ),
        Measure(
            "global_st_sectors_per_request",
            f"{_ST_SECTORS} / l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
            "sector",
            "The same for global stores.",
        ),
        Measure(
            "global_ld_bytes_per_sector",
            "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio",
            "byte",
            "Useful bytes per fetched 32 B sector of global loads (32 = every byte used).",
        ),
        Measure(
            "global_ld_instructions",
            "smsp__sass_inst_executed_op_global_ld.sum",
            "instruction",
            "Global load instructions executed (warp level).",
        ),
        Measure(
            "global_ld_requests",
            "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
            "request",
            "Global load requests: one per warp instruction on Volta and later.",
        ),
        Measure(
            "shared_ld_wavefronts_per_instruction",
            "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ld.sum / smsp__sass_inst_executed_op_shared_ld.sum",
            "wavefront",
            "Shared-memory wavefronts per shared load instruction: 1 when a 32-bit load is conflict-free, "
            "n for an n-way conflict. Taken at the SASS level: l1tex__data_bank_conflicts_* also counts "
            "arbitration with other L1 traffic on Ampere and Hopper, so it is not 0 for conflict-free code.",
        ),
        Measure(
            "shared_st_wavefronts_per_instruction",
            "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_st.sum / smsp__sass_inst_executed_op_shared_st.sum",
            "wavefront",
            "The same for shared stores.",
        ),
        Measure(
            "shared_ld_instructions",
            "smsp__sass_inst_executed_op_shared_ld.sum",
            "instruction",
            "Shared load instructions executed (warp level).",
        ),
        Measure(
            "shared_st_instructions",
            "smsp__sass_inst_executed_op_shared_st.sum",
            "instruction",
            "Shared store instructions executed (warp level).",
        ),
        Measure(
            "shared_ld_bank_conflicts_raw",
            "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
            "",
            "The hardware's bank-conflict counter for shared loads, as the documents name it. On Ampere and "
            "Hopper it also counts lost arbitration with global traffic: informative, not a conflict count.",
        ),
        Measure(
            "shared_st_bank_conflicts_raw",
            "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
            "",
            "The same counter for shared stores.",
        ),
        Measure(
            "local_sectors",
            "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum + l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum",
            "sector",
            "Local-memory traffic (spills and stack arrays), loads and stores, in 32 B sectors.",
        ),
        Measure(
            "theoretical_occupancy_pct",
            "sm__maximum_warps_per_active_cycle_pct",
            "%",
            "Warps an SM can hold for this launch, as a share of its maximum (registers, shared memory, "
            "block size). ncu accepts the name though --query-metrics does not list it.",
        ),
        Measure(
            "achieved_occupancy_pct",
            "sm__warps_active.avg.pct_of_peak_sustained_active",
            "%",
            "Warps actually resident while the SM was active, as a share of its maximum.",
        ),
        Measure(
            "dram_bytes_read",
            "dram__bytes_read.sum",
            "byte",
            "Bytes read from DRAM (64 B per L2 miss on H100/H200).",
        ),
        Measure(
            "dram_bytes_written",
            "dram__bytes_write.sum",
            "byte",
            "Bytes written to DRAM. Under-counts short kernels: dirty lines still in L2 at the end are not counted.",
        ),
        Measure("kernel_time", TIME_METRIC, "ns", "The kernel's duration. Compare cases in one run."),
        Measure(
            "threads_per_instruction",
            "smsp__thread_inst_executed_per_inst_executed.ratio",
            "thread",
            "Active threads per executed warp instruction: 32 without divergence, 16 for an odd/even split.",
        ),
        Measure(
            "warp_instructions",
            "smsp__inst_executed.sum",
            "instruction",
            "Warp instructions executed.",
        ),
    ]
}


def expand(expr: Expr) -> Expr:
    """Replace every measure by its formula, reading the formula's metrics from the measure's case."""

    def formula(ref: MetricRef) -> Expr:
        measure = MEASURES.get(ref.name)
        if measure is None:
            return ref
        return map_refs(expression.parse(measure.formula), lambda inner: MetricRef(inner.name, ref.case))

    return map_refs(expr, formula)
