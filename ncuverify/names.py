"""The names that every stage shares, at the bottom of the package: the prefixes that tell a metric's
kind (a static fact, a SASS count, a buffer read back, what ncu reads without replaying the kernel),
the static facts' names, the time metric, C++ function names read back from demangled signatures, and
a case's identity (`QualifiedCase`). This module imports nothing of ncuverify, so the spec, the build, the profiler and the reports can all
import it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

# Static facts, read from a build without a GPU: `static__registers_per_thread`.
STATIC_PREFIX = "static__"
# SASS counts are metrics whose name carries the pattern: `sass:LDG\.E\.128`.
SASS_PREFIX = "sass:"
# Read back by the runner from a named buffer: buffer__<name>.<statistic>.
BUFFER_PREFIX = "buffer__"

# ncu's own metrics, by prefix.
LAUNCH_PREFIX = "launch__"  # the launch's configuration: grid, block, registers
DEVICE_PREFIX = "device__"  # the device's attributes
PROFILER_PREFIX = "profiler__"  # the profiler's own counts
NCU_SASS_PREFIX = "sass__"  # counted by patching the kernel's SASS, as smsp__sass_* are
# A launch's time, which ncu reads without replaying the kernel (a repeated case repeats for it alone).
TIME_PREFIX = "gpu__time_duration"
TIME_METRIC = "gpu__time_duration.sum"
# ncu's replay passes of a launch, on its raw page.
PASSES_METRIC = "profiler__replayer_passes"

# The static facts (ncuverify.build.static reads each).
REGISTERS = "static__registers_per_thread"
SPILL_STORE_BYTES = "static__spill_store_bytes"
SPILL_LOAD_BYTES = "static__spill_load_bytes"
STACK_FRAME_BYTES = "static__stack_frame_bytes"
SHARED_STATIC_BYTES = "static__shared_static_bytes"
BARRIERS = "static__barriers"
LOCAL_BYTES = "static__local_bytes"
SASS_INSTRUCTIONS = "static__sass_instructions"
# In the README's order, which is also the order a baseline compares them in.
STATIC_FACTS = (
    REGISTERS,
    SPILL_STORE_BYTES,
    SPILL_LOAD_BYTES,
    STACK_FRAME_BYTES,
    SHARED_STATIC_BYTES,
    BARRIERS,
    LOCAL_BYTES,
    SASS_INSTRUCTIONS,
)


def is_static(metric: str) -> bool:
    """Whether a metric is read from the build rather than measured: a static fact or a SASS count."""
    return metric.startswith((STATIC_PREFIX, SASS_PREFIX))


def is_ncu_metric(metric: str) -> bool:
    """Whether ncu measures this name (rather than the build, or the runner reading a buffer back)."""
    return not (is_static(metric) or metric.startswith(BUFFER_PREFIX))


def is_time(metric: str) -> bool:
    """Whether a metric is a launch's time."""
    return metric.startswith(TIME_PREFIX)


def is_patched(metric: str) -> bool:
    """Whether ncu collects the metric by patching the kernel's SASS (smsp__sass_*, sass__*)."""
    return metric.startswith(NCU_SASS_PREFIX) or "__sass_" in metric


# --- C++ names --------------------------------------------------------------------------------------------

_OPENING = {")": "(", ">": "<", "]": "["}


def function_name(signature: str) -> str:
    """The function's qualified name, template arguments included, from a demangled signature:
    `void stride<float>(float*, int)` -> `stride<float>`, `ns::copy(float*)` -> `ns::copy`. A name that
    is no signature comes back as it is."""
    text = signature.strip()
    if not text.endswith(")"):
        return text
    start = _matching_open(text, len(text) - 1)
    if start is None or start == 0:
        return text
    name = text[:start].rstrip()
    # Drop the return type (`void `): the last space outside brackets separates it from the name.
    depth = 0
    for index in range(len(name) - 1, -1, -1):
        character = name[index]
        if character in _OPENING:
            depth += 1
        elif character in _OPENING.values():
            depth -= 1
        elif character == " " and depth == 0:
            return name[index + 1 :]
    return name


def _matching_open(text: str, close: int) -> int | None:
    """Where the bracket that closes at close opens, counting (), <> and [] alike."""
    depth = 0
    for index in range(close, -1, -1):
        character = text[index]
        if character in _OPENING:
            depth += 1
        elif character in _OPENING.values():
            depth -= 1
            if depth == 0:
                return index
    return None


def same_name(written: str, function: str) -> bool:
    """Whether a name as a user writes it (`stride<float>`, `f<float,2>`) is the function's, spacing
    aside (demanglers write `f<float, 2>`)."""
    return "".join(written.split()) == "".join(function.split())


# A folder holding one of these is the root of a project: expectation files reach no file above it.
PROJECT_MARKERS = (".git", "pyproject.toml", ".ncuverify-root")


