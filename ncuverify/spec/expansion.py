"""A file's variables, sweeps and launch sequences expanded on its raw mapping, so that validation and
every later stage see plain cases and claims; problems found after are placed at the claim written."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ncuverify.spec.points import Point
from ncuverify.spec.programs import launch_of
from ncuverify.spec.sequences import SEQUENCES_FIELD, as_written, expand_steps, is_sequence
from ncuverify.spec.sweep_claims import expand_claims
from ncuverify.spec.sweeps import expand_cases
from ncuverify.spec.variables import VariableProblem, uses_variables
from ncuverify.spec.yaml_reader import Location


@dataclass(frozen=True)
class Expanded:
    """The mapping expanded, its lines, for each claim the index of the claim written, for each step
    of a sequence where it is written, and the point of each case and claim a sweep made."""

    data: dict[str, Any]
    lines: dict[Location, int]
    claim_origin: tuple[int, ...] | None = None  # None: the claims are as written
    step_origin: Mapping[str, Location] = field(default_factory=dict)
    case_points: Mapping[str, Point] = field(default_factory=dict)
    claim_points: tuple[Point, ...] = ()  # each claim's, in order; () where no claim was swept

    def written(self, problems: Iterable[tuple[Location, str]]) -> Iterator[tuple[Location, str]]:
        """Each problem at the claim written, not at its copy for one case of a sweep; and at the step
        written, not at its case."""
        for where, message in problems:
            if self.claim_origin is not None and len(where) >= 2 and where[0] == "claims":
                index = where[1]
                if isinstance(index, int) and 0 <= index < len(self.claim_origin):
                    where = ("claims", self.claim_origin[index], *where[2:])
            yield as_written(where, self.step_origin), message


def expand(data: dict[str, Any], lines: dict[Location, int]) -> Expanded:
    """The file with every case's vars and sweep expanded, then its sequences' steps made cases; a file
    without them as it is.

    Raises VariableProblem for a case or claim whose variables or steps cannot be expanded."""
    if SEQUENCES_FIELD in data:
        raise VariableProblem((SEQUENCES_FIELD,), f"unknown key {SEQUENCES_FIELD!r}")
    swept = _swept(data, lines)
    cases = swept.data.get("cases")
    if not isinstance(cases, dict) or not any(is_sequence(case) for case in cases.values()):
        return swept
    steps = expand_steps(cases, swept.lines)
    data = {**swept.data, "cases": steps.cases, SEQUENCES_FIELD: steps.sequences}
    # a step of a swept case (`reduce__n_4#2`) stands at its case's point
    points = {
        name: swept.case_points[case]
        for name in steps.cases
        if isinstance(name, str) and (case := launch_of(name)[0]) in swept.case_points
    }
    return Expanded(data, steps.lines, swept.claim_origin, steps.written, points, swept.claim_points)


def _swept(data: dict[str, Any], lines: dict[Location, int]) -> Expanded:
    cases = data.get("cases")
    if not isinstance(cases, dict) or not any(uses_variables(case) for case in cases.values()):
        return Expanded(data, lines)
    expanded = expand_cases(cases, lines)
    result = {**data, "cases": expanded.cases}
    points = {point.case: point.values for made in expanded.sweeps.values() for point in made}
    claims = data.get("claims")
    if not expanded.sweeps or not isinstance(claims, list):
        return Expanded(result, expanded.lines, case_points=points)
    made = expand_claims(claims, expanded.sweeps)
    return Expanded({**result, "claims": made.claims}, expanded.lines, made.origin, {}, points, made.points)
