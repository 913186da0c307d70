"""Stage 1: load an expectation file and validate it into typed values.

The YAML is read with PyYAML's safe composer and turned into plain values by hand, so that every value
keeps its line number (for error messages), duplicate keys are refused, plain scalars are typed as
YAML 1.2's core schema types them (not as YAML 1.1: 010 is not 8, yes is not true), and what reading
costs is bounded: the file's size, its nesting and its values once aliases are expanded. pydantic then
validates the shape, strictly where numbers belong; references between kernels, cases and claims are
checked last. The problems are reported together (the first MAX_PROBLEMS), each with the file, the
line and the field.
"""

from __future__ import annotations

import difflib
import functools
import itertools
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    Tag,
    ValidationError,
    WithJsonSchema,
    field_validator,
    model_validator,
)

from ncuverify import expression
from ncuverify.build.static import STATIC_METRICS, STATIC_PREFIX
from ncuverify.errors import InputError
from ncuverify.expression import CaseMetric, MetricRef
from ncuverify.files import CannotRead, NotRegular, TooLarge, read_plain
from ncuverify.measures import expand

# Bounds the work an expectation file can cause while it is read (aliases can expand exponentially).
MAX_YAML_NODES = 100_000

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
    "float32",
    "float64",
)
DType = Literal[DTYPES]  # type: ignore[valid-type]
SCALAR_TYPES = ("int32", "uint32", "int64", "uint64", "float32", "float64")

ARCH_PATTERN = r"^(sm|compute)_\d{2,3}[af]?$"  # a build target: sm_90, sm_90a, compute_80
_MACRO = re.compile(r"[A-Za-z_][A-Za-z0-9_]*", re.ASCII)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
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


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _as_text(value: Any) -> Any:
    """YAML reads `section: 2.2` as a number; a section or figure is text whatever it looks like, and
    the text is the one written (`section: 2.10`, not 2.1)."""
    if isinstance(value, _Int | _Float):
        return value.text
    return str(value) if isinstance(value, int | float) and not isinstance(value, bool) else value


# --- kernels ---------------------------------------------------------------------------------------------


def _macro_name(value: str) -> str:
    if len(value) > MAX_ID_LENGTH or not _MACRO.fullmatch(value):
        raise ValueError(
            f"{value[:MAX_ID_LENGTH]!r} is not a macro name: letters, digits and _, not first a digit, "
            f"at most {MAX_ID_LENGTH} characters"
        )
    return value


def _define_value(value: Any) -> Any:
    """A define takes text and numbers alike, so `N: 010` could mean the text 010, 8 or 10: say which."""
    if isinstance(value, Yaml11Text):
        raise ValueError(_ambiguous(value))
    if not isinstance(value, str | int | float | None):
        raise ValueError("a define's value is text, a number, true, false or null")
    if isinstance(value, str) and len(value) > MAX_TEXT_LENGTH:
        raise ValueError(
            f"a define's value is at most {MAX_TEXT_LENGTH} characters; this one has {len(value)}"
        )
    if isinstance(value, str) and _CONTROL.search(value):
        raise ValueError(
            "a define's value is one line: a newline in it would reach the compiler as a line of its own"
        )
    return value


MacroName = Annotated[
    str,
    AfterValidator(_macro_name),
    WithJsonSchema({"type": "string", "pattern": f"^{_MACRO.pattern}$", "maxLength": MAX_ID_LENGTH}),
]
DefineValue = Annotated[
    str | Int | Float | bool | None,
    BeforeValidator(_define_value),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "string", "pattern": "^[^\\x00-\\x1f\\x7f]*$", "maxLength": MAX_TEXT_LENGTH},
                {"type": ["number", "boolean", "null"]},
            ]
        }
    ),
]


class KernelSpec(_Strict):
    """One kernel: where its source is, which entry point, and how to compile it."""

    file: Text | None = Field(None, description="a .cu file, relative to the expectation file")
    source: str | None = Field(None, description="inline CUDA C++ source")
    entry: str = Field(
        pattern=r"^[A-Za-z_][A-Za-z0-9_:]*(<.+>)?$",
        max_length=MAX_TEXT_LENGTH,
        description='an extern "C" name, or a template instantiation such as copy_stride<32>',
    )
    defines: dict[MacroName, DefineValue] = Field(default_factory=dict)
    include_dirs: list[Text] = Field(default_factory=list, description="relative to the expectation file")
    arch: str | None = Field(None, pattern=ARCH_PATTERN, description="pin the target, e.g. sm_90")
    lineinfo: StrictBool = True
    std: Literal["c++11", "c++14", "c++17", "c++20"] = "c++17"
    max_registers: Int | None = Field(None, ge=1, le=255)
    flags: list[Text] = Field(default_factory=list, description="extra NVRTC options")

    @model_validator(mode="after")
    def _one_source(self) -> KernelSpec:
        if (self.file is None) == (self.source is None):
            raise ValueError("give exactly one of 'file' (a .cu path) or 'source' (inline code)")
        return self

    @property
    def is_template(self) -> bool:
        return "<" in self.entry


