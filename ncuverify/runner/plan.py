"""What the runner launches: the plan the profile stage writes as JSON, one PlannedCase a launch, each
argument a PlannedArgument.

A planned argument carries every field the expectation file's model gave it, defaults included: the
defaults are the spec's alone, and the runner reads them here rather than stating them again.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from ncuverify.layout import SCALAR_BYTES, StructLayout, layout_from_plan, layout_to_plan


class PlanError(ValueError):
    """A plan that is not one the profile stage writes."""


BufferFill = Literal["zeros", "constant", "iota", "random"]


@dataclass(frozen=True)
class NpyContents:
    """A buffer's contents from a .npy file: its absolute path, and the digest of the bytes the check
    read (the runner loads the file only while it still has them)."""

    npy: str
    sha256: str


@dataclass(frozen=True)
class PlannedBuffer:
    """A device buffer: count elements of the numpy dtype buffer, offset elements into its allocation."""

    buffer: str
    count: int
    fill: BufferFill | NpyContents
    value: float | None  # of a constant fill, and only of it
    seed: int  # of a random fill
    offset: int
    name: str | None  # read back after each launch; a later step or a struct's pointer names it
    passed: bool  # false: no parameter of its own, only the buffer a struct's pointer field names

    def to_json(self) -> dict[str, object]:
        fill = (
            {"npy": self.fill.npy, "sha256": self.fill.sha256}
            if isinstance(self.fill, NpyContents)
            else self.fill
        )
        data: dict[str, object] = {"buffer": self.buffer, "count": self.count, "fill": fill}
        if self.value is not None:
            data["value"] = self.value
        data |= {"seed": self.seed, "offset": self.offset}
        if self.name is not None:
            data["name"] = self.name
        return data | {"passed": self.passed}

    @classmethod
    def from_json(cls, data: dict[str, object], where: str) -> PlannedBuffer:
        _known(data, {"buffer", "count", "fill", "value", "seed", "offset", "name", "passed"}, where)
        fill = _fill(data.get("fill"), f"{where}.fill")
        value = _optional_number(data, "value", where)
        if (fill == "constant") != (value is not None):
            raise PlanError(f"{where}.value: goes with a constant fill, and only with it")
        return cls(
            _text(data, "buffer", where),
            _whole(data, "count", where),
            fill,
            value,
            _whole(data, "seed", where),
            _whole(data, "offset", where),
            _optional_text(data, "name", where),
            _truth(data, "passed", where),
        )


@dataclass(frozen=True)
class PlannedUse:
    """A buffer an earlier step of the sequence made, passed again."""

    use: str
    passed: bool

    @property
    def name(self) -> str:
        return self.use

    def to_json(self) -> dict[str, object]:
        return {"use": self.use, "passed": self.passed}

    @classmethod
    def from_json(cls, data: dict[str, object], where: str) -> PlannedUse:
        _known(data, {"use", "passed"}, where)
        return cls(_text(data, "use", where), _truth(data, "passed", where))


@dataclass(frozen=True)
class PlannedScalar:
    """One scalar parameter, of kind int32, float32, bfloat16 etc."""

    kind: str
    value: int | float | bool

    @property
    def passed(self) -> bool:
        return True  # a scalar is always a parameter of its own

    def to_json(self) -> dict[str, object]:
        return {self.kind: self.value}

    @classmethod
    def from_json(cls, data: dict[str, object], where: str) -> PlannedScalar:
        [(kind, value)] = data.items()
        if kind not in SCALAR_BYTES:
            raise PlanError(f"{where}.{kind}: not a kind of scalar")
        if not isinstance(value, int | float):  # bool is an int
            raise PlanError(f"{where}.{kind}: not a number or true or false")
        return cls(kind, value)


@dataclass(frozen=True)
class PlannedStruct:
    """A struct passed by value, as its layout: the runner packs it from this alone."""

    layout: StructLayout

    @property
    def passed(self) -> bool:
        return True  # a struct is always a parameter of its own

    def to_json(self) -> dict[str, object]:
        return {"struct": layout_to_plan(self.layout)}

    @classmethod
    def from_json(cls, data: dict[str, object], where: str) -> PlannedStruct:
        _known(data, {"struct"}, where)
        layout = data["struct"]
        if not isinstance(layout, dict):
            raise PlanError(f"{where}.struct: not a layout")
        try:
            return cls(layout_from_plan(layout))
        except (KeyError, TypeError, ValueError) as error:
            raise PlanError(f"{where}.struct: not a layout ({type(error).__name__}: {error})") from None


# What a kernel is launched with, as the plan gives it.
PlannedArgument = PlannedBuffer | PlannedUse | PlannedScalar | PlannedStruct


def argument_from_json(data: object, where: str) -> PlannedArgument:
    """One argument as the plan holds it (PlannedArgument's to_json); PlanError naming the field (after
    where) if it is not one the profile stage writes. The one key of a scalar is its kind."""
    if not isinstance(data, dict) or not data:
        raise PlanError(f"{where}: not an argument")
    if "buffer" in data:
        return PlannedBuffer.from_json(data, where)
    if "use" in data:
        return PlannedUse.from_json(data, where)
    if "struct" in data:
        return PlannedStruct.from_json(data, where)
    if len(data) == 1:
        return PlannedScalar.from_json(data, where)
    raise PlanError(f"{where}: not a buffer, a use, a struct or one scalar")


# Each fill the plan names by itself; a .npy fill is an object (NpyContents).
_FILLS: dict[str, BufferFill] = {fill: fill for fill in get_args(BufferFill)}


def _fill(data: object, where: str) -> BufferFill | NpyContents:
    if isinstance(data, str) and data in _FILLS:
        return _FILLS[data]
    if not isinstance(data, dict):
        raise PlanError(f"{where}: not a fill of the plan ({', '.join(_FILLS)}, or npy)")
    _known(data, {"npy", "sha256"}, where)
    return NpyContents(_text(data, "npy", where), _text(data, "sha256", where))


def _optional_number(data: dict[str, object], key: str, where: str) -> float | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise PlanError(f"{where}.{key}: not a number")
    return float(value)


def _optional_text(data: dict[str, object], key: str, where: str) -> str | None:
    return None if data.get(key) is None else _text(data, key, where)


def _known(data: dict[str, object], keys: set[str], where: str) -> None:
    unknown = sorted(str(key) for key in data if key not in keys)
    if unknown:
        raise PlanError(f"{where}.{unknown[0]}: not a field of a planned argument")


def _text(data: dict[str, object], key: str, where: str) -> str:
    value = data.get(key)
    if not isinstance(value, str):
        raise PlanError(f"{where}.{key}: not a string")
    return value


def _whole(data: dict[str, object], key: str, where: str) -> int:
    value = data.get(key)
    if not isinstance(value, int) or isinstance(value, bool):
        raise PlanError(f"{where}.{key}: not a whole number")
    return value


def _truth(data: dict[str, object], key: str, where: str) -> bool:
    value = data.get(key)
    if not isinstance(value, bool):
        raise PlanError(f"{where}.{key}: not true or false")
    return value


@dataclass(frozen=True)
class PlannedCase:
    name: str
    cubin: str
    symbol: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared_bytes: int
    args: list[PlannedArgument]
    repeat: int = 1
    # A step of a launch sequence names it: the steps of one sequence run one after another, on the
    # buffers the earlier ones made ({"use": NAME} passes one again). "" for a case of its own.
    sequence: str = ""

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "cubin": self.cubin,
            "symbol": self.symbol,
            "grid": list(self.grid),
            "block": list(self.block),
            "shared_bytes": self.shared_bytes,
            "args": [arg.to_json() for arg in self.args],
            "repeat": self.repeat,
            "sequence": self.sequence,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PlannedCase:
        where = f"case {data.get('name')!r}: args"
        args = data.get("args")
        if not isinstance(args, list):
            raise PlanError(f"{where}: not a list")
        return cls(
            **{
                **data,
                "grid": tuple(data["grid"]),
                "block": tuple(data["block"]),
                "args": [argument_from_json(arg, f"{where}[{index}]") for index, arg in enumerate(args)],
            }
        )


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
    # Where no ncu runs the plan (runner/facts.py): the file its report goes to, as ncu's raw page,
    # with these launch facts of each launch ("" where ncu profiles it).
    report: str = ""
    facts: list[str] = field(default_factory=list)

    def write(self, path: Path) -> None:
        data = {
            "device": self.device,
            "status_path": self.status_path,
            "cases": [case.to_json() for case in self.cases],
            "gate": self.gate,
            "ready": self.ready,
            "wait_ready": self.wait_ready,
            "opens": self.opens,
            "report": self.report,
            "facts": self.facts,
        }
        path.write_text(json.dumps(data, indent=1))

    @classmethod
    def read(cls, path: Path) -> Plan:
        data = json.loads(path.read_text())
        cases = [PlannedCase.from_json(c) for c in data["cases"]]
        return cls(
            data["device"],
            data["status_path"],
            cases,
            gate=data.get("gate", ""),
            ready=data.get("ready", ""),
            wait_ready=list(data.get("wait_ready", [])),
            opens=data.get("opens", ""),
            report=data.get("report", ""),
            facts=list(data.get("facts", [])),
        )
