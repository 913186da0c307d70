"""A launch argument for each parameter of a kernel, from the parameter's C++ type as the demangled
signature writes it and its size as the cubin declares it: `float*` and `const float*` a float32
buffer, `int` an int32, `size_t` a uint64, `__half` a float16, `__nv_bfloat16` a bfloat16, `bool` a
uint8. A type with no argument of its own (a struct, a pointer to a struct) gets a placeholder of its
size, marked to be replaced: a scalar, or for a size no scalar has (a 16-byte struct by value) a struct
of that many zero bytes."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ncuverify.build.params import POINTER_BYTES, SCALAR_BYTES
from ncuverify.names import function_name
from ncuverify.spec.arguments import MAX_STRUCT_BYTES

# How many elements a starter buffer has: one per thread of the starter launch (block: 32).
BUFFER_COUNT = 32

# Element types of buffers, by the C++ type the pointer points to (qualifiers dropped).
BUFFER_TYPES = {
    "float": "float32",
    "double": "float64",
    "__half": "float16",
    "half": "float16",
    "__nv_bfloat16": "bfloat16",
    "nv_bfloat16": "bfloat16",
    "bool": "uint8",
    "char": "int8",
    "signed char": "int8",
    "unsigned char": "uint8",
    "short": "int16",
    "unsigned short": "uint16",
    "int": "int32",
    "unsigned int": "uint32",
    "unsigned": "uint32",
    "long": "int64",
    "unsigned long": "uint64",
    "long long": "int64",
    "unsigned long long": "uint64",
}
# Scalar arguments, by the parameter's C++ type: those of the buffers' element types that a scalar has
# too (size_t demangles as unsigned long).
SCALAR_TYPES = {cpp: kind for cpp, kind in BUFFER_TYPES.items() if kind in SCALAR_BYTES}
# A placeholder for a parameter of another type, by its size.
_BY_SIZE = {1: "uint8", 2: "uint16", 4: "uint32", 8: "uint64"}
_QUALIFIER = re.compile(r"\b(?:const|volatile|__restrict__|__restrict|restrict)\b")


@dataclass(frozen=True)
class Placeholder:
    """A parameter's starter argument as YAML flow text (None: no argument passes its size), what the
    parameter is, and whether the argument only stands in for a real one."""

    argument: str | None
    parameter: str  # its C++ type, or its size where the symbol does not say (extern "C")
    replace: bool


def parameter_types(signature: str) -> list[str] | None:
    """The parameters' C++ types, in order, from a demangled signature (`void f<int>(float*, int)` ->
    [`float*`, `int`]); None where the signature is only a symbol (extern "C" names carry no types)."""
    name = function_name(signature)
    start = signature.find(name + "(")
    if name == signature or start < 0 or not signature.endswith(")"):
        return None
    inside = signature[start + len(name) + 1 : -1].strip()
    if inside in ("", "void"):
        return []
    types, depth, begun = [], 0, 0
    for index, character in enumerate(inside):
        if character in "(<[":
            depth += 1
        elif character in ")>]":
            depth -= 1
        elif character == "," and depth == 0:
            types.append(inside[begun:index].strip())
            begun = index + 1
    return [*types, inside[begun:].strip()]


def placeholder(cpp_type: str | None, size: int) -> Placeholder:
    """The starter argument for a parameter of this type (None: not known) and size in bytes."""
    if cpp_type is None:
        return _unknown_type(size)
    bare = " ".join(_QUALIFIER.sub(" ", cpp_type).split())
    if "*" in bare and size == POINTER_BYTES:  # `float*`, and `float (*) [4]`, `void (*)(int)` too
        dtype = BUFFER_TYPES.get(bare[:-1].strip()) if bare.endswith("*") else None
        if dtype is not None:
            return Placeholder(_buffer(dtype), cpp_type, replace=False)
        return Placeholder(_buffer("uint8"), cpp_type, replace=True)
    kind = SCALAR_TYPES.get(bare)
    if kind is not None and SCALAR_BYTES[kind] == size:
        return Placeholder(f"{{{kind}: 0}}", cpp_type, replace=False)
    return _sized(cpp_type, size)


def _unknown_type(size: int) -> Placeholder:
    """A parameter whose type the symbol does not carry: 8 bytes is taken for a pointer, the most
    common parameter of a kernel, so that a launch gets memory it may touch."""
    described = f"{size} bytes"
    if size == POINTER_BYTES:
        return Placeholder(_buffer("float32"), described, replace=True)
    return _sized(described, size)


def _sized(parameter: str, size: int) -> Placeholder:
    """A scalar of the size; else (a struct by value: 12, 16, 24 bytes ...) a struct of zeros of the
    size, as an array of the widest integers that divide it: the kernel gets that many bytes."""
    kind = _BY_SIZE.get(size)
    if kind is not None:
        return Placeholder(f"{{{kind}: 0}}", parameter, replace=True)
    if not 0 < size <= MAX_STRUCT_BYTES:
        return Placeholder(None, parameter, replace=True)
    width = next(w for w in (8, 4, 2, 1) if size % w == 0)
    zeros = ", ".join(["0"] * (size // width))
    return Placeholder(
        f"{{struct: [{{array: {{type: {_BY_SIZE[width]}, values: [{zeros}]}}}}]}}", parameter, replace=True
    )


def _buffer(dtype: str) -> str:
    return f"{{buffer: {dtype}, count: {BUFFER_COUNT}}}"
