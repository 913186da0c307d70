"""How many replay passes ncu takes for a launch, from the metrics it is asked for: the pass model.

Measured on an H200 with ncu 2025.3.1 (`profiler__replayer_passes` of 17 metric lists,
tests/data/passes-h200.tsv):
- hardware counters alone, which perfworks schedules in k passes: 1 pass if k is 1, else k + 1 (ncu
  adds a pass of its own where the counters take several);
- a SASS-patched metric (`smsp__sass_*`, `sass__*`) beside hardware counters: k + 2 (an instrumented
  pass, and ncu's SASS pre-pass); SASS-patched metrics alone: 1;
- the launch's configuration (`launch__*`), the device's attributes (`device__*`) and ncu's own counts
  add none; the launch's time (`gpu__time_duration`) and the theoretical occupancy
  (`sm__maximum_warps_*`) ride along in any hardware pass, but beside SASS-patched metrics alone they
  are a hardware pass of their own: 1 + 2 passes (measured on the H200, 2026-12-03: the time with four
  SASS-patched shared-memory counts took 3 passes, as did the occupancy with SASS counts).

k comes from perfworks (ncuverify.profile.perfworks) where its library is installed, else from a table
of the counters that can share a pass (PASS_GROUPS below). What ncu reported in an earlier run
(schedule.PassCounts) comes before either.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass, field

from ncuverify.names import DEVICE_PREFIX, LAUNCH_PREFIX, PROFILER_PREFIX, TIME_PREFIX, is_patched
from ncuverify.ncu.metrics import CHIPS
from ncuverify.profile.perfworks import Perfworks, PerfworksError, find_library

# Metrics ncu reads without a replay pass of their own.
FREE_PREFIXES = (LAUNCH_PREFIX, DEVICE_PREFIX, PROFILER_PREFIX)
# Hardware counters that share any other hardware counter's pass, and take one where there is none.
RIDER_PREFIXES = (TIME_PREFIX, "sm__maximum_warps_")

_BANK = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_"
_WAVEFRONTS = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_"
_HIT_RATE = "l1tex__t_sector_hit_rate.pct"
_SECTORS = "l1tex__t_sectors_pipe_lsu_mem_"

# The L1TEX counters that fit one hardware pass together, on GH100 (the largest such sets). Derived
# from perfworks' scheduler, asked for every pair of the L1TEX counters that the suite and the measured
# lists use: two counters take one pass where a group holds both, else two; every pair of counters of
# other units (dram, lts, sm, smsp), or of one of those and one of these, took one. A set of counters
# takes as many passes as the fewest groups that hold them all; an L1TEX counter in no group takes a
# pass of its own. This gives perfworks' count for each of the 17 measured lists and for each list the
# recordings asked for; it does not know that some sets of many SM counters beside L1TEX ones take a
# pass more (perfworks does).
PASS_GROUPS: tuple[frozenset[str], ...] = (
    frozenset(f"{prefix}{op}.sum" for prefix in (_BANK, _WAVEFRONTS) for op in ("ld", "st")),
    frozenset((f"{_WAVEFRONTS}ld.sum", f"{_WAVEFRONTS}st.sum", _HIT_RATE)),
    frozenset((f"{_SECTORS}global_op_ld.sum", f"{_SECTORS}global_op_st.sum", _HIT_RATE)),
    frozenset((f"{_SECTORS}local_op_ld.sum", f"{_SECTORS}local_op_st.sum", _HIT_RATE)),
    # one L1 request counter per pass: the requests beside anything else of L1TEX take two
    frozenset(("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",)),
    frozenset(("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",)),
)
_GROUPED_UNIT = "l1tex__"


def counters(metrics: Iterable[str]) -> frozenset[str]:
    """The metrics that decide the replay passes: all but those ncu reads without replaying the launch,
    and but the riders where another hardware counter takes the pass they share."""
    measured = frozenset(metric for metric in metrics if not metric.startswith(FREE_PREFIXES))
    others = frozenset(metric for metric in measured if not metric.startswith(RIDER_PREFIXES))
    return others if any(not is_patched(metric) for metric in others) else measured


def ncu_passes(hardware: int, patched: bool) -> int:
    """ncu's passes for a launch, from perfworks' passes of its hardware counters and whether any
    metric is SASS-patched (the rule measured on the H200)."""
    if hardware == 0:
        return 1
    if patched:
        return hardware + 2
    return 1 if hardware == 1 else hardware + 1


def table_passes(hardware: Iterable[str]) -> int:
    """The hardware passes of these counters by PASS_GROUPS: the fewest groups that hold every L1TEX
    counter, one pass for each counter in none; 1 for counters of other units alone, 0 for none."""
    hardware = frozenset(hardware)
    grouped = frozenset().union(*PASS_GROUPS)
    l1tex = {metric for metric in hardware if metric.startswith(_GROUPED_UNIT)}
    alone = len(l1tex - grouped)
    needed = l1tex & grouped
    candidates = [group for group in PASS_GROUPS if group & needed]
    for count in range(len(candidates) + 1):
        if any(needed <= frozenset().union(*chosen) for chosen in itertools.combinations(candidates, count)):
            return max(1, count + alone) if hardware else 0
    raise AssertionError("every grouped counter is in a group")  # the whole list covers them


@dataclass
class PassModel:
    """ncu's passes for a set of metrics on one chip (perfworks' name, `GH100`; None: unknown, the table
    alone), each set worked out once (perfworks takes about 2 ms a set). Perfworks is loaded on the
    first question; where it cannot be, the table answers."""

    chip: str | None = None
    ncu: str | None = None  # the ncu in use: its installation may hold perfworks
    _perfworks: Perfworks | None = field(default=None, init=False, repr=False)
    _tried: bool = field(default=False, init=False, repr=False)
    _known: dict[frozenset[str], int] = field(default_factory=dict, init=False, repr=False)

    def passes(self, metrics: Iterable[str]) -> int:
        """The passes ncu takes for a launch asked for these metrics, by perfworks where it is here."""
        hardware, patched = _split(metrics)
        if hardware not in self._known:
            self._known[hardware] = self._hardware_passes(hardware)
        return ncu_passes(self._known[hardware], patched)

    def _hardware_passes(self, hardware: frozenset[str]) -> int:
        """perfworks' passes for these hardware counters, else the table's."""
        perfworks = self._loaded() if hardware else None
        if perfworks is not None:
            try:
                return perfworks.passes(hardware)
            except PerfworksError:
                pass  # a counter perfworks does not know on this chip: the table's count
            except Exception:  # a library that answers otherwise than this module expects: not again
                self._perfworks = None
        return table_passes(hardware)

    def _loaded(self) -> Perfworks | None:
        if not self._tried and self.chip is not None:
            self._tried = True
            try:
                library = find_library(self.ncu)
                self._perfworks = Perfworks(library, self.chip) if library is not None else None
            except Exception:  # any failure to load it leaves the table: the run goes on
                self._perfworks = None
        return self._perfworks

    @property
    def source(self) -> str:
        """Where the hardware passes come from, for messages: perfworks or the table."""
        return "perfworks" if self._perfworks is not None else "the table of counter groups"


def _split(metrics: Iterable[str]) -> tuple[frozenset[str], bool]:
    """The hardware counters that decide the passes (counters), and whether any metric is SASS-patched."""
    measured = counters(metrics)
    hardware = frozenset(metric for metric in measured if not is_patched(metric))
    return hardware, len(hardware) < len(measured)


def model_for(arch: str | None, ncu: str | None = None) -> PassModel:
    """The pass model of the chip an architecture (`sm_90`) builds for; the table alone for one that
    ncuverify does not know."""
    chip = CHIPS.get(arch) if arch is not None else None
    return PassModel(chip.upper() if chip is not None else None, ncu)
