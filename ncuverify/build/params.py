"""A kernel's parameters as its cubin declares them: the size of each, in order, read from the ELF
section `.nv.info.<symbol>` (its EIATTR_KPARAM_INFO or _V2 records), as cuobjdump -elf prints them. The cubin
is untrusted like everything the build reads: a record or a section out of bounds means "not known",
never a crash, and the check is then left to the launch; more sections or records than the bounds are
an InputError. Its section table is read once however many of its kernels are asked about."""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING

from ncuverify.build.artifacts_elf import (
    INFO_BYTE,
    INFO_HALF,
    INFO_NONE,
    INFO_SIZED,
    Section,
    TooLarge,
    info_records,
    section_name,
    sections,
)
from ncuverify.errors import InputError
from ncuverify.layout import POINTER_BYTES, SCALAR_BYTES

if TYPE_CHECKING:
    from ncuverify.build.built import KernelBuild
    from ncuverify.spec import CaseSpec, Spec

_ELF_MAGIC = b"\x7fELF"
_ELFCLASS64 = 2
_LITTLE_ENDIAN = 1
_INFO_PREFIX = b".nv.info."  # and the kernel's symbol: the section of its attributes
_KPARAM_INFO = 0x17  # EIATTR_KPARAM_INFO: index (32 bits), ordinal (16), offset (16), flags (32)
_SIZE_SHIFT, _SIZE_MASK = 18, 0x3FFF  # a parameter's size in bytes, in the flags' top 14 bits
# EIATTR_KPARAM_INFO_V2, in place of the above in a kernel of more than 4 KiB of parameters: the same
# fields, but the size in the last 32 bits' low 16 (the pointee's alignment and space above them).
_KPARAM_INFO_V2 = 0x45
_V2_SIZE_MASK = 0xFFFF
MAX_PARAMETERS = 32_768  # a kernel's parameters take at most 32 KiB (32_764 bytes), each a byte at least
# .nv.info records read in one cubin, its kernels' together: 48_000 measured in a cubin of 4000 kernels
# (12 a kernel), 8_012 for a kernel of 8000 int parameters.
MAX_INFO_RECORDS = 1_000_000


# What each kind of argument puts in the kernel's parameter space (a struct: its C layout's size).
__all__ = ["POINTER_BYTES", "SCALAR_BYTES", "check_arguments", "kernel_parameters", "parameter_sizes"]


def check_arguments(spec: Spec, builds: Mapping[str, KernelBuild]) -> None:
    """Refuse, before anything runs, a case whose arguments do not fit its kernel's parameters as the
    cubin declares them: too few, too many, or one of another size, where the launch would only fail
    or the kernel read a parameter from the wrong bytes. A kernel whose cubin does not say is left to
    its launch."""
    parameters = _parameters(spec, builds)
    problems = []
    for name, case in spec.content.cases.items():
        sizes = parameters.get(case.kernel)  # read once per kernel: many cases may launch one
        if sizes is not None:
            problems += _case_problems(name, case, sizes)
    if problems:
        raise InputError("\n".join(f"{spec.path}: {problem}" for problem in problems))


def _parameters(spec: Spec, builds: Mapping[str, KernelBuild]) -> dict[str, tuple[int, ...] | None]:
    """Each kernel's parameters' sizes, by its name in the file, each cubin read once for all its
    kernels (the kernels of one artifact share it)."""
    by_cubin: dict[bytes, list[str]] = {}
    for name, build in builds.items():
        by_cubin.setdefault(build.cubin, []).append(name)
    found: dict[str, tuple[int, ...] | None] = {}
    for cubin, names in by_cubin.items():
        label = f"{spec.path}: kernels.{names[0]}"
        sizes = kernel_parameters(cubin, (builds[name].symbol for name in names), label)
        found.update({name: sizes[builds[name].symbol] for name in names})
    return found


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
    from ncuverify.spec.arguments import StructArg, UseArg, struct_layout

    if isinstance(arg, UseArg):
        return f"buffer {arg.use} of an earlier step, passed as a pointer", POINTER_BYTES

    if isinstance(arg, StructArg):
        return "a struct", struct_layout(arg).size
    kind = next(kind for kind in SCALAR_BYTES if getattr(arg, kind, None) is not None)
    return f"an {kind}" if kind[0] in "aeiou" else f"a {kind}", SCALAR_BYTES[kind]


