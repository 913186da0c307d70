"""A kernel of an expectation file: its source, its entry point and how to compile it."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

import re2
from pydantic import AfterValidator, BeforeValidator, Field, StrictBool, WithJsonSchema, model_validator

from ncuverify.expression.sass import linear_regex
from ncuverify.spec.fields import ARCH_PATTERN, MAX_ID_LENGTH, MAX_TEXT_LENGTH, Float, Int, StrictModel, Text
from ncuverify.spec.scalars import Yaml11Text, ambiguous

_MACRO = re.compile(r"[A-Za-z_][A-Za-z0-9_]*", re.ASCII)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


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
        raise ValueError(ambiguous(value))
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


def _inline_source(value: str) -> str:
    """NVRTC takes a program as a C string: a NUL would end it there, and what follows would be left
    out unseen."""
    if (at := value.find("\0")) >= 0:
        line = value.count("\n", 0, at) + 1
        raise ValueError(
            f"holds a NUL character (line {line} of the source): the compiler would read the source only"
            " up to it; remove it (write \\0 inside a string or character literal)"
        )
    return value


InlineSource = Annotated[
    str,
    AfterValidator(_inline_source),
    WithJsonSchema({"type": "string", "pattern": "^[^\\x00]*$"}),
]
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


# What only a compiler reads: refused on a kernel that is built already.
COMPILER_OPTIONS = frozenset({"defines", "include_dirs", "std", "flags", "max_registers", "lineinfo"})


def kernel_pattern(pattern: str) -> re2._Regexp:
    """A `match:` pattern, compiled (linear time: it runs over names that a pull request chose)."""
    return linear_regex(pattern, "kernel pattern", "kernel names")


def pattern_selects(pattern: str, signature: str, symbol: str) -> bool:
    """Whether a `match:` pattern selects a kernel: searched, as grep does, in its demangled signature
    or its symbol."""
    regex = kernel_pattern(pattern)
    return bool(regex.search(signature) or regex.search(symbol))


# nvcc compiles a whole program (host code, host headers); NVRTC only device code.
Compiler = Literal["nvrtc", "nvcc"]


class KernelSpec(StrictModel):
    """One kernel: where its source is, which entry point, and how to compile it."""

    file: Text | None = Field(None, description="a .cu file, relative to the expectation file")
    source: InlineSource | None = Field(None, description="inline CUDA C++ source")
    binary: Text | None = Field(
        None,
        description="a built artifact (cubin, fatbin, .o, .a, .so or executable), relative to the expectation file",
    )
    entry: str | None = Field(
        None,
        pattern=r"^[A-Za-z_][A-Za-z0-9_:]*(<.+>)?$",
        max_length=MAX_TEXT_LENGTH,
        description='an extern "C" name, a C++ function as written (transposeNaive, ns::copy), or a'
        " template instantiation such as copy_stride<32>",
    )
    match: Text | None = Field(
        None,
        description="instead of an entry, every kernel whose demangled signature this regular expression"
        " matches (searched, as grep does); claims name the set with `kernels:`, and cases cannot launch it",
    )
    defines: dict[MacroName, DefineValue] = Field(default_factory=dict)
    include_dirs: list[Text] = Field(default_factory=list, description="relative to the expectation file")
    arch: str | None = Field(None, pattern=ARCH_PATTERN, description="pin the target, e.g. sm_90")
    lineinfo: StrictBool = True
    std: Literal["c++11", "c++14", "c++17", "c++20"] = "c++17"
    max_registers: Int | None = Field(None, ge=1, le=255)
    flags: list[Text] = Field(
        default_factory=list, description="extra NVRTC options (nvcc options with nvcc)"
    )
    compiler: Compiler | None = Field(
        None, description="nvrtc (the default) or nvcc, which compiles host code too; else the file's own"
    )

    @model_validator(mode="after")
    def _one_source(self) -> KernelSpec:
        if [self.file, self.source, self.binary].count(None) != 2:
            if self.binary is None:
                raise ValueError("give exactly one of 'file' (a .cu path) or 'source' (inline code)")
            raise ValueError(
                "give exactly one of 'file' (a .cu path), 'source' (inline code) or 'binary' (a built artifact)"
            )
        if self.binary is not None and (given := sorted(COMPILER_OPTIONS & self.model_fields_set)):
            raise ValueError(
                f"{', '.join(given)}: only mean something to a compiler, and a 'binary' kernel is built already"
            )
        if (self.entry is None) == (self.match is None):
            raise ValueError("give exactly one of 'entry' (one kernel) or 'match' (every kernel it matches)")
        if self.match is not None:
            kernel_pattern(self.match)  # refused here with RE2's reason, before anything is built
        return self

    @property
    def is_template(self) -> bool:
        return self.entry is not None and "<" in self.entry