def outside_project(root: object, of: str = "") -> str:
    """How every message says a path lies outside the project (of a file): its root and what makes a
    folder one, so that a reader knows how to draw it larger."""
    markers = ", ".join(PROJECT_MARKERS)
    return f"outside the project{f' of {of}' if of else ''} ({root}: the nearest folder up holding {markers})"


# --- a case's identity ------------------------------------------------------------------------------------

FILE_SEP = "::"  # between a file's key and its case: `expectations/x.yaml::add`
NUMBER_SEP = "#"  # a launch of a `combine: each` program case (`add#2`), or a step of a sequence
REPEATS = " (repeats)"  # a repeated case's repeats, profiled for their time alone: `x.yaml::add (repeats)`
# `KEY[kernel]`: one kernel of a set (a key is an id, so no case of the file's own is named so).
_SET_KEY = r"[A-Za-z_][A-Za-z0-9_]*"
_SET_CASE = re.compile(rf"({_SET_KEY})\[(.+)\]", re.DOTALL)
_NUMBERED = re.compile(r"(.+)#([1-9][0-9]*)", re.DOTALL)


@dataclass(frozen=True)
class QualifiedCase:
    """A case's identity, in one grammar: `[<file key>::]<case>[#<n>][ (repeats)]`, or a kernel of a set,
    `<KEY>[<kernel>]`. file is the file's key (it may hold `::`; None for a case named within its file);
    launch the n of `case#n` (a launch of a `combine: each` program case, or a step of a sequence);
    set_kernel a kernel's label in the set case names (it may hold any character); repeats the launches
    of a repeated case profiled for their time alone. str gives the text stored in plans, recordings
    and outputs, and parse reads it back: a value that str could not write unambiguously is refused
    with a ValueError."""

    file: str | None
    case: str
    launch: int | None = None
    set_kernel: str | None = None
    repeats: bool = False

    def __post_init__(self) -> None:
        problem = self._problem()
        if problem is not None:
            raise ValueError(f"not a case's identity: {problem}")

    def _problem(self) -> str | None:
        if self.set_kernel is not None:
            if not re.fullmatch(_SET_KEY, self.case) or not self.set_kernel:
                return f"a kernel set's key is an id, and its kernel's label not empty: {self.case!r}"
            if self.file is not None or self.launch is not None or self.repeats:
                return "a kernel of a set is a row of its file's table: no file, launch or repeats"
            return None
        if not self.case or self.case.startswith(":") or FILE_SEP in self.case:
            return f"a case's name is not empty and holds no {FILE_SEP!r}: {self.case!r}"
        if "[" in self.case or "]" in self.case:
            return f"a case's name holds no brackets: {self.case!r}"
        if self.case.endswith(REPEATS) or _NUMBERED.fullmatch(self.case):
            return f"a case's name does not end with{REPEATS} or #<n>: {self.case!r}"
        if self.launch is not None and self.launch < 1:
            return f"a launch or step is numbered from 1: {self.launch}"
        return None

    def __str__(self) -> str:
        return (
            (f"{self.file}{FILE_SEP}" if self.file is not None else "")
            + self.name
            + (REPEATS if self.repeats else "")
        )

    @property
    def name(self) -> str:
        """The case as its file's measurement table names it: `add`, `add#2`, `gemms[axpy<64>]`."""
        if self.set_kernel is not None:
            return f"{self.case}[{self.set_kernel}]"
        return self.case + (f"{NUMBER_SEP}{self.launch}" if self.launch is not None else "")

    @classmethod
    def parse(cls, text: str) -> QualifiedCase:
        """The identity text names (as str writes it); ValueError where text is no case's identity."""
        repeats = text.endswith(REPEATS)
        rest = text.removesuffix(REPEATS)
        in_set = _SET_CASE.fullmatch(rest)
        if in_set is not None:
            return cls(None, in_set.group(1), set_kernel=in_set.group(2), repeats=repeats)
        file, sep, name = rest.rpartition(FILE_SEP)  # a case's name holds no `::`; a file's key may
        numbered = _NUMBERED.fullmatch(name)
        launch = int(numbered.group(2)) if numbered is not None else None
        case = numbered.group(1) if numbered is not None else name
        return cls(file if sep else None, case, launch, repeats=repeats)

    @classmethod
    def of(cls, file: str | None, name: str) -> QualifiedCase:
        """The case of file's that its table names so (`add`, a step `reduce#2`); ValueError where
        name names no case."""
        return cls.parse(name).in_file(file)

    def in_file(self, file: str | None) -> QualifiedCase:
        """This case of file's (None: named within its file)."""
        return replace(self, file=file)

    def without_launch(self) -> QualifiedCase:
        """The case itself, of which this is a launch or a step (`add` of `add#2`)."""
        return replace(self, launch=None)

    def without_repeats(self) -> QualifiedCase:
        """The case whose repeats these are (`f::add` of `f::add (repeats)`)."""
        return replace(self, repeats=False)