# --- cases -----------------------------------------------------------------------------------------------


class BufferArg(_Strict):
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


class Int32Arg(_Strict):
    int32: Int = Field(ge=-(2**31), le=2**31 - 1)


class UInt32Arg(_Strict):
    uint32: Int = Field(ge=0, le=2**32 - 1)


class Int64Arg(_Strict):
    int64: Int = Field(ge=-(2**63), le=2**63 - 1)


class UInt64Arg(_Strict):
    uint64: Int = Field(ge=0, le=2**64 - 1)


class Float32Arg(_Strict):
    float32: Float


class Float64Arg(_Strict):
    float64: Float


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
    | Annotated[Float64Arg, Tag("float64")],
    Discriminator(
        _argument_kind,
        custom_error_type="argument_kind",
        custom_error_message="an argument is a buffer ({buffer: float32, count: N, ...}) "
        "or one scalar ({int32: 5}, {float32: 0.5}; also uint32, int64, uint64, float64)",
    ),
]

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


def _dim3(value: Any, what: str) -> Any:
    if isinstance(value, int) and not isinstance(value, bool):
        value = [value]
    for scalar in value if isinstance(value, list) else [value]:
        if isinstance(scalar, Yaml11Text):
            raise ValueError(_not_a_number(scalar))
    if not isinstance(value, list | tuple) or not 1 <= len(value) <= 3:
        raise ValueError(f"{what} is a number or a list of 1 to 3 numbers, e.g. [32, 8]")
    if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in value):
        raise ValueError(f"every {what} dimension is a whole number of at least 1")
    return (*value, 1, 1)[:3]


class CaseSpec(_Strict):
    """One launch: which kernel, its geometry and its arguments in order."""

    kernel: Id
    grid: Dim3
    block: Dim3
    shared_bytes: Int = Field(0, ge=0, le=227 * 1024, description="dynamic shared memory per block")
    args: list[Argument] = Field(default_factory=list)
    repeat: Int = Field(1, ge=1, le=100, description="launches to profile; each metric is their median")

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
        names = [a.name for a in self.args if isinstance(a, BufferArg) and a.name]
        if len(names) != len(set(names)):
            raise ValueError(f"buffer names repeat: {names}")
        return self

    @property
    def threads(self) -> int:
        return self.grid[0] * self.grid[1] * self.grid[2] * self.block[0] * self.block[1] * self.block[2]


# --- claims ----------------------------------------------------------------------------------------------


_TEXT_OR_NUMBER = WithJsonSchema({"type": ["string", "number"], "maxLength": MAX_TEXT_LENGTH})


class Citation(_Strict):
    """Where a claim comes from: the document, its section and the figure it states."""

    document: Text
    section: Annotated[Text, _TEXT_OR_NUMBER]
    figure: Annotated[Text, _TEXT_OR_NUMBER] = Field(description="what the document states, in its words")
    value: Float | None = Field(None, description="the document's number, where it gives one")
    holds: Annotated[
        Literal["yes", "approximately", "no"],
        WithJsonSchema({"anyOf": [{"enum": ["yes", "approximately", "no"]}, {"type": "boolean"}]}),
    ] = Field("yes", description="whether the document's figure holds on the hardware")

    _text = field_validator("section", "figure", mode="before")(_as_text)

    @field_validator("holds", mode="before")
    @classmethod
    def _holds_words(cls, value: Any) -> Any:
        """true/false read as yes/no, and so do Yes, YES, No and NO, as YAML 1.1 read them."""
        if isinstance(value, bool):
            return "yes" if value else "no"
        if isinstance(value, str) and value in ("Yes", "YES", "No", "NO"):
            return value.lower()
        return str(value) if isinstance(value, str) else value


