"""A file narrowed to the part of it that one shard of a run takes (`profile.shares` says which groups of
cases each shard takes), or to some of its claims."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, replace

from ncuverify.spec.case_groups import CaseGroup
from ncuverify.spec.expectation_file import Spec


@dataclass(frozen=True)
class Part:
    """The cases, claims and kernels of a file that one shard takes."""

    cases: frozenset[str] = frozenset()
    claims: frozenset[str] = frozenset()
    kernels: frozenset[str] = frozenset()

    def with_group(self, group: CaseGroup) -> Part:
        return Part(
            self.cases | set(group.cases), self.claims | set(group.claims), self.kernels | set(group.kernels)
        )


def narrowed(spec: Spec, part: Part) -> Spec:
    """The file with only the part's cases, claims and kernels: only they are built, profiled and judged.
    A group holds whole sequences, so each sequence kept keeps every step."""
    content = spec.content
    update = {
        "claims": [claim for claim in content.claims if claim.id in part.claims],
        "cases": {name: case for name, case in content.cases.items() if name in part.cases},
        "programs": {name: case for name, case in content.programs.items() if name in part.cases},
        "kernels": {key: kernel for key, kernel in content.kernels.items() if key in part.kernels},
        "sequences": {
            name: steps
            for name, steps in content.sequences.items()
            if all(step in part.cases for step in steps)
        },
    }
    return replace(spec, content=content.model_copy(update=update))


def with_claims(spec: Spec, ids: Collection[str]) -> Spec:
    """The file with only the claims of these ids (the ones a test run selected): only what they read
    is built into measurements, profiled and judged."""
    kept = [c for c in spec.content.claims if c.id in ids]
    return replace(spec, content=spec.content.model_copy(update={"claims": kept}))
