"""Measurement keys: for every case a run profiles, one digest of everything that can change its
figures, so that `check --reuse` takes a case's recorded figures only where nothing of that changed.

A built case's key holds its kernel's code (code_digest), what it launches with (spec.digests.
case_digests: geometry, arguments, fills and the .npy files' bytes), the keys of the steps before it in a
sequence, the ncu metrics its claims ask for, and the GPU and tools (name, architecture, drivers, ncu,
clock and cache control, the ncuverify version). A program case's key holds its program, the digests of
the files its command names (spec.digests.program_file_digests), its metrics and the GPU. Where ncu's
version is not known, no key is made: nothing is reused across an ncu that cannot be named.

A kernel's code is its own part of its cubin, not the whole cubin: every kernel of a .cu file is one
NVRTC program and one cubin, and an edit of one of them must not profile the others again. The digest
holds the ELF header's identity and every section but those named after another kernel (`.text.<fn>`,
its relocations, `.nv.info.<fn>`, `.nv.constant<N>.<fn>`, `.nv.shared.<fn>`, `.nv.local.<fn>`): the
kernel's own, a device function's, and each of the whole cubin, with its header (type, flags, links and
info, the register count and the symbol of a code section). The tables that mix every function and refer
to them by index (the symbols, the relocations, `.nv.info`'s per-function records such as the register
count and stack sizes, the call graph) are re-read: each index named by its symbol or section (indexes
shift where a kernel comes or goes), another kernel's records left out. A section of any other kind is
digested whole (another kernel's edit may then change the key: more profiling, never a stale figure).
A cubin that cannot be read, that lacks the kernel, whose kernel's code lies in a section named after
another, or whose kernel refers to another kernel (launches it: dynamic parallelism, whose child's code
then runs too) is digested by all its bytes.

Left out: the debug information, which no launch runs (the line tables, which a comment that moves
lines changes, `.debug_frame`, `.nv_debug_line_sass`, the PTX text `.nv_debug_ptx_txt`, and their
relocations), and the string tables, whose names are digested where they are used. sm_100 and later
cubins carry a mercury copy of their code and tables (`.nv.merc.*`, `.nv.capmerc.text.<fn>`, with a
symbol table of their own), split the same way; the copy of a kernel's code holds section indexes, so
there a kernel added beside it changes its key (an edit of another kernel does not).

So a key never stays the same where the kernel's machine code, its resources (registers, shared, local
and constant memory, stack, launch bounds) or what it calls changed: they are its own sections, its
records in the tables, or sections of no kernel.
"""

from __future__ import annotations

import hashlib
import json
import re
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ncuverify.build.artifacts_elf import (
    INFO_SIZED,
    SHT_MERC_SYMTAB,
    Section,
    Symbol,
    TooLarge,
    info_records,
    section_name,
    sections,
    symbol_name,
    symbols,
)
from ncuverify.names import QualifiedCase
from ncuverify.profile.plan import FileCases, case_metrics, with_earlier_steps
from ncuverify.profile.programs import planned_programs
from ncuverify.provenance import Provenance
from ncuverify.spec.digests import case_digests, program_file_digests