class Expectation(_Strict):
    """The assertion: exactly one of equals, at_least, at_most, between or approx (with rel or abs)."""

    equals: Finite | None = None
    at_least: Finite | None = None
    at_most: Finite | None = None
    between: tuple[Finite, Finite] | None = None
    approx: Finite | None = None
    rel: Finite | None = Field(None, gt=0)
    abs: Finite | None = Field(None, gt=0)

    @model_validator(mode="after")
    def _exactly_one(self) -> Expectation:
        given = [
            k for k in ("equals", "at_least", "at_most", "between", "approx") if getattr(self, k) is not None
        ]
        if len(given) != 1:
            raise ValueError("give exactly one of equals, at_least, at_most, between or approx")
        if self.approx is not None and (self.rel is None) == (self.abs is None):
            raise ValueError("approx needs exactly one tolerance: rel (a fraction) or abs")
        if self.approx is None and (self.rel is not None or self.abs is not None):
            raise ValueError("rel and abs go with approx only")
        if self.between is not None and self.between[0] > self.between[1]:
            raise ValueError(f"between needs low <= high, got {list(self.between)}")
        return self


class ExpectedFailure(_Strict):
    """A claim known not to hold (on some architectures), and why."""

    reason: Text
    arch: list[Annotated[str, Field(pattern=ARCH_PATTERN)]] | None = Field(
        None, min_length=1, description="where; all if absent"
    )


class Claim(_Strict):
    """One checkable statement about a case."""

    id: Id
    case: Id | None = Field(None, description="the case unqualified metric names are read from")
    metric: Annotated[str, _TEXT_OR_NUMBER] = Field(
        description="a metric name, a measure, or an expression over them"
    )
    expect: Expectation
    cite: Citation
    note: Text | None = Field(None, description="why the assertion differs from the document")
    control: Id | None = Field(None, description="a case on which the same assertion must fail")
    xfail: ExpectedFailure | None = None
    arch: list[Annotated[str, Field(pattern=ARCH_PATTERN)]] | None = Field(
        None, min_length=1, description="the architectures the claim is about; skipped on others"
    )

    _text = field_validator("metric", mode="before")(_as_text)

    @field_validator("metric")
    @classmethod
    def _parses(cls, value: str) -> str:
        expression.parse(value)
        return value

    @model_validator(mode="after")
    def _note_when_document_is_wrong(self) -> Claim:
        if self.cite.holds != "yes" and not self.note:
            raise ValueError(
                f"a claim whose document figure does not hold (cite.holds: {self.cite.holds}) needs a 'note'"
            )
        return self

    @functools.cached_property
    def expression(self) -> expression.Expr:
        """The metric as an expression over raw metrics (measures expanded); parsed once, as a claim is
        read at every stage and its metric may be 4096 characters long (the model is frozen)."""
        return expand(expression.parse(self.metric))

    def metric_refs(self) -> list[CaseMetric]:
        """The metrics this claim reads, each with its case made explicit."""
        return [CaseMetric(ref.name, self._case_of(ref)) for ref in expression.references(self.expression)]

    def _case_of(self, ref: MetricRef) -> str:
        case = ref.case or self.case
        assert case is not None  # validated: a claim without a case names one in every metric
        return case


class Tolerance(_Strict):
    """How much worse than the baseline a measure may get: a fraction (rel) or an amount (abs)."""

    rel: Float | None = Field(None, ge=0)
    abs: Float | None = Field(None, ge=0)

    @model_validator(mode="after")
    def _one(self) -> Tolerance:
        if (self.rel is None) == (self.abs is None):
            raise ValueError("give exactly one of rel (a fraction) or abs (an amount)")
        return self

    def allows(self, before: float, after: float) -> bool:
        """Whether going from before to after stays within the tolerance (upwards: larger is worse)."""
        limit = before * (1 + self.rel) if self.rel is not None else before + (self.abs or 0.0)
        return after <= limit


class ExpectationFile(_Strict):
    """The whole file, as validated."""

    arch: str | None = Field(None, pattern=ARCH_PATTERN, description="build target when no GPU can be asked")
    regressions: dict[Text, Tolerance] = Field(
        default_factory=dict, description="per measure, how much worse than a baseline is tolerated"
    )
    kernels: dict[Id, KernelSpec] = Field(min_length=1)
    cases: dict[Id, CaseSpec] = Field(min_length=1)
    claims: list[Claim] = Field(min_length=1)


@dataclass(frozen=True)
class Spec:
    """A loaded expectation file: its path and its validated content."""

    path: Path
    content: ExpectationFile

    @property
    def folder(self) -> Path:
        return self.path.parent

    @property
    def name(self) -> str:
        return self.path.name


# --- reading YAML ----------------------------------------------------------------------------------------

Location = tuple[str | int, ...]

