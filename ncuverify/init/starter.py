"""A starter expectation file for the kernels of a source: one entry per kernel, one case per kernel with
a placeholder argument per parameter, and claims on its static facts at today's values, which hold now
and fail when a change makes them worse (a ratchet from the first commit)."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from datetime import date

from ncuverify.init.names import kernel_ids
from ncuverify.init.placeholders import Placeholder, parameter_types, placeholder
from ncuverify.init.sources import SourceKernel, SourceKernels
from ncuverify.names import (
    REGISTERS,
    SHARED_STATIC_BYTES,
    SPILL_LOAD_BYTES,
    SPILL_STORE_BYTES,
    STACK_FRAME_BYTES,
)
from ncuverify.spec.fields import MAX_TEXT_LENGTH

# The names an `entry:` takes, as the expectation file's model has them.
_ENTRY = re.compile(r"[A-Za-z_][A-Za-z0-9_:]*(<.+>)?", re.ASCII | re.DOTALL)
_PRINTABLE_ASCII = re.compile(r"[\x20-\x7e]*")


@dataclass(frozen=True)
class StaticClaim:
    """A claim a starter file makes on every kernel: a static fact, held where it is today."""

    suffix: str  # the claim's id is the kernel's key and this
    metric: str
    relation: str  # at_most: may get better; equals: spills change only on purpose
    figure: str  # the fact in words, after its value


STATIC_CLAIMS = (
    StaticClaim("registers", REGISTERS, "at_most", "registers per thread"),
    StaticClaim("spill_stores", SPILL_STORE_BYTES, "equals", "bytes of spill stores"),
    StaticClaim("spill_loads", SPILL_LOAD_BYTES, "equals", "bytes of spill loads"),
    StaticClaim("stack_frame", STACK_FRAME_BYTES, "at_most", "bytes of stack frame"),
    StaticClaim("shared_static", SHARED_STATIC_BYTES, "at_most", "bytes of static shared memory"),
)


@dataclass(frozen=True)
class StarterKernel:
    """One kernel of the starter file: its key (of kernel and case alike), its entry, its arguments
    (None where the cubin does not list its parameters) and its static facts."""

    key: str
    entry: str
    signature: str
    arguments: tuple[Placeholder, ...] | None
    facts: tuple[tuple[StaticClaim, float], ...]

    @property
    def launchable(self) -> bool:
        """Whether a case can launch it: every parameter has an argument of its size. Only then does
        it get a case, and claims."""
        return self.arguments is not None and all(a.argument is not None for a in self.arguments)


@dataclass(frozen=True)
class LeftOut:
    """A kernel of the source that an `entry:` cannot name, and why."""

    name: str
    reason: str


@dataclass(frozen=True)
class Starter:
    source: str  # the kernel file, relative to the expectation file's folder
    arch: str
    recorded: date
    schema: str  # the JSON Schema's path, relative to the expectation file's folder
    kernels: tuple[StarterKernel, ...]
    left_out: tuple[LeftOut, ...]
    source_key: str = "file"  # how a kernel names its source: `file:`, or `binary:` for an artifact
    compiler: str = "nvrtc"  # what compiles the source; nvcc is written out as `compiler: nvcc`


def starter(found: SourceKernels, arch: str, recorded: date, schema: str) -> Starter:
    """The starter file for the kernels found; every kernel an entry can name is in it."""
    names = Counter(kernel.built.name for kernel in found.kernels)
    symbols = Counter(kernel.built.symbol for kernel in found.kernels)
    reasons = [_left_out_reason(k, names, symbols) for k in found.kernels]
    nameable = [k for k, reason in zip(found.kernels, reasons, strict=True) if reason is None]
    keys = kernel_ids(dict.fromkeys(k.built.name for k in nameable))
    left_out = [
        LeftOut(k.built.name, reason)
        for k, reason in zip(found.kernels, reasons, strict=True)
        if reason is not None
    ]
    kernels = tuple(
        StarterKernel(keys[k.built.name], k.built.name, k.built.signature, _arguments(k), _facts(k))
        for k in nameable
    )
    key = "binary" if found.binary else "file"
    return Starter(
        found.file, arch, recorded, schema, kernels, tuple(dict.fromkeys(left_out)), key, found.compiler
    )


def _left_out_reason(kernel: SourceKernel, names: Counter[str], symbols: Counter[str]) -> str | None:
    name = kernel.built.name
    if len(name) > MAX_TEXT_LENGTH or not _PRINTABLE_ASCII.fullmatch(name) or not _ENTRY.fullmatch(name):
        return "an entry cannot name it (an unnamed namespace, or characters an entry does not take)"
    if symbols[kernel.built.symbol] > 1:  # one kernel, compiled into several cubins of an artifact
        return f"in {symbols[kernel.built.symbol]} of the artifact's cubins: an entry names one kernel"
    if names[name] > 1:
        return f"overloaded ({names[name]} kernels share the name): an entry names one function"
    return None


def _arguments(kernel: SourceKernel) -> tuple[Placeholder, ...] | None:
    """A placeholder per parameter; None where the cubin does not list the parameters."""
    sizes = kernel.parameter_sizes
    if sizes is None:
        return None
    types = parameter_types(kernel.built.signature)
    if types is not None and len(types) != len(sizes):
        types = None  # the demangled list and the cubin's disagree: trust the cubin's sizes
    return tuple(
        placeholder(types[index] if types is not None else None, size) for index, size in enumerate(sizes)
    )


def _facts(kernel: SourceKernel) -> tuple[tuple[StaticClaim, float], ...]:
    metrics = kernel.built.facts.metrics()
    return tuple((claim, metrics[claim.metric]) for claim in STATIC_CLAIMS if claim.metric in metrics)