# What of a provenance names the GPU and the tools a figure was measured with.
IDENTITY_FIELDS = (
    "gpu",
    "arch",
    "nvidia_driver",
    "cuda_driver",
    "ncu_version",
    "clock_control",
    "cache_control",
    "ncuverify_version",
)
_SHSTRNDX_AT = 62  # e_shstrndx in a 64-bit ELF header
_SHT_SYMTAB, _SHT_STRTAB, _SHT_NOBITS = 2, 3, 8
_SHF_ALLOC, _SHF_EXECINSTR, _SHF_INFO_LINK = 0x2, 0x4, 0x40
_STT_SECTION = 3
# The kinds of the tables that refer to symbols by index, each with its mercury copy's (sm_100 and later
# cubins carry a copy of their code and tables, `.nv.merc.*` and `.nv.capmerc.text.<fn>`, each referring
# to `.nv.merc.symtab`): the symbols; the relocations (SHT_RELA, SHT_REL) with the bytes of a record;
# .nv.info and .nv.info.<fn>; .nv.callgraph.
_SYMBOL_TABLES = frozenset({_SHT_SYMTAB, SHT_MERC_SYMTAB})
_RELOCATION_ENTRY = {4: 24, 9: 16, 0x70000082: 24}
_CUDA_INFO = frozenset({0x70000000, 0x70000083})
_CALL_GRAPH = frozenset({0x70000001, 0x7000008A})
# A mercury copy's prefix: what follows it is named as the section it copies.
_MERCURY = re.compile(rb"\.nv\.(?:cap)?merc(?=\.)")
# The sections that belong to one function, named after it (`.text.<fn>`, `.nv.info.<fn>`, ...), with
# their relocations. A kernel named like a section (`info`) is told apart by the dot after the prefix.
_PER_FUNCTION = re.compile(
    rb"(?:\.rela?)?(?:\.text|\.nv\.info|\.nv\.constant[0-9]+|\.nv\.shared|\.nv\.local)\.(.+)", re.DOTALL
)
# What a debugger or a profiler's source view reads (the line tables, the call frames, the PTX text):
# the GPU runs none of it, and each mixes every function of the cubin, its lines or its offsets.
_DEBUG_PREFIXES = (b".debug_", b".nv_debug_")
# .nv.info attributes whose value begins with a symbol's index: EIATTR_PARAM_CBANK, _FRAME_SIZE,
# _MIN_STACK_SIZE, _MAX_STACK_SIZE, _REGCOUNT; and EIATTR_EXTERNS, a list of them.
_SYMBOL_FIRST = frozenset({0x0A, 0x11, 0x12, 0x23, 0x2F})
_SYMBOL_LIST = 0x0F
# A real cubin stores each name once, and names it in its symbol table and its mercury copy's: the
# names its symbols read cannot add up to more than twice its bytes.
_NAME_BYTES_PER_FILE_BYTE = 2


def gpu_identity(provenance: Provenance) -> dict[str, str | None] | None:
    """The GPU and tools of a provenance, as keys hold them; None where ncu's version is unknown."""
    if provenance.ncu_version is None:
        return None
    return {name: getattr(provenance, name) for name in IDENTITY_FIELDS}


def code_digest(cubin: bytes, symbol: str) -> str:
    """A digest of what of the cubin can change the figures of a launch of its entry function `symbol`
    (mangled): of all its bytes where it is no ELF that can be read or `symbol` is none of its kernels."""
    try:
        return hashlib.sha256(repr(_kernel_parts(cubin, symbol.encode())).encode()).hexdigest()
    except (struct.error, ValueError, IndexError, KeyError, TooLarge):
        return "bytes:" + hashlib.sha256(cubin).hexdigest()


@dataclass(frozen=True)
class _Table:
    """A symbol table read for one kernel: the label each symbol is named by in the digest (its name,
    and how many before it had that name; a section's symbol by its section), and the kernel, if any,
    each belongs to."""

    labels: list[tuple[bytes, int]]
    kernels: list[bytes | None]
    symbols: list[Symbol]


@dataclass(frozen=True)
class _Cubin:
    """A cubin read for one kernel: its sections, their names and the kernel, if any, each belongs to;
    its symbol tables by their sections' indexes."""

    data: bytes
    sections: list[Section]
    names: list[bytes]
    section_kernels: list[bytes | None]
    tables: dict[int, _Table]
    kernel: bytes

    def table(self, section: Section) -> _Table:
        """The symbol table a section's records refer to (its link); KeyError where it links to none."""
        return self.tables[section.link]

    def of_another_kernel(self, table: _Table, symbols: Sequence[int], own: bool = False) -> bool:
        """Whether these symbols make a record another kernel's: one of them is of another kernel, and
        none of this one. ValueError where the record is the kernel's own (`own`: of its own section, or
        naming it) and names another kernel too: a kernel that launches another (dynamic parallelism)
        runs its code, which its digest would leave out, so its cubin is digested whole."""
        kernels = {table.kernels[index] for index in symbols} - {None}
        if (own or self.kernel in kernels) and kernels - {self.kernel}:
            raise ValueError("the kernel refers to another kernel")
        return bool(kernels) and self.kernel not in kernels

    def section_label(self, index: int) -> bytes | int:
        """A section index as its section's name (an index that names no section: as it is)."""
        return self.names[index] if 0 < index < len(self.sections) else index


