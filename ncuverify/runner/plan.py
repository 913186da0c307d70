"""What the runner launches: the plan the profile stage writes as JSON, one PlannedCase a launch."""

from __future__ import annotations

import json
from collections.abc import Sequence
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
    # A step of a launch sequence names it: the steps of one sequence run one after another, on the
    # buffers the earlier ones made ({"use": NAME} passes one again). "" for a case of its own.
    sequence: str = ""


def steps_up_to(cases: Sequence[PlannedCase], name: str) -> list[PlannedCase]:
    """The case named, after the steps of its sequence that come before it among cases: what running
    it again needs."""
    at = next(index for index, c in enumerate(cases) if c.name == name)
    case = cases[at]
    return [*(c for c in cases[:at] if case.sequence and c.sequence == case.sequence), case]


@dataclass
class Plan:
    """What the runner launches, written as JSON by the profile stage."""

    device: int
    status_path: str
    cases: list[PlannedCase] = field(default_factory=list)
    # A file the runner waits for once CUDA has started, before its first case: until it exists, another
    # process profiles on this GPU ("" for none).
    gate: str = ""
    # The file the runner creates once CUDA has started (or could not): a process before this one on
    # the GPU whose kernels time themselves launches only once it exists, since a context starting is
    # work on the GPU ("" for none).
    ready: str = ""
    # The ready files of the processes after this one that start CUDA before it launches: this one's
    # kernels time themselves, so it waits for them with its gate.
    wait_ready: list[str] = field(default_factory=list)
    # The file the runner creates once every case has run with CUDA still usable: the next process on
    # the GPU may launch while this one ends (its ncu writes the report; "" for none).
    opens: str = ""

    def write(self, path: Path) -> None:
        path.write_text(json.dumps(asdict(self), indent=1))

    @classmethod
    def read(cls, path: Path) -> Plan:
        data = json.loads(path.read_text())
        cases = [
            PlannedCase(**{**c, "grid": tuple(c["grid"]), "block": tuple(c["block"])}) for c in data["cases"]
        ]
        return cls(
            data["device"],
            data["status_path"],
            cases,
            gate=data.get("gate", ""),
            ready=data.get("ready", ""),
            wait_ready=list(data.get("wait_ready", [])),
            opens=data.get("opens", ""),
        )