def parameter_sizes(cubin: bytes, symbol: str) -> tuple[int, ...] | None:
    """The size in bytes of each of the kernel's parameters, in order; None where the cubin does not
    say (another format, no such section, a damaged record). kernel_parameters reads many at once."""
    return kernel_parameters(cubin, [symbol])[symbol]


def kernel_parameters(
    cubin: bytes, symbols: Iterable[str], label: str = "a cubin"
) -> dict[str, tuple[int, ...] | None]:
    """parameter_sizes of each kernel, by its symbol, the cubin's section table read once; InputError
    naming label where it holds more sections, or its kernels more .nv.info records, than the bounds."""
    wanted = list(dict.fromkeys(symbols))
    try:
        info = _info_sections(cubin)
    except TooLarge as error:
        raise InputError(f"{label}: {error}; refusing to read it") from None
    except (struct.error, ValueError):
        return dict.fromkeys(wanted)
    found: dict[str, tuple[int, ...] | None] = {}
    read = 0  # records, all the kernels' together
    for symbol in wanted:
        section = info.get(_INFO_PREFIX + symbol.encode())
        if section is None:
            found[symbol] = None
            continue
        found[symbol], records = _sizes(
            cubin[section.offset : section.offset + section.size], MAX_INFO_RECORDS - read
        )
        read += records
        if read > MAX_INFO_RECORDS:
            raise InputError(
                f"{label}: its kernels' .nv.info sections hold more than {MAX_INFO_RECORDS} records;"
                " refusing to read them"
            )
    return found


def _info_sections(elf: bytes) -> dict[bytes, Section]:
    """The cubin's .nv.info.<symbol> sections by name (the first of a name); ValueError where it is no
    64-bit little-endian ELF or its section names' table is not among its sections."""
    if elf[:6] != _ELF_MAGIC + bytes([_ELFCLASS64, _LITTLE_ENDIAN]):
        raise ValueError("not a 64-bit little-endian ELF")
    every = sections(elf)
    (names_index,) = struct.unpack_from("<H", elf, 0x3E)
    if names_index >= len(every):
        raise ValueError("no section names")
    found: dict[bytes, Section] = {}
    for section in every:
        name = section_name(elf, every[names_index], section)
        if name is not None and name.startswith(_INFO_PREFIX):
            found.setdefault(name, section)
    return found


def _sizes(section: bytes, most: int) -> tuple[tuple[int, ...] | None, int]:
    """The parameters' sizes that one kernel's .nv.info section says, in order (None where it does not
    say), and how many records were read: at most one more than most, where the reading stops."""
    sizes: dict[int, int] = {}
    read = 0
    try:
        for attribute, value in _records(section):
            read += 1
            if read > most:
                return None, read
            if attribute in (_KPARAM_INFO, _KPARAM_INFO_V2) and len(value) >= 12:
                ordinal = struct.unpack_from("<H", value, 4)[0]
                (word,) = struct.unpack_from("<I", value, 8)
                v2 = attribute == _KPARAM_INFO_V2
                sizes[ordinal] = word & _V2_SIZE_MASK if v2 else (word >> _SIZE_SHIFT) & _SIZE_MASK
                if len(sizes) > MAX_PARAMETERS:
                    return None, read
    except struct.error:
        return None, read
    if sorted(sizes) != list(range(len(sizes))):
        return None, read  # ordinals with a gap: not a list this reader understands
    return tuple(sizes[ordinal] for ordinal in range(len(sizes))), read


def _records(section: bytes) -> Iterator[tuple[int, bytes]]:
    """The (attribute, value) records of an .nv.info section, in order, up to one of a format not known."""
    for form, attribute, value in info_records(section):
        if form not in (INFO_NONE, INFO_BYTE, INFO_HALF, INFO_SIZED):
            return  # what follows cannot be found
        yield attribute, value
