"""Where a loaded file writes each claim and case: the line an annotation of a pull request, or a
SARIF result, points a reviewer at."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ncuverify.spec.programs import launch_of
from ncuverify.spec.yaml_reader import Location


@dataclass(frozen=True)
class SpecLines:
    """The line (from 1) of each claim (by id) and each case (by name) as the file writes it: a claim
    of a sweep at the claim written, a step of a sequence at the step written."""

    claims: Mapping[str, int] = field(default_factory=dict)
    cases: Mapping[str, int] = field(default_factory=dict)

    def claim(self, claim_id: str) -> int:
        """The claim's line (claim#2, judged on a launch of `combine: each`, at claim); 1 (the file)
        for a claim not found."""
        return _found(self.claims, claim_id)

    def case(self, name: str) -> int:
        """The case's line (a launch case#2 at case); 1 (the file) for a case not found, such as a
        kernel set's."""
        return _found(self.cases, name)


def _found(lines: Mapping[str, int], name: str) -> int:
    if name in lines:
        return lines[name]
    return lines.get(launch_of(name)[0], 1)


def spec_lines(
    claim_ids: list[str],
    case_names: list[str],
    lines: Mapping[Location, int],
    claim_origin: tuple[int, ...] | None,
    step_origin: Mapping[str, Location],
) -> SpecLines:
    """The lines of a file's claims (in the order of the expanded file) and cases, from the reader's
    lines and where the expansion made each claim and case from."""
    claims: dict[str, int] = {}
    for index, claim_id in enumerate(claim_ids):
        written = claim_origin[index] if claim_origin is not None and index < len(claim_origin) else index
        claims.setdefault(claim_id, _line_of(lines, ("claims", written)))
    cases = {name: _line_of(lines, step_origin.get(name, ("cases", name))) for name in case_names}
    return SpecLines(claims, cases)


def _line_of(lines: Mapping[Location, int], where: Location) -> int:
    """The line of where, else of the nearest place above it that was read."""
    for end in range(len(where), 0, -1):
        if where[:end] in lines:
            return lines[where[:end]]
    return 1
