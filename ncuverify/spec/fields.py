"""The field types the models share: ids, bounded texts, strict numbers, architectures."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictFloat, StrictInt, WithJsonSchema

from ncuverify import expression
from ncuverify.names import QualifiedCase
from ncuverify.spec.scalars import WrittenFloat, WrittenInt

DTYPES = (
    "int8",
    "uint8",
    "int16",
    "uint16",
    "int32",
    "uint32",
    "int64",
    "uint64",
    "float16",
    "bfloat16",  # held on the host as its bit patterns (numpy has no bfloat16): see npy_files
    "float32",
    "float64",
)
DType = Literal[DTYPES]  # type: ignore[valid-type]
SCALAR_TYPES = (
    "int32",
    "uint32",
    "int64",
    "uint64",
    "float32",
    "float64",
    "int8",
    "uint8",
    "int16",
    "uint16",
    "float16",
    "bfloat16",
    "bool",
)

ARCH_PATTERN = r"^(sm|compute)_\d{2,3}[af]?$"  # a build target: sm_90, sm_90a, compute_80
MAX_ID_LENGTH = 128
_ID = re.compile(expression.ID, re.ASCII)


def _id(value: str) -> str:
    """Kernel, case, claim and buffer names: exactly what `metric@case` can name in an expression."""
    if len(value) > MAX_ID_LENGTH:
        raise ValueError(f"an id is at most {MAX_ID_LENGTH} characters; this one has {len(value)}")
    if not _ID.fullmatch(value):
        raise ValueError(
            f"{value!r} is not an id: an id has only letters, digits and _, and does not start with a digit"
        )
    return value


Id = Annotated[
    str,
    AfterValidator(_id),
    WithJsonSchema({"type": "string", "pattern": f"^{expression.ID}$", "maxLength": MAX_ID_LENGTH}),
]


def _case_name(value: str) -> str:
    """An id, or a step of a case written with `steps` (`reduce#2`)."""
    try:
        identity = QualifiedCase.parse(value)
    except ValueError:
        return _id(value)
    if identity.launch is not None and not identity.repeats:
        _id(str(identity.without_launch()))
        return value
    return _id(value)


# A case as claims name it: an id, or a step of a launch sequence, `reduce#2`.
CaseName = Annotated[
    str,
    AfterValidator(_case_name),
    WithJsonSchema(
        {
            "type": "string",
            "pattern": f"^{expression.ID}(#[1-9][0-9]*)?$",
            "maxLength": MAX_ID_LENGTH + 4,
            "description": "a case, or a step of a case with steps: reduce#2",
        }
    ),
]


MAX_TEXT_LENGTH = 4096

# Where a number belongs, only a number: no boolean (lax pydantic reads true as 1), no text ("1024").
# A float field takes an int.
Int = StrictInt
Float = StrictFloat
Finite = Annotated[float, Field(strict=True, allow_inf_nan=False)]


def _bounded(value: str) -> str:
    """pydantic's own max_length refuses a lone surrogate as no text at all; len() counts it."""
    if len(value) > MAX_TEXT_LENGTH:
        raise ValueError(f"a text is at most {MAX_TEXT_LENGTH} characters here; this one has {len(value)}")
    return value


Text = Annotated[
    str, AfterValidator(_bounded), WithJsonSchema({"type": "string", "maxLength": MAX_TEXT_LENGTH})
]


class StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def as_text(value: Any) -> Any:
    """YAML reads `section: 2.2` as a number; a section or figure is text whatever it looks like, and
    the text is the one written (`section: 2.10`, not 2.1)."""
    if isinstance(value, WrittenInt | WrittenFloat):
        return value.text
    return str(value) if isinstance(value, int | float) and not isinstance(value, bool) else value