# What reading one file may cost: its size, how deep its lists and mappings nest (PyYAML's composer
# recurses once a level) and, with MAX_YAML_NODES, how many values it holds once aliases are expanded.
MAX_FILE_BYTES = 4 * 1024 * 1024
MAX_KEY_LENGTH = MAX_TEXT_LENGTH
MAX_PROBLEMS = 20  # a file's problems shown at once; finding more could take long, and say no more
MAX_YAML_DEPTH = 64
MAX_NUMBER_LENGTH = 100

# Plain scalars are typed by YAML 1.2's core schema, not by PyYAML's YAML 1.1 resolver, which reads
# 010 as 8, 1:30 as 90 and yes as true. The loader tags every plain scalar so, and the reader types it.
_PLAIN_TAG = "tag:ncuverify,2025:plain"
_STR_TAG = "tag:yaml.org,2002:str"
_NULL = re.compile(r"~|null|Null|NULL|")
_TRUE = re.compile(r"true|True|TRUE")
_FALSE = re.compile(r"false|False|FALSE")
_DECIMAL = re.compile(r"[-+]?[0-9]+")
_LEADING_ZERO = re.compile(r"[-+]?0[0-9]+")  # octal in YAML 1.1, decimal in 1.2: refused as a number
_OCTAL = re.compile(r"0o[0-7]+")
_HEXADECIMAL = re.compile(r"0x[0-9a-fA-F]+")
_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")
_INFINITY = re.compile(r"[-+]?\.(?:inf|Inf|INF)")
_NAN = re.compile(r"\.(?:nan|NaN|NAN)")
_YAML11_TAGS = {f"tag:yaml.org,2002:{kind}" for kind in ("bool", "int", "float")}


class _Int(int):
    """An int read from YAML, with its text as written, for the fields that are text (`section: 2.10`)."""

    text: str

    def __new__(cls, value: int, text: str) -> _Int:
        number = super().__new__(cls, value)
        number.text = text
        return number


class _Float(float):
    """A float read from YAML, with its text as written."""

    text: str

    def __new__(cls, value: float, text: str) -> _Float:
        number = super().__new__(cls, value)
        number.text = text
        return number


class Yaml11Text(str):
    """A plain scalar YAML 1.2 reads as text and YAML 1.1 as something else (reading: what, or None where
    only the leading zero of a number differs). It is text where text belongs and refused, saying why,
    where a number or a boolean does."""

    reading: bool | int | float | None

    def __new__(cls, text: str, reading: bool | int | float | None) -> Yaml11Text:
        scalar = super().__new__(cls, text)
        scalar.reading = reading
        return scalar


def _plain_scalar(text: str, line: int) -> Any:
    """A plain scalar typed as YAML 1.2's core schema types it."""
    if _NULL.fullmatch(text):
        return None
    if _TRUE.fullmatch(text) or _FALSE.fullmatch(text):
        return text[0] in "tT"
    if len(text) > MAX_NUMBER_LENGTH and any(
        form.fullmatch(text) for form in (_DECIMAL, _OCTAL, _HEXADECIMAL)
    ):
        raise InputError(f"line {line}: a number of {len(text)} characters is longer than ncuverify reads")
    if _LEADING_ZERO.fullmatch(text):
        return Yaml11Text(text, _yaml11_reading(text))
    if _DECIMAL.fullmatch(text):
        return _Int(int(text), text)
    if _OCTAL.fullmatch(text) or _HEXADECIMAL.fullmatch(text):
        return _Int(int(text[2:], 8 if text[1] == "o" else 16), text)
    if _INFINITY.fullmatch(text):
        return _Float(float("-inf") if text[0] == "-" else float("inf"), text)
    if _NAN.fullmatch(text):
        return _Float(float("nan"), text)
    if _FLOAT.fullmatch(text):
        return _Float(float(text), text)
    reading = _yaml11_reading(text)
    return text if reading is None else Yaml11Text(text, reading)


def _yaml11_reading(text: str) -> bool | int | float | None:
    """What PyYAML's YAML 1.1 resolver makes of a plain scalar, where that is a boolean or a number."""
    if text in ("y", "Y", "n", "N"):  # booleans in YAML 1.1 itself, though PyYAML reads them as text
        return text in "yY"
    if len(text) > 64:
        return None
    tag = yaml.resolver.Resolver().resolve(yaml.ScalarNode, text, (True, False))
    if tag not in _YAML11_TAGS:
        return None
    try:
        value = yaml.constructor.SafeConstructor().construct_object(yaml.ScalarNode(tag, text))
    except (ValueError, yaml.YAMLError):
        return None
    return value if isinstance(value, bool | int | float) else None


