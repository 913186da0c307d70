"""Static facts of a build, which need no GPU: ptxas's resource report, the cubin's own resource table
(cuobjdump) and its SASS (nvdisasm). Claims read them through `static__*` metric names and `sass(...)`.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ncuverify import names
from ncuverify.build.reports import (
    Instruction,
    ResourceUsage,
    parse_disassembly,
    parse_ptxas_report,
    parse_resource_usage,
)
from ncuverify.expression import sass_regex
from ncuverify.names import SASS_PREFIX

# The special registers a kernel reads time from: CS2R R2, SR_CLOCKLO; S2UR UR4, SR_GLOBALTIMERLO.
_CLOCK_REGISTER = re.compile(r"\bSR_(?:CLOCK|GLOBALTIMER)(?:LO|HI)?\b")


@dataclass(frozen=True)
class StaticFacts:
    """Everything known about one kernel without running it."""

    ptxas: ResourceUsage | None  # None for a kernel read from a built artifact: no compile log
    cubin_resources: dict[str, int]  # cuobjdump's REG, STACK, SHARED, LOCAL, ...; empty without cuobjdump
    sass: tuple[Instruction, ...] | None  # None without nvdisasm

    def metrics(self) -> dict[str, float]:
        """Each static fact this kernel's build reports, by metric name."""
        values = {name: metric.read(self) for name, metric in STATIC_METRICS.items()}
        return {name: value for name, value in values.items() if value is not None}

    def count(self, pattern: str) -> int | None:
        """How many instructions match the SASS pattern; None without a disassembly."""
        if self.sass is None:
            return None
        return sum(n for mnemonic, n in self._mnemonics.items() if sass_matches(pattern, mnemonic))

    @functools.cached_property
    def _mnemonics(self) -> Counter[str]:
        """Each mnemonic with its instructions' count: a pattern is matched once per mnemonic."""
        return Counter(instruction.mnemonic for instruction in self.sass or ())

    def discrepancies(self) -> list[str]:
        """Where ptxas's report and the cubin's resource table disagree (they should not)."""
        found: list[str] = []
        if self.ptxas is None:
            return found
        for key, ptxas_value in (("REG", self.ptxas.registers), ("STACK", self.ptxas.stack_frame_bytes)):
            cubin_value = self.cubin_resources.get(key)
            if cubin_value is not None and cubin_value != ptxas_value:
                found.append(f"ptxas says {ptxas_value} for {key}, the cubin says {cubin_value}")
        return found

    @functools.cached_property
    def reads_clock(self) -> bool | None:
        """Whether the kernel reads an SM clock or the global timer (clock(), clock64(), %globaltimer):
        what it writes may then depend on how it was timed. None without a disassembly."""
        if self.sass is None:
            return None
        return any(_CLOCK_REGISTER.search(instruction.text) for instruction in self.sass)

    def mix(self) -> Counter[str]:
        """SASS opcodes (without modifiers) by count."""
        return Counter(i.mnemonic.split(".", 1)[0] for i in self.sass or ())


@dataclass(frozen=True)
class StaticMetric:
    """A static fact as claims, baselines and `ncuverify build` know it."""

    name: str
    unit: str
    source: str  # where it comes from; docs/expectation-files.md lists the same table
    read: Callable[[StaticFacts], float | None]  # its value for a kernel; None where the build lacks it
    label: str  # its column's heading in `ncuverify build`
    column: int  # its column's place there, among the facts
    exact: bool = False  # a compiler's decision that a baseline holds to an exact match unless told otherwise


def _ptxas_or_cubin(field: str, cubin_key: str | None) -> Callable[[StaticFacts], float | None]:
    """A fact from ptxas's report; for an artifact's kernel, which has none, from the cubin's resource
    table where it holds the fact (cubin_key), else absent."""

    def read(facts: StaticFacts) -> float | None:
        if facts.ptxas is not None:
            value: int = getattr(facts.ptxas, field)
            return value
        return facts.cubin_resources.get(cubin_key) if cubin_key is not None else None

    return read


