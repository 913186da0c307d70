"""Sweeps: a case written once with `sweep: {n: [...]}` becomes one plain case per point of the
sweep (the product of its variables' values, in order), named `CASE__n_1048576`; cases with `vars`
alone have their expressions computed where they stand. Works on the file's raw mapping, before
validation, and keeps every expanded case's lines those of the case written."""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ncuverify.spec.fields import MAX_ID_LENGTH
from ncuverify.spec.points import Point
from ncuverify.spec.variables import (
    VariableProblem,
    case_variables,
    number,
    substituted,
    uses_variables,
    variable_name,
)
from ncuverify.spec.yaml_reader import MAX_ALIAS_VALUES, Location

MAX_SWEEP_CASES = 256  # the points of one sweep
MAX_CASES = 4096  # the cases of a file once its sweeps are expanded
# The values of the swept cases once expanded: as many as aliases may add to a small file.
MAX_EXPANDED_VALUES = MAX_ALIAS_VALUES


@dataclass(frozen=True)
class SweepPoint:
    """One case of a sweep: its name and the values of the sweep's variables there."""

    case: str
    values: Point

    def agrees(self, other: Mapping[str, int]) -> bool:
        """Whether this point has the same value as other for every variable both have."""
        return all(other.get(name, value) == value for name, value in self.values)


def point_suffix(values: Point) -> str:
    """`__n_1048576__tile_32`: a suffix that keeps a name an id (a minus is written m: `__k_m1`)."""
    return "".join(f"__{name}_{'m' if value < 0 else ''}{abs(value)}" for name, value in values)


def _sweep_values(sweep: Any, where: Location) -> list[tuple[str, list[int]]]:
    """The sweep's variables and the values of each, as written (expressions over no names allowed)."""
    if not isinstance(sweep, dict) or not sweep:
        raise VariableProblem(
            where, "sweep is a mapping of variable names to lists of values, e.g. {n: [1024, 4096]}"
        )
    axes: list[tuple[str, list[int]]] = []
    for name, values in sweep.items():
        at = (*where, name)
        variable_name(name, at)
        if not isinstance(values, list) or not 1 <= len(values) <= MAX_SWEEP_CASES:
            raise VariableProblem(at, f"a sweep variable takes a list of 1 to {MAX_SWEEP_CASES} values")
        numbers = [number(value, {}, (*at, index)) for index, value in enumerate(values)]
        if len(set(numbers)) != len(numbers):
            raise VariableProblem(at, f"values repeat: {numbers}")
        axes.append((name, numbers))
    count = 1
    for _, numbers in axes:
        count *= len(numbers)
    if count > MAX_SWEEP_CASES:
        raise VariableProblem(where, f"the sweep makes {count} cases; at most {MAX_SWEEP_CASES}")
    return axes


def _points(name: str, case: dict[str, Any]) -> list[SweepPoint]:
    axes = _sweep_values(case["sweep"], ("cases", name, "sweep"))
    names = [axis for axis, _ in axes]
    points = []
    for values in itertools.product(*(numbers for _, numbers in axes)):
        named = tuple(zip(names, values, strict=True))
        points.append(SweepPoint(name + point_suffix(named), named))
    return points


@dataclass(frozen=True)
class ExpandedCases:
    """The cases once expanded, each swept case's points, and the lines of the expanded cases."""

    cases: dict[str, Any]
    sweeps: dict[str, tuple[SweepPoint, ...]]
    lines: dict[Location, int]


def expand_cases(cases: dict[str, Any], lines: Mapping[Location, int]) -> ExpandedCases:
    """Every case with `vars` or `sweep` made plain; the others as written."""
    result: dict[str, Any] = {}
    sweeps: dict[str, tuple[SweepPoint, ...]] = {}
    new_lines = dict(lines)
    by_case = _lines_by_case(lines)
    spent = 0
    for name, case in cases.items():
        where: Location = ("cases", name)
        if not uses_variables(case):
            result[name] = case
            continue
        points = _points(name, case) if "sweep" in case else [SweepPoint(name, ())]
        spent += len(points) * len(by_case.get(name, []))  # each point copies the case's every value
        if spent > MAX_EXPANDED_VALUES:
            raise VariableProblem(
                (*where, "sweep"), f"the file's sweeps make more than {MAX_EXPANDED_VALUES} values"
            )
        for point in points:
            _new_case_name(point.case, name, cases, result)
            given = dict(point.values)
            try:
                result[point.case] = substituted(case, where, case_variables(case, where, given))
            except VariableProblem as problem:
                at = f" (at {', '.join(f'{k}={v}' for k, v in point.values)})" if point.values else ""
                raise VariableProblem(problem.where, problem.message + at) from None
            for rest, line in by_case.get(name, []):
                new_lines.setdefault(("cases", point.case, *rest), line)
        if "sweep" in case:
            sweeps[name] = tuple(points)
    return ExpandedCases(result, sweeps, new_lines)


def _new_case_name(new: str, name: str, written: Mapping[str, Any], made: Mapping[str, Any]) -> None:
    where = ("cases", name, "sweep")
    if len(new) > MAX_ID_LENGTH:
        raise VariableProblem(where, f"the case name {new[:40]}... is longer than {MAX_ID_LENGTH} characters")
    if new != name and (new in written or new in made):
        raise VariableProblem(where, f"the sweep makes a case {new}, and the file has one so named")
    if len(made) >= MAX_CASES:
        raise VariableProblem(where, f"the file's sweeps make more than {MAX_CASES} cases")


def _lines_by_case(lines: Mapping[Location, int]) -> dict[str, list[tuple[Location, int]]]:
    """The lines of each case, by the rest of their locations: read once, whatever the cases' number."""
    by_case: dict[str, list[tuple[Location, int]]] = {}
    for location, line in lines.items():
        if len(location) >= 2 and location[0] == "cases" and isinstance(location[1], str):
            by_case.setdefault(location[1], []).append((location[2:], line))
    return by_case
