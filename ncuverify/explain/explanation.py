"""An explanation of a failed claim: the ncu rules that fired and the source lines with the most excess,
as values that travel to the report, JUnit, JSON and Markdown."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class RuleFinding:
    rule: str  # e.g. "UncoalescedSharedAccess"
    section: str  # the section identifier as ncu printed it, e.g. "SourceCounters"
    severity: str  # ncu's Rule Type: "OPT", "WRN", "INF", ...
    text: str  # the rule's description, markup rendered as plain text
    speedup_pct: float | None  # ncu's estimated speedup in percent, where it gave one


@dataclass(frozen=True)
class SourceLine:
    file: str  # as ncu printed it (absolute on the machine that profiled)
    line: int
    text: str  # the source text, stripped
    excess: float  # the topic's excess metric on this line
    share: float  # excess / the excess of all lines of the launch, 0..1
    total: float | None = None  # the topic's total metric on this line, where ncu gave it


@dataclass(frozen=True)
class Explanation:
    kernel: str
    topic: str
    rules: tuple[RuleFinding, ...]
    lines: tuple[SourceLine, ...]
    # False when ncu had no CUDA source lines for the launch (kernel built without line info): then
    # "no lines" means "could not attribute", not "nothing to attribute".
    line_info: bool = True

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able data; `from_dict` reads it back."""
        return {
            "kernel": self.kernel,
            "topic": self.topic,
            "rules": [asdict(rule) for rule in self.rules],
            "lines": [asdict(line) for line in self.lines],
            "line_info": self.line_info,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Explanation:
        return cls(
            kernel=str(data["kernel"]),
            topic=str(data["topic"]),
            rules=tuple(RuleFinding(**rule) for rule in data.get("rules", ())),
            lines=tuple(SourceLine(**line) for line in data.get("lines", ())),
            line_info=bool(data.get("line_info", True)),
        )