# In the order of names.STATIC_FACTS: docs/expectation-files.md's, and the order a baseline compares them in.
STATIC_METRICS: dict[str, StaticMetric] = {
    metric.name: metric
    for metric in (
        StaticMetric(
            names.REGISTERS,
            "register/thread",
            "ptxas: Used N registers",
            _ptxas_or_cubin("registers", "REG"),
            "regs",
            0,
            exact=True,
        ),
        StaticMetric(
            names.SPILL_STORE_BYTES,
            "byte",
            "ptxas: N bytes spill stores",
            _ptxas_or_cubin("spill_store_bytes", None),
            "spill st",
            2,
            exact=True,
        ),
        StaticMetric(
            names.SPILL_LOAD_BYTES,
            "byte",
            "ptxas: N bytes spill loads",
            _ptxas_or_cubin("spill_load_bytes", None),
            "spill ld",
            3,
            exact=True,
        ),
        StaticMetric(
            names.STACK_FRAME_BYTES,
            "byte",
            "ptxas: N bytes stack frame (local arrays and spills)",
            _ptxas_or_cubin("stack_frame_bytes", "STACK"),
            "stack",
            1,
            exact=True,
        ),
        StaticMetric(
            names.SHARED_STATIC_BYTES,
            "byte",
            "ptxas: N bytes smem (static __shared__ only)",
            _ptxas_or_cubin("shared_bytes", "SHARED"),
            "smem",
            4,
        ),
        StaticMetric(
            names.BARRIERS, "", "ptxas: used N barriers", _ptxas_or_cubin("barriers", None), "bar", 5
        ),
        StaticMetric(
            names.LOCAL_BYTES,
            "byte",
            "cuobjdump --dump-resource-usage: LOCAL",
            lambda facts: facts.cubin_resources.get("LOCAL"),
            "local",
            6,
        ),
        StaticMetric(
            names.SASS_INSTRUCTIONS,
            "instruction",
            "nvdisasm: instructions of the kernel, less the end's NOP padding",
            lambda facts: len(facts.sass) if facts.sass is not None else None,
            "sass",
            7,
        ),
    )
}
# The facts in the order of `ncuverify build`'s columns.
BUILD_COLUMNS: tuple[StaticMetric, ...] = tuple(sorted(STATIC_METRICS.values(), key=lambda m: m.column))


def reads_sass(metric: str) -> bool:
    """Whether the metric (of a claim, a tolerance) is read from the SASS: a build must disassemble."""
    return metric == names.SASS_INSTRUCTIONS or metric.startswith(SASS_PREFIX)


def sass_matches(pattern: str, mnemonic: str) -> bool:
    """The pattern matches from the mnemonic's start up to a modifier boundary: LDG matches LDG.E, not LDGSTS.

    RE2 matches in linear time. The pattern is compiled as written, never spliced into a larger one, and
    tried up to each boundary in turn: `$` and `\\b` still see the whole mnemonic.
    """
    regex = sass_regex(pattern)
    boundaries = [index for index, character in enumerate(mnemonic) if character == "."]
    return any(regex.fullmatch(mnemonic, 0, end) is not None for end in (*boundaries, len(mnemonic)))


def static_facts(
    log: str | None, resource_usage: str, disassembly: str | None, symbols: Iterable[str]
) -> dict[str, StaticFacts]:
    """The facts of each named function of one program, from the compile log and the tools' outputs.
    Without a log (a cubin that ncuverify did not compile) there is no ptxas report."""
    ptxas = parse_ptxas_report(log) if log is not None else None
    resources = parse_resource_usage(resource_usage)
    sass = parse_disassembly(disassembly) if disassembly is not None else None
    return {
        symbol: StaticFacts(
            ptxas=ptxas[symbol] if ptxas is not None else None,
            cubin_resources=resources.get(symbol, {}),
            sass=tuple(sass.get(symbol, ())) if sass is not None else None,
        )
        for symbol in symbols
    }


# --- as measurements -------------------------------------------------------------------------------------------


def measurement_rows(
    cases: dict[str, str], facts: dict[str, StaticFacts], patterns: Iterable[str]
) -> list[tuple[str, str, str, float, str]]:
    """Rows like the profiler's (case, kernel, metric, value, unit) for every case's kernel.

    cases maps case -> kernel name; facts maps kernel name -> its static facts.
    """
    patterns = sorted(set(patterns))
    per_kernel: dict[str, list[tuple[str, float, str]]] = {}  # many cases launch one kernel: read once
    rows = []
    for case, kernel in cases.items():
        if kernel not in per_kernel:
            per_kernel[kernel] = _kernel_rows(facts[kernel], patterns)
        rows += [(case, kernel, metric, value, unit) for metric, value, unit in per_kernel[kernel]]
    return rows


def _kernel_rows(kernel_facts: StaticFacts, patterns: list[str]) -> list[tuple[str, float, str]]:
    rows = [(name, float(value), STATIC_METRICS[name].unit) for name, value in kernel_facts.metrics().items()]
    for pattern in patterns:
        count = kernel_facts.count(pattern)
        if count is not None:
            rows.append((SASS_PREFIX + pattern, float(count), "instruction"))
    return rows
