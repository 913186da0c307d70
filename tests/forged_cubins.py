"""Cubins forged from a real one for the tests of hostile ELF tables: its section table copied to its end
with more section headers after it, and new contents (symbols, names) before it."""

import math
import struct

from ncuverify.build.limits import READ_TIME_LIMIT_S, Deadline

SYMTAB, STRTAB, PROGBITS = 2, 3, 1


def section_table(data: bytes) -> tuple[int, int, int]:
    """The section table's offset, its entries' size and their count."""
    (offset,) = struct.unpack_from("<Q", data, 40)
    entry_size, count = struct.unpack_from("<HH", data, 58)
    return offset, entry_size, count


def header(data: bytes, kind: int) -> bytes:
    """The first section header of that type."""
    offset, entry_size, count = section_table(data)
    for index in range(count):
        at = offset + index * entry_size
        if struct.unpack_from("<I", data, at + 4)[0] == kind:
            return data[at : at + entry_size]
    raise AssertionError(f"no section of type {kind}")


def new_header(kind: int, offset: int, size: int, link: int = 0, entry_size: int = 0) -> bytes:
    return struct.pack("<IIQQQQIIQQ", 0, kind, 0, 0, offset, size, link, 0, 1, entry_size)


def with_sections(cubin: bytes, extra: list[bytes], contents: bytes = b"") -> bytes:
    """The cubin with contents appended, then its section table with the extra headers after it."""
    offset, entry_size, count = section_table(cubin)
    data = bytearray(cubin + contents + cubin[offset : offset + entry_size * count] + b"".join(extra))
    struct.pack_into("<Q", data, 40, len(cubin) + len(contents))
    struct.pack_into("<H", data, 60, count + len(extra))
    return bytes(data)


class CountedDeadline(Deadline):
    """A deadline that counts the looks taken at it, and passes after passes_after of them (never,
    unless said): how far a loop over an artifact's tables went, counted rather than timed."""

    def __init__(self, seconds: float = READ_TIME_LIMIT_S, passes_after: float = math.inf) -> None:
        super().__init__(seconds)
        self.looks = 0
        self._passes_after = passes_after

    def passed(self) -> bool:
        self.looks += 1
        return self.looks > self._passes_after
