"""A launch's arguments: device buffers, scalars and structs passed by value, told apart by their one
key."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Discriminator, Field, StrictBool, Tag, ValidationError, model_validator

from ncuverify.layout import POINTER_BYTES, SCALAR_BYTES, PointerAt, ScalarAt, StructLayout
from ncuverify.spec.fields import SCALAR_TYPES, DType, Float, Id, Int, StrictModel, Text

FLOAT16_MAX = 65504.0  # the largest finite half-precision value
BFLOAT16_MAX = 3.3895313892515355e38  # the largest finite bfloat16 value
MAX_STRUCT_BYTES = 32764  # all of a kernel's parameters together, on sm_70 and later
MAX_STRUCT_DEPTH = 8
MAX_ARRAY_VALUES = 8192


class NpyFill(StrictModel):
    """A buffer's contents from a .npy file: `fill: {npy: data/x.npy}`, relative to the expectation file."""

    npy: Text


class BufferArg(StrictModel):
    """A device buffer: `{buffer: float32, count: 1024, fill: random, seed: 1, offset: 1}`."""

    buffer: DType
    count: Int = Field(ge=1, le=2**36, description="elements the kernel sees (after the offset)")
    fill: Literal["zeros", "constant", "iota", "random"] | NpyFill = "zeros"
    value: Float | None = Field(None, description="the value of a constant fill")
    seed: Int = Field(0, ge=0, le=2**64 - 1)
    offset: Int = Field(
        0, ge=0, le=2**36, description="elements between the allocation and the pointer passed"
    )
    name: Id | None = Field(
        None, description="read the buffer back after the launch, as buffer__NAME.mean etc."
    )
    passed: StrictBool = Field(
        True, description="false: no parameter of its own, only the buffer a struct's pointer field names"
    )

    @model_validator(mode="after")
    def _value_with_constant(self) -> BufferArg:
        if (self.fill == "constant") != (self.value is not None):
            raise ValueError("'value' goes with 'fill: constant', and only with it")
        if not self.passed and self.name is None:
            raise ValueError("a buffer with 'passed: false' needs a 'name' for a struct's pointer field")
        return self


class UseArg(StrictModel):
    """A buffer an earlier step of the case made, passed again: `{use: partial}`. The kernel sees the
    same device memory, as the earlier step's kernel left it."""

    use: Id = Field(description="the name of a buffer of an earlier step")
    passed: StrictBool = Field(
        True, description="false: no parameter of its own, only the buffer a struct's pointer field names"
    )

    @property
    def name(self) -> str:
        return self.use


class ScalarArg(StrictModel):
    """One scalar: its one field is its kind, e.g. `{int32: 5}`."""

    @property
    def kind(self) -> str:
        return next(iter(type(self).model_fields))

    @property
    def value(self) -> int | float | bool:
        value: int | float | bool = getattr(self, self.kind)
        return value


class Int32Arg(ScalarArg):
    int32: Int = Field(ge=-(2**31), le=2**31 - 1)


class UInt32Arg(ScalarArg):
    uint32: Int = Field(ge=0, le=2**32 - 1)


class Int64Arg(ScalarArg):
    int64: Int = Field(ge=-(2**63), le=2**63 - 1)


class UInt64Arg(ScalarArg):
    uint64: Int = Field(ge=0, le=2**64 - 1)


class Float32Arg(ScalarArg):
    float32: Float


class Float64Arg(ScalarArg):
    float64: Float


# Parameters of 1 and 2 bytes: char, bool, short, __half.
class Int8Arg(ScalarArg):
    int8: Int = Field(ge=-(2**7), le=2**7 - 1)


class UInt8Arg(ScalarArg):
    uint8: Int = Field(ge=0, le=2**8 - 1)


class Int16Arg(ScalarArg):
    int16: Int = Field(ge=-(2**15), le=2**15 - 1)


class UInt16Arg(ScalarArg):
    uint16: Int = Field(ge=0, le=2**16 - 1)


class Float16Arg(ScalarArg):
    float16: Float = Field(ge=-FLOAT16_MAX, le=FLOAT16_MAX, description="a finite half-precision value")


class BFloat16Arg(ScalarArg):
    bfloat16: Float = Field(
        ge=-BFLOAT16_MAX, le=BFLOAT16_MAX, description="a finite value, rounded to bfloat16 from float32"
    )


class BoolArg(ScalarArg):
    bool: StrictBool


SCALAR_MODELS: dict[str, type[ScalarArg]] = {
    next(iter(model.model_fields)): model
    for model in (
        Int32Arg,
        UInt32Arg,
        Int64Arg,
        UInt64Arg,
        Float32Arg,
        Float64Arg,
        Int8Arg,
        UInt8Arg,
        Int16Arg,
        UInt16Arg,
        Float16Arg,
        BFloat16Arg,
        BoolArg,
    )
}


class PointerField(StrictModel):
    """A struct field holding the device address of a named buffer argument of the same case."""

    pointer: Id


