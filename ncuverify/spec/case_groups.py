"""A file's independent groups of cases: the cases that one claim reads (its case, its control, each
`metric@case` of its expression, a program case's launches `add#2`) are profiled together and judged
together, and so are the steps of one sequence (a step runs after the steps before it), and the claims
over one kernel set (`kernels:`, one build of the set). Each group carries the kernels its cases launch,
so that a shard that holds a group builds those kernels and no other. Every case, claim and kernel of a
file is in exactly one group: a case no claim reads and a kernel no case launches make groups of their
own, so that a run split by groups still builds and lists all of them once."""

from __future__ import annotations

from dataclasses import dataclass

from ncuverify.spec.claims import Claim
from ncuverify.spec.expectation_file import ExpectationFile
from ncuverify.spec.programs import launch_of


@dataclass(frozen=True)
class CaseGroup:
    """Cases, claims and kernels that one shard takes together; each in file order."""

    cases: tuple[str, ...]  # built cases and program cases
    claims: tuple[str, ...]  # claim ids
    kernels: tuple[str, ...]  # kernel keys: what the cases launch, the sets the claims read

    @property
    def name(self) -> str:
        """What names the group in its file, the same on every machine: its first case, else its first
        claim, else its kernel."""
        if self.cases:
            return f"case {self.cases[0]}"
        return f"claim {self.claims[0]}" if self.claims else f"kernel {self.kernels[0]}"


def case_groups(content: ExpectationFile) -> list[CaseGroup]:
    """The file's independent groups, in the file order of their first member."""
    links = _Links()
    cases = [*content.cases, *content.programs]
    for name in cases:
        links.root(f"case:{name}")
    for steps in content.sequences.values():
        links.link([f"case:{step}" for step in steps if step in content.cases])
    for claim in content.claims:
        links.link([f"claim:{claim.id}", *_read_by(claim, content)])
    used = {content.cases[name].kernel for name in content.cases}
    used |= {claim.kernels for claim in content.claims if claim.kernels is not None}
    for key in content.kernels:
        if key not in used:
            links.root(f"kernel:{key}")
    order = [f"case:{name}" for name in cases] + [f"claim:{claim.id}" for claim in content.claims]
    order += [f"kernel:{key}" for key in content.kernels] + sorted(links.parent)
    members: dict[str, list[str]] = {}
    for node in dict.fromkeys(order):
        if node in links.parent:
            members.setdefault(links.root(node), []).append(node)
    return [_group(nodes, content) for nodes in members.values()]


class _Links:
    """Which nodes are linked (union-find): "case:NAME", "claim:ID", "set:KEY", "kernel:KEY"."""

    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def root(self, node: str) -> str:
        while self.parent.setdefault(node, node) != node:
            self.parent[node] = self.parent[self.parent[node]]
            node = self.parent[node]
        return node

    def link(self, nodes: list[str]) -> None:
        for node in nodes[1:]:
            self.parent[self.root(node)] = self.root(nodes[0])


def _read_by(claim: Claim, content: ExpectationFile) -> list[str]:
    """The nodes a claim reads: its kernel set, or its cases (a program case's launch read as the case)."""
    if claim.kernels is not None:
        return [f"set:{claim.kernels}"]
    named = [claim.case, claim.control, *(ref.case for ref in claim.metric_refs())]
    known = {*content.cases, *content.programs}
    read = {launch_of(name)[0] if name not in known else name for name in named if name is not None}
    return [f"case:{name}" for name in sorted(read)]


def _group(nodes: list[str], content: ExpectationFile) -> CaseGroup:
    cases = tuple(node.removeprefix("case:") for node in nodes if node.startswith("case:"))
    claims = tuple(node.removeprefix("claim:") for node in nodes if node.startswith("claim:"))
    wanted = {content.cases[name].kernel for name in cases if name in content.cases}
    wanted |= {node.split(":", 1)[1] for node in nodes if node.startswith(("set:", "kernel:"))}
    return CaseGroup(cases, claims, tuple(key for key in content.kernels if key in wanted))