def _yaml11_described(scalar: Yaml11Text) -> tuple[str, str]:
    """What YAML 1.1 would read the scalar as, and what to write instead."""
    value = scalar.reading
    if isinstance(value, bool):
        return ("true" if value else "false"), "a number"
    if value is None:  # a leading zero YAML 1.1 does not read as octal (09)
        return "text: a leading 0 means octal", str(int(scalar))
    if _LEADING_ZERO.fullmatch(scalar):
        return f"octal {value}", f"{value} or {int(scalar)}"
    kind = "binary " if "0b" in scalar else "sexagesimal " if ":" in scalar else ""
    return f"{kind}{value}", str(value)


def _not_a_number(scalar: Yaml11Text) -> str:
    reading, instead = _yaml11_described(scalar)
    return f"{scalar} is not a number here (YAML 1.1 would read it as {reading}): write {instead}"


def _not_a_boolean(scalar: Yaml11Text) -> str | None:
    if not isinstance(scalar.reading, bool):
        return None
    word = "true" if scalar.reading else "false"
    return f"{scalar} is not a boolean here (YAML 1.1 would read it as {word}): write {word}"


def _ambiguous(scalar: Yaml11Text) -> str:
    """For a field that takes text and numbers alike: which one the author meant is not known."""
    reading, instead = _yaml11_described(scalar)
    if isinstance(scalar.reading, bool):
        instead = reading
    return (
        f"{scalar} is read differently by YAML 1.1 ({reading}) and YAML 1.2: write {instead}, "
        f"or '{scalar}' in quotes for the text"
    )


@dataclass
class _YamlReader:
    """Turns composed YAML nodes into plain values, remembering the line of every value."""

    lines: dict[Location, int]
    budget: int = MAX_YAML_NODES

    def value(self, node: yaml.Node, where: Location, depth: int = 0) -> Any:
        self._spend()
        line = node.start_mark.line + 1
        if depth > MAX_YAML_DEPTH:  # an alias can nest what the text does not
            raise InputError(
                f"line {line}: lists and mappings nest deeper than {MAX_YAML_DEPTH} levels once aliases are expanded"
            )
        self.lines.setdefault(where, line)
        if isinstance(node, yaml.MappingNode):
            self._plain(node, "map", line)
            return self._mapping(node, where, depth)
        if isinstance(node, yaml.SequenceNode):
            self._plain(node, "seq", line)
            return [self.value(item, (*where, i), depth + 1) for i, item in enumerate(node.value)]
        if node.tag == _PLAIN_TAG:
            return _plain_scalar(node.value, line)
        if node.tag == _STR_TAG:
            return node.value
        raise InputError(f"line {line}: the tag {node.tag} is not allowed")

    def _spend(self) -> None:
        self.budget -= 1
        if self.budget < 0:
            raise InputError(
                f"more than {MAX_YAML_NODES} values once aliases are expanded; refusing to read on"
            )

    @staticmethod
    def _plain(node: yaml.Node, kind: str, line: int) -> None:
        """Only plain mappings and lists: a tag such as !!python/object is refused, not ignored."""
        if node.tag != f"tag:yaml.org,2002:{kind}":
            raise InputError(f"line {line}: the tag {node.tag} is not allowed")

    def _mapping(self, node: yaml.MappingNode, where: Location, depth: int) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for key_node, value_node in node.value:
            key = self._key(key_node)
            if key in result:
                raise InputError(f"line {key_node.start_mark.line + 1}: duplicate key {key!r}")
            self.lines[(*where, key)] = key_node.start_mark.line + 1
            result[key] = self.value(value_node, (*where, key), depth + 1)
        return result

    def _key(self, node: yaml.Node) -> str:
        """A key is text as written: `010:` is the key '010'."""
        self._spend()
        line = node.start_mark.line + 1
        if not isinstance(node, yaml.ScalarNode):
            raise InputError(f"line {line}: a key must be plain text")
        if node.tag not in (_PLAIN_TAG, _STR_TAG):
            raise InputError(f"line {line}: the tag {node.tag} is not allowed")
        if len(node.value) > MAX_KEY_LENGTH:
            raise InputError(
                f"line {line}: a key of {len(node.value)} characters is longer than any ncuverify reads"
            )
        if node.value == "<<" and node.tag == _PLAIN_TAG:
            raise InputError(
                f"line {line}: '<<' merges mappings in YAML 1.1 only, and ncuverify reads YAML 1.2: write the keys out"
            )
        return str(node.value)


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader, used only to compose nodes: the reader types plain scalars (YAML 1.2), and
    nesting and size are bounded here, while composing, before the composer's recursion can overflow."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.depth = 0
        self.nodes = 0

    def resolve(self, kind: type[yaml.Node], value: str | None, implicit: Any) -> str:
        if kind is yaml.ScalarNode and implicit[0]:
            return _PLAIN_TAG
        return super().resolve(kind, value, implicit)

    def _composed(self, parent: yaml.Node | None, index: Any) -> yaml.Node:
        node = super().compose_node(parent, index)
        assert node is not None  # called only where an event starts a node
        return node

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node:
        line = self.peek_event().start_mark.line + 1
        self.nodes += 1
        if self.nodes > MAX_YAML_NODES:
            raise InputError(f"line {line}: more than {MAX_YAML_NODES} values; refusing to read on")
        if not self.check_event(yaml.SequenceStartEvent, yaml.MappingStartEvent):
            return self._composed(parent, index)
        self.depth += 1
        if self.depth > MAX_YAML_DEPTH:
            raise InputError(f"line {line}: lists and mappings nest deeper than {MAX_YAML_DEPTH} levels")
        try:
            return self._composed(parent, index)
        finally:
            self.depth -= 1


