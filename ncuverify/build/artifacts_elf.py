"""What a cubin's own ELF says about it: the architecture it was built for, its kernels (entry
functions, not device functions), and its sections for the readers of one (ncuverify.build.params).

A cubin may come from a pull request's build, so every offset and size is checked against the file
before it is read: a truncated or crafted ELF is an InputError, never an exception from struct. And
what its tables may make ncuverify do is bounded: the sections, the symbol tables and their symbols,
the bytes of its kernels' names, and the time, so that a cubin of thousands of tables is refused at
once rather than read for minutes.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass

from ncuverify.build.limits import Deadline
from ncuverify.errors import InputError

ELF_MAGIC = b"\x7fELF"
EM_CUDA = 190
_SHT_SYMTAB = 2
# The symbol table of the mercury copy of a cubin's code that sm_100 and later cubins carry
# (`.nv.merc.symtab`, beside `.nv.capmerc.text.<fn>`): laid out as an ELF symbol table.
SHT_MERC_SYMTAB = 0x70000085
_SHT_NOBITS = 8  # a section that takes no bytes of the file (.bss, .nv.shared.*)
_STT_FUNC = 2
_STB_GLOBAL, _STB_WEAK = 1, 2
_STO_CUDA_ENTRY = 0x10  # st_other's bit that marks a kernel
# The formats of a .nv.info record (EIFMT_*): no value, a value of one or two bytes (each in two), or a
# 16-bit size and that many bytes.
INFO_NONE, INFO_BYTE, INFO_HALF, INFO_SIZED = 0x01, 0x02, 0x03, 0x04
_DEADLINE_EVERY = 4096  # symbols read between two looks at the clock
# Bounds on what one cubin's tables may make ncuverify read, each far above the largest measured: a
# cubin of 4000 kernels (nvcc -cubin, one template instantiated 4000 times: 22 s to build), a kernel
# of 8000 int parameters, and the cubins of the CUDA wheels' libcurand and libcudadevrt.
MAX_SECTIONS = 65_536  # all that e_shnum can say; 12_012 measured (4000 kernels), libcurand's 788
MAX_SYMBOL_TABLES = 16  # every cubin measured has one
MAX_SYMBOLS = 262_144  # all its symbol tables together; 12_007 measured (4000 kernels)
MAX_NAME_BYTES = 65_536  # one symbol's name; 8_009 measured for the kernel of 8000 parameters
# What its sections that take bytes of the file may add up to, as a multiple of the file's size: a
# cubin's sections do not overlap, but for aliases (.nv.merc.* copies), 1.12 at most among those
# measured. Thousands of sections over the same bytes are refused.
MAX_SECTION_BYTES_PER_FILE_BYTE = 4


class TooLarge(ValueError):
    """A cubin whose tables are larger than the bounds: refused as too large, not as damaged."""


@dataclass(frozen=True)
class CubinHeader:
    """A cubin's architecture as its ELF header says it (`sm_90`), and its kernels' symbols."""

    arch: str
    kernels: tuple[str, ...]


@dataclass(frozen=True)
class Section:
    """One section's header: where its name lies in the section names' table, its type, its bytes in the
    file, the section it links to and the size of its entries; its flags, its info word (a section's or
    a symbol's index, or a count, by its type) and its alignment."""

    name_at: int
    kind: int
    offset: int
    size: int
    link: int
    entry_size: int
    flags: int
    info: int
    align: int


@dataclass(frozen=True)
class Symbol:
    """One entry of a symbol table: the table's section index, where its name lies in the table's string
    table (`names`), its type and binding (`info`), `other` (a kernel's bit), its section's index, its
    value and its size."""

    table: int
    name_at: int
    names: Section
    info: int
    other: int
    section: int
    value: int
    size: int

    @property
    def is_entry(self) -> bool:
        """Whether it is a kernel: a global or weak function marked as an entry."""
        binding = self.info >> 4
        return (
            self.info & 0xF == _STT_FUNC
            and binding in (_STB_GLOBAL, _STB_WEAK)
            and bool(self.other & _STO_CUDA_ENTRY)
        )


def read_cubin(data: bytes, label: str, deadline: Deadline | None = None) -> CubinHeader:
    """The cubin's architecture and kernels; InputError naming label where it is no CUDA ELF, its
    tables do not fit in it, they are larger than the bounds, or reading them outlasts deadline."""
    try:
        return CubinHeader(_arch(data), tuple(sorted(set(_kernels(data, deadline or Deadline())))))
    except TooLarge as error:
        raise InputError(f"{label}: {error}; refusing to read it") from None
    except (struct.error, ValueError) as error:
        raise InputError(f"{label}: not a readable cubin ({error})") from None


def _arch(data: bytes) -> str:
    if data[:4] != ELF_MAGIC or len(data) < 64:
        raise ValueError("no ELF header")
    if data[4] != 2 or data[5] != 1:
        raise ValueError("not a 64-bit little-endian ELF")
    (machine,) = struct.unpack_from("<H", data, 18)
    if machine != EM_CUDA:
        raise ValueError(f"machine {machine} is not CUDA")
    (flags,) = struct.unpack_from("<I", data, 48)
    # From ELF ABI version 8 on the SM number sits in e_flags' second byte; before, in its first.
    number = (flags >> 8) & 0xFF if data[8] >= 8 else flags & 0xFF
    if number < 10:
        raise ValueError(f"no architecture in its header flags ({flags:#x})")
    return f"sm_{number}"


def sections(data: bytes) -> list[Section]:
    """Every section's header, each checked to lie in the file; ValueError where one does not, TooLarge
    where they are more, or add up to more, than the bounds."""
    (table,) = struct.unpack_from("<Q", data, 40)
    entry_size, count = struct.unpack_from("<HH", data, 58)
    if count > MAX_SECTIONS:
        raise TooLarge(f"it has {count} sections, more than the {MAX_SECTIONS} a cubin may")
    if entry_size < 64:
        raise ValueError(f"{count} sections of {entry_size} bytes")
    if table + count * entry_size > len(data):
        raise ValueError("its section table lies past its end")
    found = []
    total = 0
    for index in range(count):
        base = table + index * entry_size
        name_at, kind, flags = struct.unpack_from("<IIQ", data, base)
        offset, size = struct.unpack_from("<QQ", data, base + 24)
        link, info, align, symbol_size = struct.unpack_from("<IIQQ", data, base + 40)
        if kind != _SHT_NOBITS:
            if offset + size > len(data):
                raise ValueError(f"its section {index} lies past its end")
            total += size
        found.append(Section(name_at, kind, offset, size, link, symbol_size, flags, info, align))
    if total > MAX_SECTION_BYTES_PER_FILE_BYTE * len(data):
        raise TooLarge(
            f"its {count} sections add up to {total} bytes, more than {MAX_SECTION_BYTES_PER_FILE_BYTE}"
            f" times its {len(data)}"
        )
    return found


def section_name(data: bytes, names: Section, section: Section) -> bytes | None:
    """The section's name, read from the section names' table; None where it is not in it."""
    return _string(data, names, section.name_at)


def symbols(
    data: bytes,
    every: list[Section],
    deadline: Deadline | None = None,
    kinds: frozenset[int] = frozenset({_SHT_SYMTAB}),
) -> list[Symbol]:
    """Every symbol of the cubin's symbol tables (its sections of those kinds), in order, each table
    checked to lie in the file; ValueError where one does not, TooLarge where they are more than the
    bounds or reading them outlasts deadline. Their names are read by symbol_name, only where asked for."""
    deadline = deadline or Deadline()
    tables = [(index, section) for index, section in enumerate(every) if section.kind in kinds]
    if len(tables) > MAX_SYMBOL_TABLES:
        raise TooLarge(f"it has {len(tables)} symbol tables, more than the {MAX_SYMBOL_TABLES} a cubin may")
    count = 0
    for _, table in tables:
        if table.entry_size < 24:
            raise ValueError("its symbol table does not fit in it")
        count += table.size // table.entry_size
    if count > MAX_SYMBOLS:
        raise TooLarge(f"it has {count} symbols, more than the {MAX_SYMBOLS} a cubin may")
    found: list[Symbol] = []
    for at, table in tables:
        if table.link >= len(every):
            raise ValueError("its symbol table names no string table")
        names = every[table.link]
        end = table.offset + table.size - table.entry_size + 1
        for base in range(table.offset, end, table.entry_size):
            if len(found) % _DEADLINE_EVERY == 0 and deadline.passed():
                raise TooLarge(f"reading its tables took longer than {deadline.seconds:g} s")
            name_at, info, other, section = struct.unpack_from("<IBBH", data, base)
            value, size = struct.unpack_from("<QQ", data, base + 8)
            found.append(Symbol(at, name_at, names, info, other, section, value, size))
    return found


def symbol_name(data: bytes, symbol: Symbol) -> bytes | None:
    """The symbol's name, read from its table's string table; None where it is not in it."""
    return _string(data, symbol.names, symbol.name_at)


def _kernels(data: bytes, deadline: Deadline) -> list[str]:
    found: list[str] = []
    name_bytes = 0
    for symbol in symbols(data, sections(data), deadline):
        if symbol.is_entry:
            name = symbol_name(data, symbol)
            if name is None:
                raise ValueError(
                    f"a symbol's name is not in its string table or longer than {MAX_NAME_BYTES} bytes"
                )
            # A real cubin stores each kernel's name once: its names cannot add up to more than it.
            name_bytes += len(name)
            if name_bytes > len(data):
                raise TooLarge(f"its kernels' names add up to more than its own {len(data)} bytes")
            found.append(name.decode("ascii", errors="replace"))
    return found


def info_records(section: bytes) -> Iterator[tuple[int, int, bytes]]:
    """The (format, attribute, value) records of an .nv.info section (a format byte, an attribute byte,
    then two bytes of value, or a 16-bit size and that many bytes), in order. A record of a format not
    known ends them: its value is the rest of the section, where nothing more can be found."""
    at = 0
    while at + 2 <= len(section):
        form, attribute = section[at], section[at + 1]
        at += 2
        if form == INFO_SIZED:
            (size,) = struct.unpack_from("<H", section, at)
            yield form, attribute, section[at + 2 : at + 2 + size]
            at += 2 + size
        elif form in (INFO_NONE, INFO_BYTE, INFO_HALF):
            yield form, attribute, section[at : at + 2]
            at += 2
        else:
            yield form, attribute, section[at:]
            return


def _string(data: bytes, table: Section, at: int) -> bytes | None:
    """The NUL-ended string at `at` in the string table, read in place; None where it is not in the
    table or longer than MAX_NAME_BYTES."""
    if table.kind == _SHT_NOBITS or at >= table.size:
        return None
    start = table.offset + at
    end = data.find(b"\0", start, min(table.offset + table.size, start + MAX_NAME_BYTES + 1))
    return data[start:end] if end >= 0 else None
