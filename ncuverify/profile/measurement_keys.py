"""Measurement keys: for every case a run profiles, one digest of everything that can change its
figures, so that `check --reuse` takes a case's recorded figures only where nothing of that changed.

A built case's key holds its kernel's code (the cubin's sections, but for its line table: a comment
that moves the lines after it changes `.debug_line` alone, with NVRTC and nvcc alike, and the folder
of the source changes it and its relocations, `.rela.debug_line`; the code ncu measures stays as it
was), what it launches with (spec.digests.case_digests: geometry, arguments,
fills and the .npy files' bytes), the keys of the steps before it in a sequence, the ncu metrics its
claims ask for, and the GPU and tools (name, architecture, drivers, ncu, clock and cache control, the
ncuverify version). A program case's key holds its program, the digests of the files its command
names (spec.digests.program_file_digests), its metrics and the GPU. Where ncu's version is not known,
no key is made: nothing is reused across an ncu that cannot be named.
"""

from __future__ import annotations

import hashlib
import json
import struct
from collections.abc import Mapping, Sequence

from ncuverify.build.artifacts_elf import TooLarge, section_name, sections
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
# The sections of a cubin that say where the code came from (its line table, which names the source's
# folder, and the relocations into it), not what it does.
_LINE_SECTIONS = frozenset({b".debug_line", b".rela.debug_line"})
_SHSTRNDX_AT = 62  # e_shstrndx in a 64-bit ELF header
_NOBITS = 8  # a section that takes no bytes of the file


def gpu_identity(provenance: Provenance) -> dict[str, str | None] | None:
    """The GPU and tools of a provenance, as keys hold them; None where ncu's version is unknown."""
    if provenance.ncu_version is None:
        return None
    return {name: getattr(provenance, name) for name in IDENTITY_FIELDS}


def code_digest(cubin: bytes) -> str:
    """A digest of a cubin's sections (names and bytes), its line table left out; of all its bytes
    where it is no ELF that can be read."""
    digest = hashlib.sha256()
    try:
        every = sections(cubin)
        (names_at,) = struct.unpack_from("<H", cubin, _SHSTRNDX_AT)
        names = every[names_at]
        for section in every:
            name = section_name(cubin, names, section) or b""
            if name in _LINE_SECTIONS:
                continue
            data = b"" if section.kind == _NOBITS else cubin[section.offset : section.offset + section.size]
            digest.update(struct.pack("<IIQQ", len(name), section.kind, section.size, len(data)))
            digest.update(name)
            digest.update(data)
    except (struct.error, ValueError, IndexError, TooLarge):
        return "bytes:" + hashlib.sha256(cubin).hexdigest()
    return digest.hexdigest()


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
    codes: dict[str, str] = {}
    keys: dict[str, str] = {}  # the file's own case names
    for name, metrics in runs.items():
        kernel = file.spec.content.cases[name].kernel
        build = file.builds.get(kernel)
        if build is None:  # not built: nothing of it is profiled
            continue
        if kernel not in codes:
            codes[kernel] = code_digest(build.cubin)
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