def read_yaml(text: str) -> tuple[Any, dict[Location, int]]:
    """Parse YAML safely into plain values and a map from each value's location to its line."""
    loader = None
    try:
        loader = _Loader(text)  # checks the characters as it starts: a bad one raises here
        root = loader.get_single_node()
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        raise InputError(f"{where}not valid YAML: {error.problem}") from None
    except yaml.YAMLError as error:
        raise InputError(f"not valid YAML: {' '.join(str(error).split())}") from None
    finally:
        if loader is not None:
            loader.dispose()
    if root is None:
        raise InputError("the file is empty")
    lines: dict[Location, int] = {}
    return _YamlReader(lines).value(root, ()), lines


def read_text(path: Path) -> str:
    """The text of an expectation file: a regular file inside its project, of at most MAX_FILE_BYTES."""
    root = project_root(path.parent)
    if path.exists() and not path.resolve().is_relative_to(root):
        raise InputError(f"{path}: links to {path.resolve()}, outside the project ({root})")
    try:
        data = read_plain(path, MAX_FILE_BYTES)
    except CannotRead as problem:
        if isinstance(problem.error, FileNotFoundError):
            raise InputError(f"{path}: no such expectation file") from None
        raise InputError(f"{path}: cannot read it ({problem.error.strerror})") from None
    except NotRegular:
        raise InputError(f"{path}: not a regular file") from None
    except TooLarge:
        raise InputError(f"{path}: larger than {MAX_FILE_BYTES} bytes (4 MiB); refusing to read it") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(f"{path}: cannot read it ({error})") from None


def load(path: Path) -> Spec:
    """Read and validate an expectation file; raise InputError naming every problem with its line."""
    text = read_text(path)
    try:
        data, lines = read_yaml(text)
    except InputError as error:
        raise InputError(f"{path}: {error}") from None
    if not isinstance(data, dict):
        raise InputError(f"{path}:1: the file must be a mapping with kernels, cases and claims")
    try:
        content = ExpectationFile.model_validate(data)
    except ValidationError as error:
        raise InputError(_describe(path, lines, _pydantic_problems(error))) from None
    found = itertools.chain(_reference_problems(content), _path_problems(content, path.parent))
    problems = list(itertools.islice(found, MAX_PROBLEMS + 1))  # found lazily: no more than are shown
    if problems:
        raise InputError(_describe(path, lines, problems))
    return Spec(path=path, content=content)


# --- messages --------------------------------------------------------------------------------------------

_ALL_FIELDS = sorted(
    {
        name
        for model in (
            ExpectationFile,
            KernelSpec,
            CaseSpec,
            BufferArg,
            Claim,
            Citation,
            Expectation,
            ExpectedFailure,
        )
        for name in model.model_fields
    }
    | set(SCALAR_TYPES)
)


def _pydantic_problems(error: ValidationError) -> Iterator[tuple[Location, str]]:
    """Each error pydantic found, as the file's location and a message; lazily, as only a few are shown."""
    for item in error.errors(include_url=False):
        # Union tags and validator names appear in loc; they are not keys of the file.
        where = _file_location(item["loc"])
        message = item["msg"].removeprefix("Value error, ")
        if item["type"] == "extra_forbidden" and where:
            key = str(where[-1])
            close = difflib.get_close_matches(key, _ALL_FIELDS, n=1)
            message = f"unknown key {key!r}" + (f" (did you mean {close[0]!r}?)" if close else "")
        elif item["type"] == "missing" and where:
            message = f"missing: {where[-1]!r} is required"
        elif item["type"] == "too_short" and where and where[-1] == "arch":
            outcome = "be expected to fail nowhere" if "xfail" in where else "never be judged"
            message = (
                f"[] names no architecture, so the claim would {outcome}: name one, or leave arch out for all"
            )
        else:
            message = _scalar_problem(item["type"], item.get("input")) or message
        yield where, message


