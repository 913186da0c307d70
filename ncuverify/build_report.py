"""What `ncuverify build PATH` and `build --diff` print: one line per kernel, readable for hundreds of
kernels at 80 columns (the name is cut with an ellipsis, its full signature is in `--json`), and what
changed between two builds."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ncuverify.build.artifacts_diff import BuildDiff
from ncuverify.build.artifacts_listing import ListedKernel
from ncuverify.build.static import BUILD_COLUMNS, STATIC_METRICS
from ncuverify.report import format_number, line_text


def print_kernels(console: Console, title: str, kernels: list[ListedKernel]) -> None:
    """A table of the kernels' facts under title; `-` where a build lacks a fact."""
    table = Table(title=line_text(f"{title}: {len(kernels)} kernels"), title_justify="left")
    table.add_column("kernel", overflow="ellipsis", no_wrap=True, ratio=1, min_width=12)
    table.add_column("arch", no_wrap=True)
    for metric in BUILD_COLUMNS:
        table.add_column(metric.label, justify="right", no_wrap=True)
    for kernel in kernels:
        table.add_row(
            line_text(kernel.name),
            line_text(kernel.arch),
            *(Text(_number(kernel.facts.get(metric.name))) for metric in BUILD_COLUMNS),
        )
    console.print(table)


def print_diff(console: Console, changes: BuildDiff) -> None:
    """Each changed kernel with its facts before -> after and the opcodes whose counts moved; then the
    kernels added and removed, and a count line."""
    for change in changes.changed:
        console.print(line_text(f"changed {change.name} ({change.arch})", "bold"), soft_wrap=True)
        for name, before, after in change.facts:
            label = STATIC_METRICS[name].label
            console.print(line_text(f"  {label}: {_number(before)} -> {_number(after)}"), soft_wrap=True)
        if change.opcodes:
            moved = " ".join(f"{op} {before}->{after}" for op, before, after in change.opcodes)
            console.print(line_text(f"  opcodes: {moved}"), soft_wrap=True)
    for kernel in changes.added:
        console.print(line_text(f"added {kernel.name} ({kernel.arch})", "green"), soft_wrap=True)
    for kernel in changes.removed:
        console.print(line_text(f"removed {kernel.name} ({kernel.arch})", "red"), soft_wrap=True)
    console.print(
        Text(
            f"{len(changes.changed)} changed, {len(changes.added)} added, {len(changes.removed)} removed,"
            f" {changes.unchanged} unchanged"
        )
    )


def _number(value: float | None) -> str:
    return format_number(value) if value is not None else "-"
