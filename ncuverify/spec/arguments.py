"""A launch's arguments: device buffers and scalars, told apart by their one key."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Discriminator, Field, Tag, model_validator

from ncuverify.spec.fields import SCALAR_TYPES, DType, Float, Id, Int, StrictModel

FLOAT16_MAX = 65504.0  # the largest finite half-precision value


class BufferArg(StrictModel):
    """A device buffer: `{buffer: float32, count: 1024, fill: random, seed: 1, offset: 1}`."""

    buffer: DType
    count: Int = Field(ge=1, le=2**36, description="elements the kernel sees (after the offset)")
    fill: Literal["zeros", "constant", "iota", "random"] = "zeros"
    value: Float | None = Field(None, description="the value of a constant fill")
    seed: Int = Field(0, ge=0, le=2**64 - 1)
    offset: Int = Field(
        0, ge=0, le=2**36, description="elements between the allocation and the pointer passed"
    )
    name: Id | None = Field(
        None, description="read the buffer back after the launch, as buffer__NAME.mean etc."
    )

    @model_validator(mode="after")
    def _value_with_constant(self) -> BufferArg:
        if (self.fill == "constant") != (self.value is not None):
            raise ValueError("'value' goes with 'fill: constant', and only with it")
        return self


class Int32Arg(StrictModel):
    int32: Int = Field(ge=-(2**31), le=2**31 - 1)


class UInt32Arg(StrictModel):
    uint32: Int = Field(ge=0, le=2**32 - 1)


class Int64Arg(StrictModel):
    int64: Int = Field(ge=-(2**63), le=2**63 - 1)


class UInt64Arg(StrictModel):
    uint64: Int = Field(ge=0, le=2**64 - 1)


class Float32Arg(StrictModel):
    float32: Float


class Float64Arg(StrictModel):
    float64: Float


# Parameters of 1 and 2 bytes: char, bool, short, __half.
class Int8Arg(StrictModel):
    int8: Int = Field(ge=-(2**7), le=2**7 - 1)


class UInt8Arg(StrictModel):
    uint8: Int = Field(ge=0, le=2**8 - 1)


class Int16Arg(StrictModel):
    int16: Int = Field(ge=-(2**15), le=2**15 - 1)


class UInt16Arg(StrictModel):
    uint16: Int = Field(ge=0, le=2**16 - 1)


class Float16Arg(StrictModel):
    float16: Float = Field(ge=-FLOAT16_MAX, le=FLOAT16_MAX, description="a finite half-precision value")


def _argument_kind(value: Any) -> str | None:
    if isinstance(value, dict):
        for key in ("buffer", *SCALAR_TYPES):
            if key in value:
                return key
    if isinstance(value, BaseModel):
        return next(iter(type(value).model_fields))
    return None


Argument = Annotated[
    Annotated[BufferArg, Tag("buffer")]
    | Annotated[Int32Arg, Tag("int32")]
    | Annotated[UInt32Arg, Tag("uint32")]
    | Annotated[Int64Arg, Tag("int64")]
    | Annotated[UInt64Arg, Tag("uint64")]
    | Annotated[Float32Arg, Tag("float32")]
    | Annotated[Float64Arg, Tag("float64")]
    | Annotated[Int8Arg, Tag("int8")]
    | Annotated[UInt8Arg, Tag("uint8")]
    | Annotated[Int16Arg, Tag("int16")]
    | Annotated[UInt16Arg, Tag("uint16")]
    | Annotated[Float16Arg, Tag("float16")],
    Discriminator(
        _argument_kind,
        custom_error_type="argument_kind",
        custom_error_message="an argument is a buffer ({buffer: float32, count: N, ...}) "
        "or one scalar ({int32: 5}, {float32: 0.5}; also uint32, int64, uint64, float64, int8, uint8,"
        " int16, uint16, float16)",
    ),
]
