"""Where a loaded file writes each claim and case: the line an annotation of a pull request, or a
SARIF result, points a reviewer at."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ncuverify.names import QualifiedCase
from ncuverify.spec.programs import launch_of
from ncuverify.spec.yaml_reader import Location


@dataclass(frozen=True)
class SpecLines:
    """The line (from 1) of each claim (by id), case (by name) and kernel entry (by key) as the file
    writes it: a claim of a sweep at the claim written, a step of a sequence at the step written."""

    claims: Mapping[str, int] = field(default_factory=dict)
    cases: Mapping[str, int] = field(default_factory=dict)
    kernels: Mapping[str, int] = field(default_factory=dict)

    def claim(self, claim_id: str) -> int:
        """The claim's line (claim#2, judged on a launch of `combine: each`, at claim); 1 (the file)
        for a claim not found."""
        return _found(self.claims, claim_id)

    def case(self, name: str) -> int:
        """The case's line (see case_line); 1 (the file) for a case not found."""
        return self.case_line(name) or 1

    def case_line(self, name: str) -> int | None:
        """The case's line: a launch or step, case#2, at case; a kernel of a set, `KEY[kernel]`, at its
        kernel entry; None for a case the file does not write."""
        if name in self.cases:
            return self.cases[name]
        try:
            identity = QualifiedCase.parse(name)
        except ValueError:
            return None
        if identity.set_kernel is not None:
            return self.kernels.get(identity.case)
        return self.cases.get(str(identity.without_launch())) if identity.launch is not None else None


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
    kernel_names: Sequence[str] = (),
) -> SpecLines:
    """The lines of a file's claims (in the order of the expanded file), cases and kernel entries,
    from the reader's lines and where the expansion made each claim and case from."""
    claims: dict[str, int] = {}
    for index, claim_id in enumerate(claim_ids):
        written = claim_origin[index] if claim_origin is not None and index < len(claim_origin) else index
        claims.setdefault(claim_id, _line_of(lines, ("claims", written)))
    cases = {name: _line_of(lines, step_origin.get(name, ("cases", name))) for name in case_names}
    kernels = {name: _line_of(lines, ("kernels", name)) for name in kernel_names}
    return SpecLines(claims, cases, kernels)


def _line_of(lines: Mapping[Location, int], where: Location) -> int:
    """The line of where, else of the nearest place above it that was read."""
    for end in range(len(where), 0, -1):
        if where[:end] in lines:
            return lines[where[:end]]
    return 1
