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
digested whole (another kernel's edit may then change the key: more profiling, never a stale figure);
a cubin that cannot be read, or that lacks the kernel, is digested by all its bytes. Left out: the debug
information (the line tables, which a comment that moves lines changes, `.debug_frame`,
`.nv_debug_line_sass`, the PTX text `.nv_debug_ptx_txt`, and their relocations), which no launch runs,
and the string tables, whose names are digested where they are used.

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
_RELOCATION_ENTRY = {4: 24, 9: 16}  # SHT_RELA, SHT_REL: the bytes of one record
_CUDA_INFO, _CUDA_CALLGRAPH = 0x70000000, 0x70000001  # .nv.info and .nv.info.<fn>; .nv.callgraph
_SHF_ALLOC, _SHF_EXECINSTR, _SHF_INFO_LINK = 0x2, 0x4, 0x40
_STT_SECTION = 3
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
    except (struct.error, ValueError, IndexError, TooLarge):
        return "bytes:" + hashlib.sha256(cubin).hexdigest()


@dataclass(frozen=True)
class _Cubin:
    """A cubin read for one kernel: its sections and their names, its symbols and the label each is
    named by in the digest (its name, and how many before it had that name; a section's symbol by its
    section), and the kernel, if any, each section and each symbol belongs to."""

    data: bytes
    sections: list[Section]
    names: list[bytes]
    symbols: list[Symbol]
    labels: list[tuple[bytes, int]]
    section_kernels: list[bytes | None]
    symbol_kernels: list[bytes | None]
    kernel: bytes

    def of_another_kernel(self, symbols: Sequence[int]) -> bool:
        """Whether these symbols make a record another kernel's: one of them is of another kernel, and
        none of this one."""
        kernels = {self.symbol_kernels[index] for index in symbols} - {None}
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
    string_tables = {names_at} | {s.link for s in cubin.sections if s.kind == _SHT_SYMTAB}
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
            (name, section.kind, section.flags, cubin.section_label(section.link), _info(cubin, section))
        )
        parts.append((section.entry_size, section.align, _content(cubin, section, keep_all=owner == kernel)))
    return tuple(parts)


def _read(data: bytes, kernel: bytes) -> _Cubin:
    every = sections(data)
    (names_at,) = struct.unpack_from("<H", data, _SHSTRNDX_AT)
    names = [section_name(data, every[names_at], section) for section in every]
    if any(name is None for name in names):
        raise ValueError("a section's name is not in the section names' table")
    table = symbols(data, every)
    symbol_names = _symbol_names(data, table)
    entries = {name for symbol, name in zip(table, symbol_names, strict=True) if symbol.is_entry}
    if kernel not in entries:
        raise ValueError("no such kernel")
    section_kernels = _section_kernels(every, names, entries)
    symbol_kernels: list[bytes | None] = []
    for symbol, name in zip(table, symbol_names, strict=True):
        where = section_kernels[symbol.section] if 0 < symbol.section < len(every) else None
        if symbol.is_entry and where != name:  # its code named after another kernel, or after none
            raise ValueError("a kernel's code is not in its own section")
        symbol_kernels.append(where)
    return _Cubin(
        data,
        every,
        [name or b"" for name in names],
        table,
        _labels(table, symbol_names, names),
        section_kernels,
        symbol_kernels,
        kernel,
    )


def _symbol_names(data: bytes, table: list[Symbol]) -> list[bytes]:
    """Every symbol's name; TooLarge where they add up to more than the cubin (a real one stores each
    once), so that a crafted table cannot make this read one long name a million times."""
    found: list[bytes] = []
    total = 0
    for symbol in table:
        name = symbol_name(data, symbol)
        if name is None:
            raise ValueError("a symbol's name is not in its string table")
        total += len(name)
        if total > len(data):
            raise TooLarge(f"its symbols' names add up to more than its own {len(data)} bytes")
        found.append(name)
    return found


def _labels(
    table: list[Symbol], symbol_names: list[bytes], names: list[bytes | None]
) -> list[tuple[bytes, int]]:
    labels: list[tuple[bytes, int]] = []
    seen: dict[bytes, int] = {}
    for symbol, name in zip(table, symbol_names, strict=True):
        if symbol.info & 0xF == _STT_SECTION and 0 < symbol.section < len(names):
            name = b"section " + (names[symbol.section] or b"")
        labels.append((name, seen.get(name, 0)))
        seen[name] = seen.get(name, 0) + 1
    return labels


