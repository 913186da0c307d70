"""A starter expectation file as YAML text, with comments that say what to edit before profiling."""

from __future__ import annotations

from ncuverify.init.names import scalar
from ncuverify.init.starter import Starter, StarterKernel
from ncuverify.text import one_line

# How much of a C++ type or name a comment shows.
_SHOWN = 200


def starter_yaml(starter: Starter) -> str:
    """The whole file."""
    launched = [kernel for kernel in starter.kernels if kernel.launchable]
    lines = [
        *_preamble(starter),
        "",
        f"arch: {starter.arch}",
        "",
        "kernels:",
        *_left_out(starter),
    ]
    for kernel in starter.kernels:
        lines += [f"  {scalar(kernel.key)}:", f"    {starter.source_key}: {scalar(starter.source)}"]
        lines += [f"    entry: {scalar(kernel.entry)}"]
        # NVRTC is the default; a source with host code in it needs nvcc, here as when init built it.
        lines += ["    compiler: nvcc", ""] if starter.compiler == "nvcc" else [""]
    lines += ["cases:", "  # Edit each launch before profiling: grid, block, buffer counts and fills."]
    for kernel in starter.kernels:
        lines += _case(kernel) if kernel.launchable else _no_case(kernel)
    lines += ["claims:"]
    for kernel in launched:
        lines += _claims(kernel, starter)
    return "\n".join(lines) + "\n"


def _preamble(starter: Starter) -> list[str]:
    when = f"{starter.recorded.isoformat()} for {starter.arch}"
    return [
        f"# yaml-language-server: $schema={starter.schema}",
        f"# Starter expectations for {_shown(starter.source)}, written by `ncuverify init` on {when}.",
        "#",
        "# Each kernel has one case, and claims on its static facts at the values its build has today",
        *_facts_said(starter),
        "#",
        "# Before profiling, edit each case: its launch geometry (grid, block), its buffers' sizes (count)",
        "# and fills, and every argument marked `replace`; then add claims on what ncu measures.",
    ]


def _facts_said(starter: Starter) -> list[str]:
    """Which facts the claims hold: an artifact carries no compiler report, so no spills."""
    if starter.source_key == "binary":
        return [
            "# (registers, stack frame, shared memory, as its cubin has them; an artifact does not say its",
            "# spills): they hold now, fail when a change makes them worse, and need no GPU (`ncuverify",
            "# check --static-only`). Lower a bound when a kernel gets better.",
        ]
    return [
        "# (registers, spills, stack frame, static shared memory): they hold now, fail when a change makes",
        "# them worse, and need no GPU (`ncuverify check --static-only`). Lower a bound when a kernel",
        "# gets better.",
    ]


def _left_out(starter: Starter) -> list[str]:
    said = dict.fromkeys(f"  # not here: {_shown(left.name)}: {left.reason}" for left in starter.left_out)
    return list(said)


def _case(kernel: StarterKernel) -> list[str]:
    lines = [
        f"  {scalar(kernel.key)}:",
        f"    kernel: {scalar(kernel.key)}",
        "    grid: 1",
        "    block: 32",
    ]
    arguments = kernel.arguments or ()
    if not arguments:
        return [*lines, "    args: []", ""]
    lines.append("    args:")
    for index, argument in enumerate(arguments):
        note = "replace: " if argument.replace else ""
        lines.append(f"      - {argument.argument}  # {note}parameter {index}: {_shown(argument.parameter)}")
    return [*lines, ""]


def _no_case(kernel: StarterKernel) -> list[str]:
    """Why a kernel has no case: an argument of some parameter's size does not exist, or its cubin
    does not list its parameters."""
    if kernel.arguments is None:
        why = "its cubin does not list its parameters"
    else:
        odd = [
            f"{index} ({_shown(a.parameter)})"
            for index, a in enumerate(kernel.arguments)
            if a.argument is None
        ]
        why = f"no argument has the size of parameter {', '.join(odd)}"
    return [f"  # {scalar(kernel.key)}: no case: {why}; write one to launch it.", ""]


def _claims(kernel: StarterKernel, starter: Starter) -> list[str]:
    recorded = f"recorded on {starter.recorded.isoformat()} for {starter.arch}"
    lines = []
    for claim, value in kernel.facts:
        number = int(value) if float(value).is_integer() else value
        lines += [
            f"  - id: {scalar(f'{kernel.key}_{claim.suffix}')}",
            f"    case: {scalar(kernel.key)}",
            f"    metric: {claim.metric}",
            f"    expect: {{{claim.relation}: {number}}}",
            f"    why: {scalar(f'{number} {claim.figure}, {recorded} by ncuverify init')}",
        ]
    return lines


def _shown(text: str) -> str:
    """Text fit for a comment: one line, at most _SHOWN characters."""
    line = one_line(text)
    return line if len(line) <= _SHOWN else line[: _SHOWN - 3] + "..."
