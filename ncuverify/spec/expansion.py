"""A file's variables and sweeps expanded on its raw mapping, so that validation and every later stage
see plain cases and claims; problems found after are placed at the claim written."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from ncuverify.spec.sweep_claims import expand_claims
from ncuverify.spec.sweeps import expand_cases
from ncuverify.spec.variables import uses_variables
from ncuverify.spec.yaml_reader import Location


@dataclass(frozen=True)
class Expanded:
    """The mapping expanded, its lines, and for each claim the index of the claim written."""

    data: dict[str, Any]
    lines: dict[Location, int]
    claim_origin: tuple[int, ...] | None = None  # None: the claims are as written

    def written(self, problems: Iterable[tuple[Location, str]]) -> Iterator[tuple[Location, str]]:
        """Each problem at the claim written, not at its copy for one case of a sweep."""
        for where, message in problems:
            if self.claim_origin is not None and len(where) >= 2 and where[0] == "claims":
                index = where[1]
                if isinstance(index, int) and 0 <= index < len(self.claim_origin):
                    where = ("claims", self.claim_origin[index], *where[2:])
            yield where, message


def expand(data: dict[str, Any], lines: dict[Location, int]) -> Expanded:
    """The file with every case's vars and sweep expanded; a file without them as it is.

    Raises VariableProblem for a case or claim whose variables cannot be expanded."""
    cases = data.get("cases")
    if not isinstance(cases, dict) or not any(uses_variables(case) for case in cases.values()):
        return Expanded(data, lines)
    expanded = expand_cases(cases, lines)
    result = {**data, "cases": expanded.cases}
    claims = data.get("claims")
    if not expanded.sweeps or not isinstance(claims, list):
        return Expanded(result, expanded.lines)
    made = expand_claims(claims, expanded.sweeps)
    return Expanded({**result, "claims": made.claims}, expanded.lines, made.origin)