def _section_kernels(
    every: list[Section], names: list[bytes | None], entries: set[bytes]
) -> list[bytes | None]:
    """The kernel each section belongs to: the one it is named after, or, for a section that says it
    belongs to another (its info a section's index: a relocation, a kernel's attributes or constants),
    that one's; None for a section of no kernel (a device function's, or one of the whole cubin).
    ValueError where the name and the section it belongs to say two kernels: not a layout understood."""
    found: list[bytes | None] = []
    for name in names:
        named = _PER_FUNCTION.fullmatch(name or b"")
        found.append(named.group(1) if named is not None and named.group(1) in entries else None)
    for index, section in enumerate(every):
        if section.flags & _SHF_INFO_LINK and 0 < section.info < len(every):
            target = found[section.info]
            if found[index] is not None and target not in (None, found[index]):
                raise ValueError("a section named after one kernel belongs to another")
            found[index] = found[index] or target
    return found


def _is_debug(name: bytes, section: Section) -> bool:
    """Whether a section is debug information: named so, and not loaded (a section loaded on the GPU is
    digested whatever its name)."""
    stem = name.removeprefix(b".rela").removeprefix(b".rel")
    return stem.startswith(_DEBUG_PREFIXES) and not section.flags & _SHF_ALLOC


def _info(cubin: _Cubin, section: Section) -> object:
    """A section header's info word, its indexes named: a code section's symbol (its top byte, the
    register count on older architectures, as it is), another section's index where the flags say so;
    none for a symbol table (its count of local symbols, which other kernels' symbols change)."""
    if section.kind == _SHT_SYMTAB:
        return None
    if section.flags & _SHF_EXECINSTR:
        return section.info >> 24, _symbol_label(cubin, section.info & 0xFFFFFF)
    if section.flags & _SHF_INFO_LINK:
        return cubin.section_label(section.info)
    return section.info


def _symbol_label(cubin: _Cubin, index: int) -> object:
    return cubin.labels[index] if index < len(cubin.labels) else index


def _content(cubin: _Cubin, section: Section, keep_all: bool) -> object:
    """A section's content: its records re-read where it is a table that refers to symbols (those of
    another kernel left out, but from the kernel's own sections), its bytes otherwise."""
    if section.kind == _SHT_NOBITS:
        return section.size
    data = cubin.data[section.offset : section.offset + section.size]
    if section.kind == _SHT_SYMTAB:
        return _symbol_records(cubin)
    if section.kind in _RELOCATION_ENTRY:
        return _relocation_records(cubin, data, _RELOCATION_ENTRY[section.kind], keep_all)
    if section.kind == _CUDA_INFO:
        return _info_records(cubin, data, keep_all)
    if section.kind == _CUDA_CALLGRAPH:
        return _call_records(cubin, data, keep_all)
    return data


def _symbol_records(cubin: _Cubin) -> tuple[object, ...]:
    """The symbols, by label: their order changes where another kernel comes or goes."""
    return _in_order(
        [
            (cubin.labels[i], s.info, s.other, cubin.section_label(s.section), s.value, s.size)
            for i, s in enumerate(cubin.symbols)
            if not cubin.of_another_kernel([i])
        ],
        keep_all=False,
    )


def _relocation_records(cubin: _Cubin, data: bytes, size: int, keep_all: bool) -> tuple[object, ...]:
    records: list[object] = []
    for at in range(0, len(data) - size + 1, size):
        offset, info = struct.unpack_from("<QQ", data, at)
        addend = struct.unpack_from("<q", data, at + 16)[0] if size == 24 else 0
        symbol = info >> 32
        if keep_all or not cubin.of_another_kernel([symbol]):
            records.append((offset, info & 0xFFFFFFFF, cubin.labels[symbol], addend))
    return (*_in_order(records, keep_all), data[len(data) - len(data) % size :])


def _info_records(cubin: _Cubin, data: bytes, keep_all: bool) -> tuple[object, ...]:
    records: list[object] = []
    for form, attribute, value in info_records(data):
        referred: list[int] = []
        if form == INFO_SIZED and attribute in _SYMBOL_FIRST and len(value) >= 4:
            referred = [struct.unpack_from("<I", value)[0]]
            value_read: object = (cubin.labels[referred[0]], value[4:])
        elif form == INFO_SIZED and attribute == _SYMBOL_LIST and len(value) % 4 == 0:
            referred = [index for (index,) in struct.iter_unpack("<I", value)]
            value_read = tuple(cubin.labels[index] for index in referred)
        else:
            value_read = value
        if keep_all or not cubin.of_another_kernel(referred):
            records.append((form, attribute, value_read))
    return _in_order(records, keep_all)


def _call_records(cubin: _Cubin, data: bytes, keep_all: bool) -> tuple[object, ...]:
    """.nv.callgraph's (caller, callee) pairs of symbol indexes; an index past the symbols is a marker
    (-1 to -4), kept as it is."""
    records: list[object] = []
    for at in range(0, len(data) - 7, 8):
        pair = struct.unpack_from("<II", data, at)
        referred = [index for index in pair if index < len(cubin.symbols)]
        if keep_all or not cubin.of_another_kernel(referred):
            records.append(tuple(_symbol_label(cubin, index) for index in pair))
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
