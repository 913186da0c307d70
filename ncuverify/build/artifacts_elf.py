"""What a cubin's own ELF says about it: the architecture it was built for and its kernels (entry
functions, not device functions).

A cubin may come from a pull request's build, so every offset and size is checked against the file
before it is read: a truncated or crafted ELF is an InputError, never an exception from struct.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from ncuverify.errors import InputError

ELF_MAGIC = b"\x7fELF"
EM_CUDA = 190
_SHT_SYMTAB = 2
_STT_FUNC = 2
_STB_GLOBAL, _STB_WEAK = 1, 2
_STO_CUDA_ENTRY = 0x10  # st_other's bit that marks a kernel
# Bounds on what one cubin's tables may make ncuverify read.
MAX_SECTIONS = 65_536
MAX_SYMBOLS = 1_000_000
MAX_NAME_BYTES = 4096


@dataclass(frozen=True)
class CubinHeader:
    """A cubin's architecture as its ELF header says it (`sm_90`), and its kernels' symbols."""

    arch: str
    kernels: tuple[str, ...]


def read_cubin(data: bytes, label: str) -> CubinHeader:
    """The cubin's architecture and kernels; InputError naming label where it is no CUDA ELF or its
    tables do not fit in it."""
    try:
        return CubinHeader(_arch(data), tuple(sorted(set(_kernels(data)))))
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


def _sections(data: bytes) -> list[tuple[int, int, int, int, int]]:
    """(type, offset, size, link, entry size) of each section."""
    (table,) = struct.unpack_from("<Q", data, 40)
    entry_size, count = struct.unpack_from("<HH", data, 58)
    if count > MAX_SECTIONS or entry_size < 64:
        raise ValueError(f"{count} sections of {entry_size} bytes")
    if table + count * entry_size > len(data):
        raise ValueError("its section table lies past its end")
    sections = []
    for index in range(count):
        base = table + index * entry_size
        kind = struct.unpack_from("<I", data, base + 4)[0]
        offset, size = struct.unpack_from("<QQ", data, base + 24)
        link = struct.unpack_from("<I", data, base + 40)[0]
        symbol_size = struct.unpack_from("<Q", data, base + 56)[0]
        sections.append((kind, offset, size, link, symbol_size))
    return sections


def _kernels(data: bytes) -> list[str]:
    sections = _sections(data)
    found = []
    for kind, offset, size, link, entry_size in sections:
        if kind != _SHT_SYMTAB:
            continue
        if entry_size < 24 or offset + size > len(data) or size // entry_size > MAX_SYMBOLS:
            raise ValueError("its symbol table does not fit in it")
        if link >= len(sections):
            raise ValueError("its symbol table names no string table")
        _, names_offset, names_size, _, _ = sections[link]
        if names_offset + names_size > len(data):
            raise ValueError("its string table lies past its end")
        names = data[names_offset : names_offset + names_size]
        for base in range(offset, offset + size - entry_size + 1, entry_size):
            name_at, info, other = struct.unpack_from("<IBB", data, base)
            if info & 0xF == _STT_FUNC and info >> 4 in (_STB_GLOBAL, _STB_WEAK) and other & _STO_CUDA_ENTRY:
                found.append(_name(names, name_at))
    return found


def _name(names: bytes, at: int) -> str:
    end = names.find(b"\0", at, at + MAX_NAME_BYTES + 1)
    if at >= len(names) or end < 0:
        raise ValueError(f"a symbol's name is not in its string table or longer than {MAX_NAME_BYTES} bytes")
    return names[at:end].decode("ascii", errors="replace")
