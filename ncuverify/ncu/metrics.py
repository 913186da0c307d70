"""Which metric names Nsight Compute knows, per chip, so that a misspelt metric is an input error
found before profiling (with a "did you mean"), not a profiler error after it.

The lists ship with the package (data/metrics-<chip>.txt, from `ncu --query-metrics --chip <chip>`).
Launch statistics and device attributes are not in those lists; ncu itself judges those names.
"""

from __future__ import annotations

import difflib
import re
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING

from ncuverify.errors import InputError
from ncuverify.names import DEVICE_PREFIX, LAUNCH_PREFIX, PROFILER_PREFIX, is_ncu_metric
from ncuverify.processes import TimedOut, run_bounded

if TYPE_CHECKING:
    from ncuverify.spec import Spec

# The chip ncu names for a build target (`ncu --query-metrics --chip CHIP`); the package ships gh100's list.
CHIPS = {
    "sm_70": "gv100",
    "sm_75": "tu102",
    "sm_80": "ga100",
    "sm_86": "ga102",
    "sm_87": "ga10b",
    "sm_89": "ad102",
    "sm_90": "gh100",
    "sm_90a": "gh100",
}
SHIPPED = {"gh100"}
_UNLISTED_PREFIXES = (LAUNCH_PREFIX, DEVICE_PREFIX + "attribute_", PROFILER_PREFIX)
# Accepted by ncu (they are in recordings made with it), absent from its own list.
_UNLISTED = {"sm__maximum_warps_per_active_cycle_pct", "sm__maximum_warps_avg_per_active_cycle"}
# How ncu's list names a metric's base: lines that start otherwise are headings or explanations.
_METRIC_BASE = re.compile(r"[a-z][a-z0-9_]*__[A-Za-z0-9_]+")
# ncu lists a chip's metrics in a few seconds; one that takes longer than this is stuck.
QUERY_TIMEOUT_S = 60.0


def known_bases(chip: str, ncu: str | None = None) -> frozenset[str] | None:
    """The chip's metric base names: shipped with the package, else asked of ncu; None if neither has
    them. InputError where ncu does not answer within QUERY_TIMEOUT_S: the names cannot be checked."""
    listed = _listed(chip, ncu)
    if isinstance(listed, str):
        raise InputError(listed)
    return listed


@cache  # one question per chip and ncu, also when ncu did not answer
def _listed(chip: str, ncu: str | None) -> frozenset[str] | str | None:
    """The chip's metric base names, None where there is no list, or why ncu gave none."""
    if chip in SHIPPED:
        text = resources.files("ncuverify").joinpath(f"data/metrics-{chip}.txt").read_text()
        return frozenset(
            line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")
        )
    if ncu is None:
        return None
    command = [ncu, "--query-metrics", "--chip", chip]
    try:
        output = run_bounded(command, QUERY_TIMEOUT_S).stdout
    except TimedOut:
        return (
            f"{ncu} --query-metrics --chip {chip} did not answer within {QUERY_TIMEOUT_S:g} s; stopped: "
            f"the metric names cannot be checked against ncu's list"
        )
    except OSError:
        return None
    words = (line.split(maxsplit=1)[0] for line in output.splitlines() if line[:1].islower())
    return frozenset(word for word in words if _METRIC_BASE.fullmatch(word)) or None


MAX_SUGGESTIONS = 20
MAX_SUGGESTED_LENGTH = 128


def unknown(names: set[str], arch: str, ncu: str | None = None) -> dict[str, str]:
    """The names ncu does not know on arch's chip, each with a suggestion ('' if none); {} where neither
    the package nor ncu has a list for that chip."""
    chip = CHIPS.get(arch)
    bases = known_bases(chip, ncu) if chip is not None else None
    if bases is None:
        return {}
    problems: dict[str, str] = {}
    for name in sorted(names):
        base = name.split(".", 1)[0]
        if base in bases or name in _UNLISTED or name.startswith(_UNLISTED_PREFIXES):
            continue
        # A suggestion costs a pass over thousands of names: only the first few unknown names get one.
        wanted = len(problems) < MAX_SUGGESTIONS and len(base) <= MAX_SUGGESTED_LENGTH
        close = difflib.get_close_matches(base, bases, n=1, cutoff=0.8) if wanted else []
        problems[name] = close[0] + name[len(base) :] if close else ""
    return problems


def unchecked(arch: str, ncu: str | None = None) -> str | None:
    """Why metric names cannot be checked for arch here (None where they can): no list ships for its
    chip and there is no ncu to ask for one."""
    chip = CHIPS.get(arch)
    if chip is None:
        return f"ncuverify does not know which chip {arch} is, so it has no list of ncu's metrics for it"
    if _listed(chip, ncu) is None:
        shipped = ", ".join(sorted(SHIPPED))
        asked = f"{ncu} --query-metrics gave none" if ncu else "no ncu here to ask for one"
        return f"no list of ncu's metrics for {chip} ({arch}): ncuverify ships {shipped}'s, and {asked}"
    return None


def check_metric_names(spec: Spec, arch: str, ncu: str | None = None) -> None:
    """Refuse, before anything runs, metric names that ncu does not know on arch's chip."""
    problems = []
    for claim in spec.content.claims:
        names = {ref.name for ref in claim.metric_refs() if is_ncu_metric(ref.name)}
        for name, suggestion in unknown(names, arch, ncu).items():
            hint = f" (did you mean {suggestion}?)" if suggestion else ""
            problems.append(f"{spec.path}: claim {claim.id}: ncu knows no metric {name} on {arch}{hint}")
    if problems:
        raise InputError("\n".join(problems))