def _kernel_parts(data: bytes, kernel: bytes) -> tuple[object, ...]:
    """The ELF header's identity, then each section of the cubin the kernel's figures may depend on,
    with the records of the tables that mix every function re-read: symbol and section indexes (which
    shift where another kernel's sections or symbols come or go) named, another kernel's left out."""
    cubin = _read(data, kernel)
    (names_at,) = struct.unpack_from("<H", data, _SHSTRNDX_AT)
    string_tables = {names_at} | {cubin.sections[index].link for index in cubin.tables}
    parts: list[object] = [
        data[:16],
        struct.unpack_from("<HHI", data, 16),
        struct.unpack_from("<I", data, 48),
    ]
    for index, section in enumerate(cubin.sections):
        name = cubin.names[index]
        owner = cubin.section_kernels[index]
        if index == 0 or (owner is not None and owner != kernel) or _is_debug(name, section):
            continue
        if index in string_tables and section.kind == _SHT_STRTAB:
            continue  # every name of them is digested where it is used
        parts.append(
            (name, section.kind, section.flags, cubin.section_label(section.link), _info(cubin, index))
        )
        parts.append((section.entry_size, section.align, _content(cubin, index, keep_all=owner == kernel)))
    return tuple(parts)


def _read(data: bytes, kernel: bytes) -> _Cubin:
    every = sections(data)
    (names_at,) = struct.unpack_from("<H", data, _SHSTRNDX_AT)
    names = [section_name(data, every[names_at], section) for section in every]
    if any(name is None for name in names):
        raise ValueError("a section's name is not in the section names' table")
    known = [name or b"" for name in names]
    every_symbol = symbols(data, every, kinds=_SYMBOL_TABLES)
    symbol_names = _symbol_names(data, every_symbol)
    entries = {name for symbol, name in zip(every_symbol, symbol_names, strict=True) if symbol.is_entry}
    if kernel not in entries:
        raise ValueError("no such kernel")
    section_kernels = _section_kernels(every, known, entries)
    tables: dict[int, _Table] = {}
    seen: dict[tuple[int, bytes], int] = {}  # symbols of a table and a name so far
    for symbol, name in zip(every_symbol, symbol_names, strict=True):
        table = tables.setdefault(symbol.table, _Table([], [], []))
        where = section_kernels[symbol.section] if 0 < symbol.section < len(every) else None
        if symbol.is_entry and where != name:  # its code named after another kernel, or after none
            raise ValueError("a kernel's code is not in its own section")
        if symbol.info & 0xF == _STT_SECTION and 0 < symbol.section < len(every):
            name = b"section " + known[symbol.section]
        table.labels.append((name, seen.get((symbol.table, name), 0)))
        seen[symbol.table, name] = seen.get((symbol.table, name), 0) + 1
        table.kernels.append(where)
        table.symbols.append(symbol)
    return _Cubin(data, every, known, section_kernels, tables, kernel)


def _symbol_names(data: bytes, table: list[Symbol]) -> list[bytes]:
    """Every symbol's name; TooLarge where they add up to more than a real cubin's can, so that a
    crafted table cannot make this read one long name a million times."""
    found: list[bytes] = []
    total = 0
    for symbol in table:
        name = symbol_name(data, symbol)
        if name is None:
            raise ValueError("a symbol's name is not in its string table")
        total += len(name)
        if total > _NAME_BYTES_PER_FILE_BYTE * len(data):
            raise TooLarge(
                f"its symbols' names add up to more than {_NAME_BYTES_PER_FILE_BYTE} times its bytes"
            )
        found.append(name)
    return found


