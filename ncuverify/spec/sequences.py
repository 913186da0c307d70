"""Launch sequences: a case written with `steps:` launches several kernels in order, on buffers that
its steps share (`{use: NAME}` passes a buffer an earlier step made). Each step becomes a plain case,
`CASE#1`, `CASE#2`, ..., on the file's raw mapping before validation, so that claims name a step like
any case and every later stage sees plain cases; the file keeps which steps make each sequence.

A step's figures depend on the steps before it, so a step always runs after them, in order, in one
process: the profile stage plans a sequence as a whole up to its last step that a claim reads."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ncuverify.spec.programs import each_name
from ncuverify.spec.variables import VariableProblem
from ncuverify.spec.yaml_reader import Location

# The model's field for the sequences, named so that no file's key is taken for it.
SEQUENCES_FIELD = "cases (sequences)"
MAX_STEPS = 64
# What a case with steps may hold besides them (vars are computed before, into every step).
_SEQUENCE_KEYS = {"steps", "vars"}


def is_sequence(case: object) -> bool:
    """Whether a case as written is a launch sequence (it gives `steps`, and runs no program)."""
    return isinstance(case, dict) and "steps" in case and "program" not in case


def step_name(case: str, number: int) -> str:
    """`reduce#2`: the second step of the case reduce (numbered from 1)."""
    return each_name(case, number)


@dataclass(frozen=True)
class ExpandedSteps:
    """The cases with every sequence made plain steps, the steps of each sequence, their lines, and
    for each step where it is written (`reduce#2`: cases, reduce, steps, 1)."""

    cases: dict[str, Any]
    sequences: dict[str, list[str]]
    lines: dict[Location, int]
    written: dict[str, Location]


def expand_steps(cases: dict[str, Any], lines: Mapping[Location, int]) -> ExpandedSteps:
    """Every case with `steps` made one plain case per step, named CASE#1, CASE#2, ...; the others as
    written. Raises VariableProblem for a sequence that cannot be expanded."""
    result: dict[str, Any] = {}
    sequences: dict[str, list[str]] = {}
    written: dict[str, Location] = {}
    new_lines = dict(lines)
    for name, case in cases.items():
        if not is_sequence(case):
            result[name] = case
            continue
        where: Location = ("cases", name)
        steps = _steps(case, where)
        names = [step_name(name, number) for number in range(1, len(steps) + 1)]
        for index, (step, step_case) in enumerate(zip(steps, names, strict=True)):
            result[step_case] = {**step, "vars": case["vars"]} if "vars" in case else step
            written[step_case] = (*where, "steps", index)
        sequences[name] = names
    for location, line in lines.items():
        at_step = _step_location(location, sequences)
        if at_step is not None:
            new_lines.setdefault(at_step, line)
    return ExpandedSteps(result, sequences, new_lines, written)


def _steps(case: dict[str, Any], where: Location) -> list[dict[str, Any]]:
    extra = sorted(str(key) for key in case if key not in _SEQUENCE_KEYS)
    if extra:
        raise VariableProblem(
            (*where, extra[0]),
            f"a case with steps gives {extra[0]} in each step; beside steps it may only have vars and sweep",
        )
    steps = case["steps"]
    if not isinstance(steps, list) or not 1 <= len(steps) <= MAX_STEPS:
        raise VariableProblem(
            (*where, "steps"),
            f"steps is a list of 1 to {MAX_STEPS} launches, each with kernel, grid and block",
        )
    for index, step in enumerate(steps):
        at = (*where, "steps", index)
        if not isinstance(step, dict):
            raise VariableProblem(at, "a step is a launch: a mapping with kernel, grid, block and args")
        for key in ("vars", "sweep", "steps", "program"):
            if key in step:
                raise VariableProblem((*at, key), f"{key} belongs to the case, not to one of its steps")
    return steps


def _step_location(location: Location, sequences: Mapping[str, list[str]]) -> Location | None:
    """A line of a step as written (cases, reduce, steps, 1, grid) at its case's name (cases, reduce#2,
    grid)."""
    if len(location) < 4 or location[0] != "cases" or location[2] != "steps":
        return None
    name, index = location[1], location[3]
    steps = sequences.get(name) if isinstance(name, str) else None
    if steps is None or not isinstance(index, int) or not 0 <= index < len(steps):
        return None
    return ("cases", steps[index], *location[4:])


def as_written(where: Location, written: Mapping[str, Location]) -> Location:
    """A problem's place on a step's case (cases, reduce#2, grid) where the file writes it."""
    if len(where) >= 2 and where[0] == "cases" and isinstance(where[1], str) and where[1] in written:
        return (*written[where[1]], *where[2:])
    return where
