"""How many bytes an artifact's fatbins unpack to, read from their headers before cuobjdump extracts
anything: a fatbin of a few KB may hold compressed cubins that cuobjdump would write out at hundreds of
MiB each.

A fatbin is a container (magic 0xBA55ED50, a version, its header's size, 16, and its entries' size) of
entries, each a 64-byte header or longer (kind, header size, payload size, flags, and where its
payload is compressed the size it unpacks to) followed by its payload. An entry of kind 0x100
concatenates several cubins in one compressed payload and lists them, with their sizes, in a table its
header points to. cuobjdump writes a compressed cubin at the size its header says, and follows the
table of a concatenation however its cubins overlap, so each cubin is counted as its header says.

Every container anywhere in the file is counted, wherever it lies (a fatbin file, an executable's or a
library's .nv_fatbin section, an archive's objects), not only those cuobjdump is known to read: a
fatbin counted that it would not extract costs a few bytes of margin, one missed could cost the disk.
"""

from __future__ import annotations

import mmap
import struct
from dataclasses import dataclass
from pathlib import Path

from ncuverify.build.limits import MAX_CUBIN_BYTES, MAX_UNPACKED_BYTES, Deadline, in_mib
from ncuverify.errors import InputError

_MAGIC = struct.pack("<I", 0xBA55ED50)
_CONTAINER = struct.Struct("<4xHHQ")  # version, header size, the entries' bytes
_CONTAINER_HEADER_BYTES = 16  # cuobjdump reads no container whose header says another size
_ENTRY = struct.Struct("<HxxIQ4xI")  # kind, header size, payload size, the offset of its table
_ENTRY_UNPACKED_AT = 56  # where a compressed payload's size unpacked lies in its entry's header
_ENTRY_HEADER_BYTES = 64
_CONCATENATED = 0x100  # the kind of an entry that holds several cubins
_PART_SIZE_AT = 8  # where each cubin's size lies in its 64-byte row of a concatenation's table
# Entries of one artifact, a concatenation's cubins counted one by one. The CUDA wheels' libcurand has
# 1933 (1624 cubins and 309 PTX), counting those cuobjdump does not extract.
MAX_FATBIN_ENTRIES = 65_536


class _Malformed(ValueError):
    """A container whose entries do not fit in it: cuobjdump refuses it too."""


class _OverBound(ValueError):
    """A fatbin larger than the bounds."""


@dataclass
class Unpacked:
    """What an artifact's fatbins unpack to, as their headers say."""

    entries: int = 0
    total: int = 0  # bytes, every entry together
    largest: int = 0  # bytes, the largest cubin or PTX


def check_unpacked(path: Path, copy: Path, deadline: Deadline) -> Unpacked:
    """What the artifact (read from its copy, named as path in messages) unpacks to; InputError, before
    cuobjdump runs, where one cubin unpacks to more than MAX_CUBIN_BYTES, all of them to more than
    MAX_UNPACKED_BYTES, it holds more than MAX_FATBIN_ENTRIES, or a fatbin's entries do not fit in it."""
    try:
        with open(copy, "rb") as file:
            if file.seek(0, 2) == 0:
                return Unpacked()
            with mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as data:
                return unpacked(data, deadline)
    except _OverBound as error:
        raise InputError(f"{path}: {error}; refusing to extract it") from None
    except (_Malformed, struct.error) as error:
        raise InputError(f"{path}: not an artifact cuobjdump can read ({error})") from None


def unpacked(data: bytes | mmap.mmap, deadline: Deadline) -> Unpacked:
    """What every fatbin container in data unpacks to; _OverBound or _Malformed as check_unpacked says."""
    found = Unpacked()
    at = data.find(_MAGIC)
    while at >= 0:
        if deadline.passed():
            raise _OverBound(f"reading its fatbin headers took longer than {deadline.seconds:g} s")
        _count_container(data, at, found)
        at = data.find(_MAGIC, at + 1)
    return found


def _count_container(data: bytes | mmap.mmap, at: int, found: Unpacked) -> None:
    if at + _CONTAINER_HEADER_BYTES > len(data):
        return
    _, header_size, size = _CONTAINER.unpack_from(data, at)
    if header_size != _CONTAINER_HEADER_BYTES:
        return  # the magic's bytes, but no container cuobjdump reads
    end = at + _CONTAINER_HEADER_BYTES + size
    if end > len(data):
        raise _Malformed(f"its fatbin at byte {at} runs past its end")
    entry = at + _CONTAINER_HEADER_BYTES
    while entry < end:
        if entry + _ENTRY_HEADER_BYTES > end:
            raise _Malformed(f"its fatbin at byte {at} has an entry header cut short at byte {entry}")
        kind, header_size, payload, table_at = _ENTRY.unpack_from(data, entry)
        if header_size < _ENTRY_HEADER_BYTES:
            raise _Malformed(f"its fatbin at byte {at} has an entry header of {header_size} bytes")
        if entry + header_size + payload > end:
            raise _Malformed(f"its fatbin at byte {at} has an entry at byte {entry} that runs past it")
        (unpacked_size,) = struct.unpack_from("<Q", data, entry + _ENTRY_UNPACKED_AT)
        # Whether cuobjdump unpacks a payload is up to flags it may read otherwise: the larger size counts.
        size_out = max(payload, unpacked_size)
        if kind == _CONCATENATED:
            parts = _parts(data, entry, header_size, table_at, found)
            for part in parts:
                _count_cubin(found, part)
            _count_bytes(found, max(0, size_out - sum(parts)))  # what it unpacks to beyond its cubins
        else:
            _count_cubin(found, size_out)
        entry += header_size + payload


def _parts(
    data: bytes | mmap.mmap, entry: int, header_size: int, table_at: int, found: Unpacked
) -> list[int]:
    """The size of each cubin of a concatenation, from the table in its entry's header."""
    table = entry + table_at
    if table_at < _ENTRY_HEADER_BYTES or table_at + 8 > header_size:
        raise _Malformed(f"its fatbin entry at byte {entry} has its table outside its header")
    (count,) = struct.unpack_from("<I", data, table)
    if table_at + 8 + count * _ENTRY_HEADER_BYTES > header_size:
        raise _Malformed(f"its fatbin entry at byte {entry} lists more cubins than its header holds")
    if found.entries + count > MAX_FATBIN_ENTRIES:
        raise _OverBound(f"its fatbins hold more than {MAX_FATBIN_ENTRIES} entries")
    rows = table + 8
    return [
        struct.unpack_from("<Q", data, rows + index * _ENTRY_HEADER_BYTES + _PART_SIZE_AT)[0]
        for index in range(count)
    ]


def _count_cubin(found: Unpacked, size: int) -> None:
    """One entry: a cubin (or PTX) of that size once unpacked."""
    found.entries += 1
    if found.entries > MAX_FATBIN_ENTRIES:
        raise _OverBound(f"its fatbins hold more than {MAX_FATBIN_ENTRIES} entries")
    found.largest = max(found.largest, size)
    if size > MAX_CUBIN_BYTES:
        raise _OverBound(
            f"a cubin in it unpacks to {in_mib(size)}, more than the {in_mib(MAX_CUBIN_BYTES)}"
            " one cubin may be"
        )
    _count_bytes(found, size)


def _count_bytes(found: Unpacked, size: int) -> None:
    found.total += size
    if found.total > MAX_UNPACKED_BYTES:
        raise _OverBound(
            f"its cubins unpack to more than the {in_mib(MAX_UNPACKED_BYTES)} one artifact's may"
            f" ({in_mib(found.total)} counted so far)"
        )
