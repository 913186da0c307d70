"""A kernel's parameters as its cubin declares them: the size of each, in order, read from the ELF
section `.nv.info.<symbol>` (its EIATTR_KPARAM_INFO records), as cuobjdump -elf prints them. The cubin
is untrusted like everything the build reads: a record or a section out of bounds means "not known",
never a crash, and the check is then left to the launch."""

from __future__ import annotations

import struct
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

from ncuverify.errors import InputError
from ncuverify.layout import POINTER_BYTES, SCALAR_BYTES, struct_layout

if TYPE_CHECKING:  # the spec package imports the build's static facts: for types only
    from ncuverify.build.compile import KernelBuild
    from ncuverify.spec import CaseSpec, Spec

_ELF_MAGIC = b"\x7fELF"
_ELFCLASS64 = 2
_LITTLE_ENDIAN = 1
_FORMAT_SIZED = 0x04  # EIFMT_SVAL: a 16-bit size, then that many bytes
_FORMAT_HALF = 0x03  # EIFMT_HVAL: a 16-bit value
_FORMAT_BYTE = 0x02  # EIFMT_BVAL: an 8-bit value
_FORMAT_NONE = 0x01  # EIFMT_NVAL: none
_KPARAM_INFO = 0x17  # EIATTR_KPARAM_INFO: index (32 bits), ordinal (16), offset (16), flags (32)
_SIZE_SHIFT, _SIZE_MASK = 18, 0x3FFF  # a parameter's size in bytes, in the flags' top 14 bits
MAX_PARAMETERS = 4096  # far more than the 32 KiB of parameters a kernel may take in 8-byte pieces


# What each kind of argument puts in the kernel's parameter space (a struct: its C layout's size).
__all__ = ["POINTER_BYTES", "SCALAR_BYTES", "check_arguments", "parameter_sizes"]


def check_arguments(spec: Spec, builds: Mapping[str, KernelBuild]) -> None:
    """Refuse, before anything runs, a case whose arguments do not fit its kernel's parameters as the
    cubin declares them: too few, too many, or one of another size, where the launch would only fail
    or the kernel read a parameter from the wrong bytes. A kernel whose cubin does not say is left to
    its launch."""
    parameters = {name: parameter_sizes(build.cubin, build.symbol) for name, build in builds.items()}
    problems = []
    for name, case in spec.content.cases.items():
        sizes = parameters.get(case.kernel)  # read once per kernel: many cases may launch one
        if sizes is not None:
            problems += _case_problems(name, case, sizes)
    if problems:
        raise InputError("\n".join(f"{spec.path}: {problem}" for problem in problems))


def _case_problems(name: str, case: CaseSpec, sizes: tuple[int, ...]) -> list[str]:
    where = f"cases.{name}.args"
    # A buffer only a struct points to is no parameter; the others are the kernel's, in order.
    passed = [(index, arg) for index, arg in enumerate(case.args) if getattr(arg, "passed", True)]
    if len(passed) != len(sizes):
        count = f"{len(passed)} argument{'s' if len(passed) != 1 else ''}"
        return [f"{where}: {count}, but kernel {case.kernel} takes {len(sizes)} parameters"]
    problems = []
    for parameter, ((index, arg), size) in enumerate(zip(passed, sizes, strict=True)):
        kind, given = _argument(arg)
        if given != size:
            problems.append(
                f"{where}[{index}]: {kind} ({given} bytes), but parameter {parameter} of kernel {case.kernel}"
                f" is {size} bytes"
            )
    return problems


def _argument(arg: object) -> tuple[str, int]:
    """What an argument is, as a message names it, and how many bytes it passes."""
    buffer = getattr(arg, "buffer", None)
    if buffer is not None:
        return f"a {buffer} buffer, passed as a pointer", POINTER_BYTES
    from ncuverify.spec.arguments import StructArg, UseArg

    if isinstance(arg, UseArg):
        return f"buffer {arg.use} of an earlier step, passed as a pointer", POINTER_BYTES

    if isinstance(arg, StructArg):
        return "a struct", struct_layout(arg).size
    kind = next(kind for kind in SCALAR_BYTES if getattr(arg, kind, None) is not None)
    return f"an {kind}" if kind[0] in "aeiou" else f"a {kind}", SCALAR_BYTES[kind]


def parameter_sizes(cubin: bytes, symbol: str) -> tuple[int, ...] | None:
    """The size in bytes of each of the kernel's parameters, in order; None where the cubin does not
    say (another format, no such section, a damaged record)."""
    try:
        section = _section(cubin, f".nv.info.{symbol}".encode())
        if section is None:
            return None
        sizes: dict[int, int] = {}
        for attribute, value in _records(section):
            if attribute == _KPARAM_INFO and len(value) >= 12:
                ordinal = struct.unpack_from("<H", value, 4)[0]
                sizes[ordinal] = (struct.unpack_from("<I", value, 8)[0] >> _SIZE_SHIFT) & _SIZE_MASK
                if len(sizes) > MAX_PARAMETERS:
                    return None
    except struct.error:
        return None
    if sorted(sizes) != list(range(len(sizes))):
        return None  # ordinals with a gap: not a list this reader understands
    return tuple(sizes[ordinal] for ordinal in range(len(sizes)))


def _section(elf: bytes, name: bytes) -> bytes | None:
    """The contents of the 64-bit little-endian ELF section of that name, or None."""
    if elf[:6] != _ELF_MAGIC + bytes([_ELFCLASS64, _LITTLE_ENDIAN]):
        return None
    (header_offset,) = struct.unpack_from("<Q", elf, 0x28)
    entry_size, count, names_index = struct.unpack_from("<HHH", elf, 0x3A)
    if entry_size < 0x40 or names_index >= count or header_offset + count * entry_size > len(elf):
        return None
    headers = [_header(elf, header_offset + i * entry_size) for i in range(count)]
    names = _contents(elf, headers[names_index])
    for index in range(count):
        (name_at,) = struct.unpack_from("<I", elf, header_offset + index * entry_size)
        end = names.find(b"\0", name_at) if names is not None else -1
        if end >= 0 and names is not None and names[name_at:end] == name:
            return _contents(elf, headers[index])
    return None


def _header(elf: bytes, at: int) -> tuple[int, int]:
    """A section header's file offset and size."""
    offset, size = struct.unpack_from("<QQ", elf, at + 0x18)
    return offset, size


def _contents(elf: bytes, header: tuple[int, int]) -> bytes | None:
    """A section's bytes; None where its header points outside the file."""
    offset, size = header
    return elf[offset : offset + size] if offset + size <= len(elf) else None


def _records(section: bytes) -> Iterator[tuple[int, bytes]]:
    """The (attribute, value) records of an .nv.info section, in order."""
    at = 0
    while at + 2 <= len(section):
        form, attribute = section[at], section[at + 1]
        at += 2
        if form == _FORMAT_SIZED:
            (size,) = struct.unpack_from("<H", section, at)
            yield attribute, section[at + 2 : at + 2 + size]
            at += 2 + size
        elif form in (_FORMAT_HALF, _FORMAT_BYTE):  # a value of one or two bytes, in two
            yield attribute, section[at : at + 2]
            at += 2
        elif form == _FORMAT_NONE:
            yield attribute, b""
            at += 2
        else:
            return  # a format this reader does not know: what follows cannot be found
