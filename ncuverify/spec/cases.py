"""A case of an expectation file: one launch, its geometry and its arguments."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, WithJsonSchema, field_validator, model_validator

from ncuverify.spec.arguments import Argument, BufferArg, UseArg
from ncuverify.spec.fields import Id, Int, StrictModel
from ncuverify.spec.scalars import Yaml11Text, not_a_number

# Where a case has vars or a sweep, a number may be written as an expression over them (spec/variables).
EXPRESSION_SCHEMA = {
    "type": "string",
    "description": "with vars or sweep: an integer expression, e.g. n // 256",
}

# A number, or a list of 1 to 3: the validators below make it a triple.
Dim3 = Annotated[
    tuple[int, int, int],
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "integer", "minimum": 1},
                {"type": "array", "items": {"type": "integer", "minimum": 1}, "minItems": 1, "maxItems": 3},
            ]
        }
    ),
]
_VALUE = WithJsonSchema({"anyOf": [{"type": "integer"}, EXPRESSION_SCHEMA]})  # checked once computed


def _dim3(value: Any, what: str) -> Any:
    if isinstance(value, int) and not isinstance(value, bool):
        value = [value]
    for scalar in value if isinstance(value, list) else [value]:
        if isinstance(scalar, Yaml11Text):
            raise ValueError(not_a_number(scalar))
    if not isinstance(value, list | tuple) or not 1 <= len(value) <= 3:
        raise ValueError(f"{what} is a number or a list of 1 to 3 numbers, e.g. [32, 8]")
    if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in value):
        raise ValueError(f"every {what} dimension is a whole number of at least 1")
    return (*value, 1, 1)[:3]


class CaseSpec(StrictModel):
    """One launch: which kernel, its geometry and its arguments in order."""

    kernel: Id
    grid: Dim3
    block: Dim3
    shared_bytes: Int = Field(0, ge=0, le=227 * 1024, description="dynamic shared memory per block")
    args: list[Argument] = Field(default_factory=list)
    repeat: Int = Field(1, ge=1, le=100, description="launches to profile; the time is their median")
    vars: dict[Id, Annotated[Int, _VALUE]] = Field(
        default_factory=dict,
        description="names for numbers, used in expressions of grid, block, shared_bytes, repeat and args",
    )
    sweep: dict[Id, list[Annotated[Int, _VALUE]]] = Field(
        default_factory=dict,
        description="one case per value (per combination, for several): CASE__n_1024, with n among its vars",
    )

    @field_validator("grid", mode="before")
    @classmethod
    def _grid(cls, value: Any) -> Any:
        grid = _dim3(value, "grid")
        if grid[0] > 2**31 - 1 or grid[1] > 65535 or grid[2] > 65535:
            raise ValueError("grid is at most [2147483647, 65535, 65535]")
        return grid

    @field_validator("block", mode="before")
    @classmethod
    def _block(cls, value: Any) -> Any:
        block = _dim3(value, "block")
        if block[0] > 1024 or block[1] > 1024 or block[2] > 64:
            raise ValueError("block is at most [1024, 1024, 64]")
        if block[0] * block[1] * block[2] > 1024:
            raise ValueError(
                f"a block holds at most 1024 threads; {block} holds {block[0] * block[1] * block[2]}"
            )
        return block

    @model_validator(mode="after")
    def _unique_buffer_names(self) -> CaseSpec:
        names = [a.name for a in self.args if isinstance(a, BufferArg | UseArg) and a.name]
        if len(names) != len(set(names)):
            raise ValueError(f"buffer names repeat: {names}")
        return self

    @property
    def reads_back(self) -> bool:
        """Whether the runner reads a buffer back after the launch: one the case names."""
        return any(getattr(argument, "name", None) for argument in self.args)

    @property
    def threads(self) -> int:
        return self.grid[0] * self.grid[1] * self.grid[2] * self.block[0] * self.block[1] * self.block[2]
