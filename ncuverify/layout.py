"""Where each field of a struct argument lies, as a C compiler lays it out: every field at its natural
alignment, the struct aligned as its most aligned field (or its `align:` where that is larger), its size
padded to a multiple of its alignment. The values here are plain: ncuverify.spec.arguments lays its
struct models out into them, and the plan gives the runner each struct's layout, which the runner packs
without the expectation file's model."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

POINTER_BYTES = 8
# Each scalar kind's size, which is also its alignment.
SCALAR_BYTES = {
    "int32": 4,
    "uint32": 4,
    "float32": 4,
    "int64": 8,
    "uint64": 8,
    "float64": 8,
    "int8": 1,
    "uint8": 1,
    "int16": 2,
    "uint16": 2,
    "float16": 2,
    "bfloat16": 2,
    "bool": 1,
}


@dataclass(frozen=True)
class ScalarAt:
    """A scalar of kind at offset bytes from the struct's start."""

    offset: int
    kind: str
    value: int | float | bool


@dataclass(frozen=True)
class PointerAt:
    """The device address of the case's buffer called buffer, at offset bytes from the struct's start."""

    offset: int
    buffer: str


@dataclass(frozen=True)
class StructLayout:
    """A struct's size and alignment, and every scalar and pointer in it (arrays and nested structs
    flattened), in order; the bytes between them are padding."""

    size: int
    alignment: int
    offsets: tuple[int, ...]  # of each of its own fields
    leaves: tuple[ScalarAt | PointerAt, ...]


def layout_to_plan(layout: StructLayout) -> dict[str, Any]:
    """The layout as the runner's plan holds it (JSON): the runner packs a struct from this alone."""
    return {
        "size": layout.size,
        "alignment": layout.alignment,
        "offsets": list(layout.offsets),
        "leaves": [
            {"offset": leaf.offset, "buffer": leaf.buffer}
            if isinstance(leaf, PointerAt)
            else {"offset": leaf.offset, "kind": leaf.kind, "value": leaf.value}
            for leaf in layout.leaves
        ],
    }


def layout_from_plan(data: dict[str, Any]) -> StructLayout:
    """A layout read back from a plan (written by layout_to_plan)."""
    leaves: list[ScalarAt | PointerAt] = [
        PointerAt(int(leaf["offset"]), str(leaf["buffer"]))
        if "buffer" in leaf
        else ScalarAt(int(leaf["offset"]), str(leaf["kind"]), leaf["value"])
        for leaf in data["leaves"]
    ]
    return StructLayout(int(data["size"]), int(data["alignment"]), tuple(data["offsets"]), tuple(leaves))