def _section_kernels(every: list[Section], names: list[bytes], entries: set[bytes]) -> list[bytes | None]:
    """The kernel each section belongs to: the one it is named after, or, for a relocation, that of the
    section it applies to; None for a section of no kernel (a device function's, or one of the whole
    cubin). ValueError where a section's name and the section its info says it belongs to (a relocation's,
    a kernel's attributes' or constants') say two kernels: not a layout understood."""
    found: list[bytes | None] = []
    for name in names:
        named = _PER_FUNCTION.fullmatch(_stem(name))
        found.append(named.group(1) if named is not None and named.group(1) in entries else None)
    for index, section in enumerate(every):
        if section.flags & _SHF_INFO_LINK and 0 < section.info < len(every):
            target = found[section.info]
            if found[index] is not None and target not in (None, found[index]):
                raise ValueError("a section named after one kernel belongs to another")
            if section.kind in _RELOCATION_ENTRY:  # another section named after no kernel stays whole
                found[index] = found[index] or target
    return found


def _stem(name: bytes) -> bytes:
    """A section's name, a mercury copy's named as the section it copies (`.nv.capmerc.text.k`: `.text.k`)."""
    return _MERCURY.sub(b"", name, count=1) if name.startswith(b".nv.") else name


def _is_debug(name: bytes, section: Section) -> bool:
    """Whether a section is debug information: named so, and not loaded (a section loaded on the GPU is
    digested whatever its name)."""
    stem = _stem(name).removeprefix(b".rela").removeprefix(b".rel")
    return stem.startswith(_DEBUG_PREFIXES) and not section.flags & _SHF_ALLOC


def _info(cubin: _Cubin, index: int) -> object:
    """A section header's info word, its indexes named: a code section's symbol (its top byte, the
    register count on older architectures, as it is), another section's index where the flags say so;
    none for a symbol table (its count of local symbols, which other kernels' symbols change)."""
    section = cubin.sections[index]
    if section.kind in _SYMBOL_TABLES:
        return None
    code = section.flags & _SHF_EXECINSTR or _stem(cubin.names[index]).startswith(b".text.")
    if code and section.link in cubin.tables:
        labels = cubin.table(section).labels
        symbol = section.info & 0xFFFFFF
        return section.info >> 24, labels[symbol] if symbol < len(labels) else symbol
    if section.flags & _SHF_INFO_LINK:
        return cubin.section_label(section.info)
    return section.info


def _content(cubin: _Cubin, index: int, keep_all: bool) -> object:
    """A section's content: its records re-read where it is a table that refers to symbols (those of
    another kernel left out, but from the kernel's own sections), its bytes otherwise."""
    section = cubin.sections[index]
    if section.kind == _SHT_NOBITS:
        return section.size
    data = cubin.data[section.offset : section.offset + section.size]
    if section.kind in _SYMBOL_TABLES:
        return _symbol_records(cubin, cubin.tables[index])
    if section.kind in _RELOCATION_ENTRY:
        return _relocation_records(
            cubin, cubin.table(section), data, _RELOCATION_ENTRY[section.kind], keep_all
        )
    if section.kind in _CUDA_INFO:
        return _info_records(cubin, section, data, keep_all)
    if section.kind in _CALL_GRAPH:
        return _call_records(cubin, cubin.table(section), data, keep_all)
    return data


def _symbol_records(cubin: _Cubin, table: _Table) -> tuple[object, ...]:
    """The symbols, by label: their order changes where another kernel comes or goes."""
    return _in_order(
        [
            (table.labels[i], s.info, s.other, cubin.section_label(s.section), s.value, s.size)
            for i, s in enumerate(table.symbols)
            if not cubin.of_another_kernel(table, [i])
        ],
        keep_all=False,
    )


def _relocation_records(
    cubin: _Cubin, table: _Table, data: bytes, size: int, keep_all: bool
) -> tuple[object, ...]:
    records: list[object] = []
    for at in range(0, len(data) - size + 1, size):
        offset, info = struct.unpack_from("<QQ", data, at)
        addend = struct.unpack_from("<q", data, at + 16)[0] if size == 24 else 0
        symbol = info >> 32
        if not cubin.of_another_kernel(table, [symbol], own=keep_all):
            records.append((offset, info & 0xFFFFFFFF, table.labels[symbol], addend))
    return (*_in_order(records, keep_all), data[len(data) - len(data) % size :])


