"""Static facts of a build, which need no GPU: ptxas's resource report, the cubin's own resource table
(cuobjdump) and its SASS (nvdisasm). Claims read them through `static__*` metric names and `sass(...)`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

import pandas as pd

from ncuverify.build.reports import (
    Instruction,
    ResourceUsage,
    parse_disassembly,
    parse_ptxas_report,
    parse_resource_usage,
)
from ncuverify.expression import SASS_PREFIX, MetricRef, sass_regex

STATIC_PREFIX = "static__"

# name -> (unit, where it comes from); the README lists the same table.
STATIC_METRICS: dict[str, tuple[str, str]] = {
    "static__registers_per_thread": ("register/thread", "ptxas: Used N registers"),
    "static__spill_store_bytes": ("byte", "ptxas: N bytes spill stores"),
    "static__spill_load_bytes": ("byte", "ptxas: N bytes spill loads"),
    "static__stack_frame_bytes": ("byte", "ptxas: N bytes stack frame (local arrays and spills)"),
    "static__shared_static_bytes": ("byte", "ptxas: N bytes smem (static __shared__ only)"),
    "static__barriers": ("", "ptxas: used N barriers"),
    "static__local_bytes": ("byte", "cuobjdump --dump-resource-usage: LOCAL"),
    "static__sass_instructions": (
        "instruction",
        "nvdisasm: instructions of the kernel, less the end's NOP padding",
    ),
}


@dataclass(frozen=True)
class StaticFacts:
    """Everything known about one kernel without running it."""

    ptxas: ResourceUsage
    cubin_resources: dict[str, int]  # cuobjdump's REG, STACK, SHARED, LOCAL, ...; empty without cuobjdump
    sass: tuple[Instruction, ...] | None  # None without nvdisasm

    def metrics(self) -> dict[str, float]:
        values: dict[str, float] = {
            "static__registers_per_thread": self.ptxas.registers,
            "static__spill_store_bytes": self.ptxas.spill_store_bytes,
            "static__spill_load_bytes": self.ptxas.spill_load_bytes,
            "static__stack_frame_bytes": self.ptxas.stack_frame_bytes,
            "static__shared_static_bytes": self.ptxas.shared_bytes,
            "static__barriers": self.ptxas.barriers,
        }
        if "LOCAL" in self.cubin_resources:
            values["static__local_bytes"] = self.cubin_resources["LOCAL"]
        if self.sass is not None:
            values["static__sass_instructions"] = len(self.sass)
        return values

    def count(self, pattern: str) -> int | None:
        """How many instructions match the SASS pattern; None without a disassembly."""
        if self.sass is None:
            return None
        return sum(1 for instruction in self.sass if sass_matches(pattern, instruction.mnemonic))

    def discrepancies(self) -> list[str]:
        """Where ptxas's report and the cubin's resource table disagree (they should not)."""
        found = []
        for key, ptxas_value in (("REG", self.ptxas.registers), ("STACK", self.ptxas.stack_frame_bytes)):
            cubin_value = self.cubin_resources.get(key)
            if cubin_value is not None and cubin_value != ptxas_value:
                found.append(f"ptxas says {ptxas_value} for {key}, the cubin says {cubin_value}")
        return found

    def mix(self) -> Counter[str]:
        """SASS opcodes (without modifiers) by count."""
        return Counter(i.mnemonic.split(".", 1)[0] for i in self.sass or ())


def is_static(ref: MetricRef) -> bool:
    return ref.name.startswith(STATIC_PREFIX) or ref.sass_pattern is not None


def sass_matches(pattern: str, mnemonic: str) -> bool:
    """The pattern matches from the mnemonic's start up to a modifier boundary: LDG matches LDG.E, not LDGSTS.

    RE2 matches in linear time. The pattern is compiled as written, never spliced into a larger one, and
    tried up to each boundary in turn: `$` and `\\b` still see the whole mnemonic.
    """
    regex = sass_regex(pattern)
    boundaries = [index for index, character in enumerate(mnemonic) if character == "."]
    return any(regex.fullmatch(mnemonic, 0, end) is not None for end in (*boundaries, len(mnemonic)))


def static_facts(
    log: str, resource_usage: str, disassembly: str | None, symbols: Iterable[str]
) -> dict[str, StaticFacts]:
    """The facts of each named function of one program, from the compile log and the tools' outputs."""
    ptxas = parse_ptxas_report(log)
    resources = parse_resource_usage(resource_usage)
    sass = parse_disassembly(disassembly) if disassembly is not None else None
    return {
        symbol: StaticFacts(
            ptxas=ptxas[symbol],
            cubin_resources=resources.get(symbol, {}),
            sass=tuple(sass.get(symbol, ())) if sass is not None else None,
        )
        for symbol in symbols
    }


# --- as measurements -------------------------------------------------------------------------------------------


def measurement_rows(
    cases: dict[str, str], facts: dict[str, StaticFacts], patterns: Iterable[str]
) -> pd.DataFrame:
    """Rows like the profiler's (case, kernel, metric, value, unit) for every case's kernel.

    cases maps case -> kernel name; facts maps kernel name -> its static facts.
    """
    rows = []
    patterns = sorted(set(patterns))
    for case, kernel in cases.items():
        kernel_facts = facts[kernel]
        for name, value in kernel_facts.metrics().items():
            rows.append((case, kernel, name, float(value), STATIC_METRICS[name][0]))
        for pattern in patterns:
            count = kernel_facts.count(pattern)
            if count is not None:
                rows.append((case, kernel, SASS_PREFIX + pattern, float(count), "instruction"))
    return pd.DataFrame(rows, columns=["case", "kernel", "metric", "value", "unit"])
