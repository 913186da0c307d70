"""What the compiler and the CUDA binary utilities print about a cubin, read: ptxas's resource report
(from the compile log), cuobjdump's resource table and nvdisasm's SASS."""

from __future__ import annotations

import re
from dataclasses import dataclass


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