def _info_records(cubin: _Cubin, section: Section, data: bytes, keep_all: bool) -> tuple[object, ...]:
    """An .nv.info section's records, the symbols of those that name one by label; a section of such
    records that links to no symbol table cannot be read so (KeyError)."""
    records: list[object] = []
    for form, attribute, value in info_records(data):
        referred: list[int] = []
        if form == INFO_SIZED and attribute in _SYMBOL_FIRST and len(value) >= 4:
            referred = [struct.unpack_from("<I", value)[0]]
            value_read: object = (cubin.table(section).labels[referred[0]], value[4:])
        elif form == INFO_SIZED and attribute == _SYMBOL_LIST and len(value) % 4 == 0:
            referred = [index for (index,) in struct.iter_unpack("<I", value)]
            value_read = tuple(cubin.table(section).labels[index] for index in referred)
        else:
            value_read = value
        if not (referred and cubin.of_another_kernel(cubin.table(section), referred, own=keep_all)):
            records.append((form, attribute, value_read))
    return _in_order(records, keep_all)


def _call_records(cubin: _Cubin, table: _Table, data: bytes, keep_all: bool) -> tuple[object, ...]:
    """.nv.callgraph's (caller, callee) pairs of symbol indexes; an index past the symbols is a marker
    (-1 to -4), kept as it is."""
    records: list[object] = []
    for at in range(0, len(data) - 7, 8):
        pair = struct.unpack_from("<II", data, at)
        referred = [index for index in pair if index < len(table.labels)]
        if not cubin.of_another_kernel(table, referred, own=keep_all):
            records.append(
                tuple(table.labels[index] if index < len(table.labels) else index for index in pair)
            )
    return (*_in_order(records, keep_all), data[len(data) - len(data) % 8 :])


def _in_order(records: list[object], keep_all: bool) -> tuple[object, ...]:
    """A kernel's own table as it is; the records of a table of every function sorted, for each names
    what it refers to and their order follows the order the functions were compiled in."""
    return tuple(records) if keep_all else tuple(sorted(records, key=repr))


def measurement_keys(files: Sequence[FileCases], identity: Mapping[str, str | None] | None) -> dict[str, str]:
    """Every case the files' claims have profiled (a step of a sequence with the steps before it, each
    program case), under its qualified name -> its key; none without an identity."""
    if identity is None:
        return {}
    keys: dict[str, str] = {}
    for file in files:
        keys.update(_built_keys(file, identity))
        keys.update(_program_keys(file, identity))
    return keys


def _program_keys(file: FileCases, identity: Mapping[str, str | None]) -> dict[str, str]:
    launches = case_digests(file.spec)
    keys: dict[str, str] = {}
    for planned in planned_programs([file]):
        name = str(QualifiedCase.parse(planned.name).in_file(None))
        keys[planned.name] = _key(
            {
                "program": launches[name],
                "files": program_file_digests(file.spec, [name]).get(name, {}),
                "metrics": sorted(planned.metrics),
                "gpu": dict(identity),
            }
        )
    return keys


def _built_keys(file: FileCases, identity: Mapping[str, str | None]) -> dict[str, str]:
    runs = with_earlier_steps(file.spec, case_metrics(file.spec, file.claims))
    launches = case_digests(file.spec)
    codes: dict[str, str] = {}  # by kernel
    keys: dict[str, str] = {}  # the file's own case names
    for name, metrics in runs.items():
        kernel = file.spec.content.cases[name].kernel
        build = file.builds.get(kernel)
        if build is None:  # not built: nothing of it is profiled
            continue
        if kernel not in codes:
            codes[kernel] = code_digest(build.cubin, build.symbol)
        earlier = file.spec.content.sequence_steps(name)[:-1]
        keys[name] = _key(
            {
                "code": codes[kernel],
                "launch": launches[name],
                "after": [keys.get(step, "") for step in earlier],
                "metrics": sorted(metrics),
                "gpu": dict(identity),
            }
        )
    return {str(QualifiedCase.of(file.key, name)): key for name, key in keys.items()}


def _key(content: object) -> str:
    text = json.dumps(content, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", errors="surrogateescape")).hexdigest()
