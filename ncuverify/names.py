"""The names that every stage shares, at the bottom of the package: the prefixes that tell a metric's
kind (a static fact, a SASS count, a buffer read back, what ncu reads without replaying the kernel),
the static facts' names, the time metric, and C++ function names read back from demangled signatures.
This module imports nothing of ncuverify, so the spec, the build, the profiler and the reports can all
import it.
"""

from __future__ import annotations

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
