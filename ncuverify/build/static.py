"""Static facts of a build, which need no GPU: ptxas's resource report, the cubin's own resource table
(cuobjdump) and its SASS (nvdisasm). Claims read them through `static__*` metric names and `sass(...)`.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ncuverify.expression import SASS_PREFIX, MetricRef, sass_regex
from ncuverify.processes import run_bounded

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
class ResourceUsage:
    """What ptxas reported for one entry function."""

    registers: int
    stack_frame_bytes: int
    spill_store_bytes: int
    spill_load_bytes: int
    shared_bytes: int
    barriers: int


@dataclass(frozen=True)
class Instruction:
    offset: int
    mnemonic: str  # opcode and modifiers: LDG.E.128.CONSTANT
    text: str  # the whole line as nvdisasm prints it, predicate and operands included


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


# --- ptxas ---------------------------------------------------------------------------------------------------

_ENTRY = re.compile(r"Compiling entry function '([^']+)' for '([^']+)'")
_PROPERTIES = re.compile(r"Function properties for (\S+)")
_STACK = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers")
_BARRIERS = re.compile(r"used (\d+) barriers")
_SMEM = re.compile(r"(\d+) bytes smem")


def entry_functions(log: str) -> set[str]:
    """The mangled names of the kernels ptxas compiled."""
    return {match.group(1) for match in _ENTRY.finditer(log)}


def parse_ptxas_report(log: str) -> dict[str, ResourceUsage]:
    """ptxas -v lines, per mangled entry function."""
    found: dict[str, dict[str, int]] = {}
    current: str | None = None
    for line in log.splitlines():
        if match := _ENTRY.search(line) or _PROPERTIES.search(line):
            current = match.group(1)
            found.setdefault(current, {})
            continue
        if current is None:
            continue
        facts = found[current]
        if match := _STACK.search(line):
            facts["stack"], facts["spill_st"], facts["spill_ld"] = (int(g) for g in match.groups())
        if match := _USED.search(line):
            facts["registers"] = int(match.group(1))
            facts["barriers"] = int(b.group(1)) if (b := _BARRIERS.search(line)) else 0
            facts["smem"] = int(s.group(1)) if (s := _SMEM.search(line)) else 0
    return {
        name: ResourceUsage(
            registers=facts["registers"],
            stack_frame_bytes=facts.get("stack", 0),
            spill_store_bytes=facts.get("spill_st", 0),
            spill_load_bytes=facts.get("spill_ld", 0),
            shared_bytes=facts.get("smem", 0),
            barriers=facts.get("barriers", 0),
        )
        for name, facts in found.items()
        if "registers" in facts
    }


# --- the CUDA binary utilities ---------------------------------------------------------------------------------


def find_tool(name: str) -> str | None:
    """nvdisasm or cuobjdump: from the CUDA wheels or a toolkit, else the PATH."""
    try:
        from cuda import pathfinder

        found = pathfinder.find_nvidia_binary_utility(name)
    except Exception:  # an older cuda-pathfinder, or none: fall back to the PATH
        found = None
    return found or shutil.which(name)


# How long cuobjdump or nvdisasm may take on one cubin (they take well under a second).
TOOL_TIMEOUT_S = 120.0


def _run_on_cubin(tool: str, arguments: list[str], cubin: bytes, timeout_s: float = TOOL_TIMEOUT_S) -> str:
    """The tool's output on the cubin; RuntimeError where it fails, TimedOut past the limit (its
    process group is killed, and the cubin's temporary folder removed either way)."""
    with tempfile.TemporaryDirectory(prefix="ncuverify-") as scratch:
        path = Path(scratch) / "kernel.cubin"
        path.write_bytes(cubin)
        finished = run_bounded([tool, *arguments, str(path)], timeout_s, cwd=Path(scratch))
    if finished.returncode != 0:
        raise RuntimeError(f"{Path(tool).name} failed: {finished.stderr.strip() or finished.stdout.strip()}")
    return finished.stdout


_FUNCTION = re.compile(r"^\s*Function (\S+):\s*$")
_RESOURCE = re.compile(r"([A-Z]+(?:\[\d+\])?):(\d+)")


def parse_resource_usage(text: str) -> dict[str, dict[str, int]]:
    """`cuobjdump --dump-resource-usage` -> {function: {REG: 10, STACK: 0, ...}}."""
    usage: dict[str, dict[str, int]] = {}
    current: str | None = None
    for line in text.splitlines():
        if match := _FUNCTION.match(line):
            current = match.group(1)
        elif current is not None and (pairs := _RESOURCE.findall(line)):
            usage[current] = {key: int(value) for key, value in pairs}
            current = None
    return usage


_SECTION = re.compile(r"^\s*\.section\s+\.text\.(\S+?),")
_INSTRUCTION = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_]*(?:\.[A-Z0-9_]+)*)")


def parse_disassembly(text: str) -> dict[str, list[Instruction]]:
    """nvdisasm's text -> {function: instructions}."""
    functions: dict[str, list[Instruction]] = {}
    current: list[Instruction] | None = None
    for line in text.splitlines():
        if match := _SECTION.match(line):
            current = functions.setdefault(match.group(1), [])
        elif current is not None and (match := _INSTRUCTION.search(line)):
            current.append(Instruction(int(match.group(1), 16), match.group(2), line.strip()))
    return {name: _without_padding(instructions) for name, instructions in functions.items()}


def _without_padding(instructions: list[Instruction]) -> list[Instruction]:
    """Drop the NOPs that align a function's end: they are not code the kernel runs."""
    end = len(instructions)
    while end > 0 and instructions[end - 1].mnemonic == "NOP":
        end -= 1
    return instructions[:end]


def tool_outputs(cubin: bytes, timeout_s: float = TOOL_TIMEOUT_S) -> tuple[str, str | None]:
    """cuobjdump's resource usage ("" without cuobjdump) and nvdisasm's text (None without nvdisasm),
    each run within timeout_s."""
    cuobjdump, nvdisasm = find_tool("cuobjdump"), find_tool("nvdisasm")
    resources = _run_on_cubin(cuobjdump, ["--dump-resource-usage"], cubin, timeout_s) if cuobjdump else ""
    disassembly = _run_on_cubin(nvdisasm, ["-c"], cubin, timeout_s) if nvdisasm else None
    return resources, disassembly


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