class ArrayValues(StrictModel):
    type: Literal[SCALAR_TYPES]  # type: ignore[valid-type]
    values: list[Int | Float | StrictBool] = Field(min_length=1, max_length=MAX_ARRAY_VALUES)

    @model_validator(mode="after")
    def _values_of_the_type(self) -> ArrayValues:
        model = SCALAR_MODELS[self.type]
        for index, value in enumerate(self.values):
            try:
                model.model_validate({self.type: value})
            except ValidationError as error:
                reason = error.errors(include_url=False)[0]["msg"]
                raise ValueError(f"values[{index}] ({value!r}) is not a {self.type}: {reason}") from None
        return self


class ArrayField(StrictModel):
    """A fixed array in a struct: `{array: {type: float32, values: [1, 2, 3, 4]}}`."""

    array: ArrayValues


class StructArg(StrictModel):
    """A struct passed by value, its fields in order, laid out as C lays them out."""

    struct: list[StructField] = Field(min_length=1, max_length=1024)
    align: Literal[1, 2, 4, 8, 16, 32, 64, 128, 256] | None = Field(
        None, description="raise the struct's alignment, as alignas or __align__ does"
    )

    @model_validator(mode="after")
    def _bounded(self) -> StructArg:
        if _depth(self) > MAX_STRUCT_DEPTH:
            raise ValueError(f"structs nest at most {MAX_STRUCT_DEPTH} deep")
        if self.align is not None and self.align < natural_alignment(self):
            raise ValueError(
                f"align: {self.align} is below the struct's own alignment ({natural_alignment(self)});"
                " it can only raise it"
            )
        size = struct_layout(self).size
        if size > MAX_STRUCT_BYTES:
            raise ValueError(
                f"the struct is {size} bytes; a kernel's parameters are at most {MAX_STRUCT_BYTES}"
            )
        return self

    def pointers(self) -> list[str]:
        """The buffers its pointer fields name, nested structs' included."""
        found: list[str] = []
        for field in self.struct:
            if isinstance(field, PointerField):
                found.append(field.pointer)
            elif isinstance(field, StructArg):
                found += field.pointers()
        return found


def _depth(struct: StructArg) -> int:
    return 1 + max((_depth(f) for f in struct.struct if isinstance(f, StructArg)), default=0)


def _kind(value: Any, kinds: tuple[str, ...]) -> str | None:
    if isinstance(value, dict):
        return next((key for key in kinds if key in value), None)
    if isinstance(value, BaseModel):
        return next(iter(type(value).model_fields))
    return None


# The key that tells each kind of argument, and of struct field, apart (the tags of their unions).
ARGUMENT_KINDS = ("buffer", "use", "struct", *SCALAR_TYPES)
FIELD_KINDS = ("pointer", "array", "struct", *SCALAR_TYPES)


def _argument_kind(value: Any) -> str | None:
    return _kind(value, ARGUMENT_KINDS)


def _field_kind(value: Any) -> str | None:
    return _kind(value, FIELD_KINDS)


_SCALARS = "({int32: 5}, {float32: 0.5}; also uint32, int64, uint64, float64, int8, uint8, int16, uint16, float16, bfloat16, bool)"

TaggedScalar = (
    Annotated[Int32Arg, Tag("int32")]
    | Annotated[UInt32Arg, Tag("uint32")]
    | Annotated[Int64Arg, Tag("int64")]
    | Annotated[UInt64Arg, Tag("uint64")]
    | Annotated[Float32Arg, Tag("float32")]
    | Annotated[Float64Arg, Tag("float64")]
    | Annotated[Int8Arg, Tag("int8")]
    | Annotated[UInt8Arg, Tag("uint8")]
    | Annotated[Int16Arg, Tag("int16")]
    | Annotated[UInt16Arg, Tag("uint16")]
    | Annotated[Float16Arg, Tag("float16")]
    | Annotated[BFloat16Arg, Tag("bfloat16")]
    | Annotated[BoolArg, Tag("bool")]
)

StructField = Annotated[
    Annotated[PointerField, Tag("pointer")]
    | Annotated[ArrayField, Tag("array")]
    | Annotated[StructArg, Tag("struct")]
    | TaggedScalar,
    Discriminator(
        _field_kind,
        custom_error_type="field_kind",
        custom_error_message="a struct field is a scalar " + _SCALARS + ", {pointer: BUFFER_NAME}, "
        "{array: {type: float32, values: [...]}} or a nested {struct: [...]}",
    ),
]

Argument = Annotated[
    Annotated[BufferArg, Tag("buffer")]
    | Annotated[UseArg, Tag("use")]
    | Annotated[StructArg, Tag("struct")]
    | TaggedScalar,
    Discriminator(
        _argument_kind,
        custom_error_type="argument_kind",
        custom_error_message="an argument is a buffer ({buffer: float32, count: N, ...}) or one scalar "
        + _SCALARS
        + ", a struct ({struct: [{float32: 1.5}, {pointer: BUFFER_NAME}, ...]}),"
        " or in a step, an earlier step's buffer ({use: BUFFER_NAME})",
    ),
]

StructArg.model_rebuild()


# --- laying a struct out, as a C compiler does ------------------------------------------------------


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