_NUMBER_ERRORS = ("int_type", "float_type")


def _scalar_problem(error_type: str, given: Any) -> str | None:
    """Why a scalar is not the number or boolean its field takes, where YAML explains it."""
    if isinstance(given, Yaml11Text):
        if error_type in _NUMBER_ERRORS:
            return _not_a_number(given)
        if error_type == "bool_type":
            return _not_a_boolean(given)
    elif isinstance(given, str) and error_type in _NUMBER_ERRORS:
        if any(form.fullmatch(given) for form in (_DECIMAL, _OCTAL, _HEXADECIMAL, _FLOAT)):
            return f"{given!r} is quoted, so it is text: write {given} without quotes for the number"
    elif isinstance(given, _Float) and error_type == "int_type" and given.is_integer():
        return f"{given.text} is not written as a whole number: write {int(given)}"
    return None


_UNION_TAGS = ("buffer", *SCALAR_TYPES)
_TYPE_NAMES = ("str", "int", "float", "bool", "none")  # union members pydantic names in a location


def _file_location(loc: tuple[str | int, ...]) -> Location:
    """pydantic's loc, less the union tags and type names it adds, which are not keys of the file."""
    where: list[str | int] = []
    for index, part in enumerate(loc):
        is_last = index == len(loc) - 1
        after_index = index > 0 and isinstance(loc[index - 1], int)
        if isinstance(part, str) and not is_last and after_index and part in _UNION_TAGS:
            continue
        if isinstance(part, str) and part in _TYPE_NAMES and index > 0:
            continue
        if part == "[key]":  # a mapping's key was wrong: the key's own location names it
            continue
        where.append(part)
    return tuple(where)


def _describe(path: Path, lines: dict[Location, int], problems: Iterable[tuple[Location, str]]) -> str:
    rendered: dict[str, None] = {}
    for where, message in problems:
        if len(rendered) == MAX_PROBLEMS:
            return "\n".join([*rendered, f"{path}: and more problems; these are the first {MAX_PROBLEMS}"])
        line = _line_of(lines, where)
        field = _field_name(where)
        rendered.setdefault(f"{path}:{line}: {field + ': ' if field else ''}{message}")
    return "\n".join(rendered)


def _line_of(lines: dict[Location, int], where: Location) -> int:
    for end in range(len(where), -1, -1):
        if where[:end] in lines:
            return lines[where[:end]]
    return 1


def _field_name(where: Location) -> str:
    text = ""
    for part in where:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


# difflib compares a name with every candidate, at a cost that grows with their lengths: bounded both.
_SUGGEST_AMONG = 256
_SUGGEST_LENGTH = 64


