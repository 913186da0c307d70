"""Where each field of a struct argument lies, as a C compiler lays it out: every field at its natural
alignment, the struct aligned as its most aligned field (or its `align:` where that is larger), its size
padded to a multiple of its alignment. Pure: the argument check sizes structs with it, and the plan
gives the runner each struct's layout, which the runner packs without the expectation file's model."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the models import this module's sizes: for types only
    from ncuverify.spec.arguments import StructArg, StructField

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


def natural_alignment(struct: StructArg) -> int:
    """The alignment C gives the struct without `align:`: its most aligned field's."""
    return max(_field(field)[1] for field in struct.struct)


def struct_layout(struct: StructArg) -> StructLayout:
    offsets: list[int] = []
    leaves: list[ScalarAt | PointerAt] = []
    end, alignment = 0, int(struct.align or 1)
    for field in struct.struct:
        size, field_alignment, field_leaves = _field(field)
        at = _rounded_up(end, field_alignment)
        offsets.append(at)
        leaves += [_moved(leaf, at) for leaf in field_leaves]
        end, alignment = at + size, max(alignment, field_alignment)
    return StructLayout(_rounded_up(end, alignment), alignment, tuple(offsets), tuple(leaves))


def _field(field: StructField) -> tuple[int, int, tuple[ScalarAt | PointerAt, ...]]:
    """A field's size, alignment, and the scalars and pointers in it from its own start."""
    from ncuverify.spec.arguments import ArrayField, PointerField, StructArg

    if isinstance(field, StructArg):
        layout = struct_layout(field)
        return layout.size, layout.alignment, layout.leaves
    if isinstance(field, PointerField):
        return POINTER_BYTES, POINTER_BYTES, (PointerAt(0, field.pointer),)
    if isinstance(field, ArrayField):
        kind, size = field.array.type, SCALAR_BYTES[field.array.type]
        values = field.array.values
        return size * len(values), size, tuple(ScalarAt(i * size, kind, v) for i, v in enumerate(values))
    size = SCALAR_BYTES[field.kind]
    return size, size, (ScalarAt(0, field.kind, field.value),)


def _moved(leaf: ScalarAt | PointerAt, by: int) -> ScalarAt | PointerAt:
    if isinstance(leaf, PointerAt):
        return PointerAt(leaf.offset + by, leaf.buffer)
    return ScalarAt(leaf.offset + by, leaf.kind, leaf.value)


def _rounded_up(value: int, alignment: int) -> int:
    return -(-value // alignment) * alignment


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
