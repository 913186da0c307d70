"""What the runner launches: the plan the profile stage writes as JSON, one PlannedCase a launch."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class PlannedCase:
    name: str
    cubin: str
    symbol: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared_bytes: int
    args: list[dict[str, Any]]
    repeat: int = 1


@dataclass
class Plan:
    """What the runner launches, written as JSON by the profile stage."""

    device: int
    status_path: str
    cases: list[PlannedCase] = field(default_factory=list)

    def write(self, path: Path) -> None:
        path.write_text(json.dumps(asdict(self), indent=1))

    @classmethod
    def read(cls, path: Path) -> Plan:
        data = json.loads(path.read_text())
        cases = [
            PlannedCase(**{**c, "grid": tuple(c["grid"]), "block": tuple(c["block"])}) for c in data["cases"]
        ]
        return cls(device=data["device"], status_path=data["status_path"], cases=cases)