def _suggest(name: str, known: Iterable[str]) -> str:
    candidates = [candidate for candidate in known if len(candidate) <= _SUGGEST_LENGTH]
    if len(name) > _SUGGEST_LENGTH or len(candidates) > _SUGGEST_AMONG:
        return ""
    close = difflib.get_close_matches(name, candidates, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _reference_problems(content: ExpectationFile) -> Iterable[tuple[Location, str]]:
    for case_name, case in content.cases.items():
        if case.kernel not in content.kernels:
            yield (
                ("cases", case_name, "kernel"),
                f"no kernel named {case.kernel!r}{_suggest(case.kernel, content.kernels)}",
            )
    seen: dict[str, int] = {}
    for index, claim in enumerate(content.claims):
        if claim.id in seen:
            yield (
                ("claims", index, "id"),
                f"duplicate claim id {claim.id!r} (also claims[{seen[claim.id]}])",
            )
        seen.setdefault(claim.id, index)
        if claim.case is not None and claim.case not in content.cases:
            yield (
                ("claims", index, "case"),
                f"no case named {claim.case!r}{_suggest(claim.case, content.cases)}",
            )
        yield from _control_problems(content, index, claim)
        for ref in expression.references(claim.expression):
            if ref.name.startswith(STATIC_PREFIX) and ref.name not in STATIC_METRICS:
                known = ", ".join(sorted(STATIC_METRICS))
                yield (
                    ("claims", index, "metric"),
                    f"no static fact {ref.name}{_suggest(ref.name, STATIC_METRICS)}; known: {known}",
                )
            if ref.name.startswith(BUFFER_PREFIX):
                yield from _buffer_problems(content, index, ref.name, ref.case or claim.case)
            if ref.case is None and claim.case is None:
                yield (
                    ("claims", index, "metric"),
                    f"{ref.name} names no case: set the claim's 'case' or write {ref.name}@CASE",
                )
            elif ref.case is not None and ref.case not in content.cases:
                yield (
                    ("claims", index, "metric"),
                    f"no case named {ref.case!r}{_suggest(ref.case, content.cases)}",
                )


BUFFER_PREFIX = "buffer__"
BUFFER_STATISTICS = ("first", "sum", "mean", "min", "max", "median")


def buffer_metric(name: str) -> tuple[str, str] | None:
    """`buffer__cycles.mean` -> ("cycles", "mean"); None for other names."""
    if not name.startswith(BUFFER_PREFIX):
        return None
    buffer, _, statistic = name.removeprefix(BUFFER_PREFIX).partition(".")
    return buffer, statistic


def _buffer_problems(
    content: ExpectationFile, index: int, name: str, case: str | None
) -> Iterable[tuple[Location, str]]:
    buffer, statistic = buffer_metric(name) or ("", "")
    where = ("claims", index, "metric")
    if statistic not in BUFFER_STATISTICS:
        yield (
            where,
            f"{name}: say which statistic of the buffer: {', '.join(BUFFER_PREFIX + buffer + '.' + s for s in BUFFER_STATISTICS)}",
        )
    if case is None or case not in content.cases:
        return
    named = [a.name for a in content.cases[case].args if isinstance(a, BufferArg) and a.name]
    if buffer not in named:
        yield (
            where,
            f"case {case} has no buffer named {buffer!r}{_suggest(buffer, named)} (give a buffer `name:` to read it back)",
        )


def _control_problems(content: ExpectationFile, index: int, claim: Claim) -> Iterable[tuple[Location, str]]:
    if claim.control is None:
        return
    where = ("claims", index, "control")
    if claim.control not in content.cases:
        yield (where, f"no case named {claim.control!r}{_suggest(claim.control, content.cases)}")
    elif claim.control == claim.case:
        yield (where, "the control must be another case than the claim's own")
    elif all(ref.case is not None for ref in expression.references(expression.parse(claim.metric))):
        yield (where, "every metric names its case with @, so nothing would be read from the control")


# A folder holding one of these is the root of a project: expectation files reach no file above it.
PROJECT_MARKERS = (".git", "pyproject.toml", ".ncuverify-root")


def project_root(folder: Path) -> Path:
    """The nearest folder at or above the expectation file's that marks a project; else its own. Found
    along the path as written, then resolved: a folder that links out of the project leaves it."""
    folder = Path(os.path.abspath(folder))
    for candidate in (folder, *folder.parents):
        if any((candidate / marker).exists() for marker in PROJECT_MARKERS):
            return candidate.resolve()
    return folder.resolve()


def _path_problems(content: ExpectationFile, folder: Path) -> Iterable[tuple[Location, str]]:
    root = project_root(folder)
    for name, kernel in content.kernels.items():
        # Include folders are checked by the build, which knows the folders --allow-include adds.
        if kernel.file is None:
            continue
        where = ("kernels", name, "file")
        resolved = (folder / kernel.file).resolve()
        if not resolved.is_relative_to(root):
            yield (
                where,
                f"{kernel.file} lies outside the project ({root}); kernels and includes must be inside it",
            )
        elif not resolved.is_file():
            yield (where, f"no such file: {kernel.file} (looked in {folder})")


SCHEMA_ID = "https://ncuverify.dev/schema/expectations.schema.json"


def json_schema() -> dict[str, Any]:
    """The JSON Schema of expectation files, from the model, for editors with a YAML language server."""
    schema = _keys_as_property_names(ExpectationFile.model_json_schema())
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "ncuverify expectation file",
        **schema,
    }


def _keys_as_property_names(schema: Any) -> Any:
    """pydantic writes a mapping whose keys have a pattern as patternProperties, which lets a key that
    does not match (a case named a-b) pass unflagged; propertyNames flags it."""
    if isinstance(schema, list):
        return [_keys_as_property_names(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    schema = {key: _keys_as_property_names(value) for key, value in schema.items()}
    patterns = schema.get("patternProperties")
    if isinstance(patterns, dict) and len(patterns) == 1:
        ((pattern, values),) = patterns.items()
        del schema["patternProperties"]
        schema["additionalProperties"] = values
        schema["propertyNames"] = {**schema.get("propertyNames", {}), "pattern": pattern}
    return schema
