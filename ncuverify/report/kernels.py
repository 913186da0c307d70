"""What `ncuverify build PATH` and `build --diff` print: one line per kernel, readable for hundreds of
kernels at 80 columns (a long name on a line of its own, never cut; its full signature is in
`--json`), and what changed between two builds."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from ncuverify.build.artifacts_diff import BuildDiff
from ncuverify.build.artifacts_listing import ListedKernel
from ncuverify.build.static import BUILD_COLUMNS, STATIC_METRICS
from ncuverify.report import format_number, line_text, print_prose
from ncuverify.text import counted


def print_kernels(console: Console, title: str, kernels: list[ListedKernel]) -> None:
    """One line per kernel under title, columns aligned; `-` where a build lacks a fact. Where the
    longest name leaves the facts no room in the console's width, each name stands whole on a line of
    its own, its facts on the next (a name is never cut: it is what a claim or a filter is written with)."""
    headings = ["arch", *(metric.label for metric in BUILD_COLUMNS)]
    rows = [[kernel.arch, *(_number(kernel.facts.get(m.name)) for m in BUILD_COLUMNS)] for kernel in kernels]
    widths = [max([len(heading), *(len(row[i]) for row in rows)]) for i, heading in enumerate(headings)]

    def facts(cells: list[str]) -> str:
        columns = [
            cells[0].ljust(widths[0]),
            *(c.rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True)),
        ]
        return "".join(f"  {column}" for column in columns)

    name_width = max([len("kernel"), *(len(kernel.name) for kernel in kernels)])
    beside = name_width + len(facts(headings)) <= console.width
    print_prose(console, f"{title}: {counted(len(kernels), 'kernel')}", "bold")
    if beside:
        console.print(Text("kernel".ljust(name_width) + facts(headings), style="bold"), soft_wrap=True)
    else:
        console.print(Text("kernel", style="bold"), soft_wrap=True)
        console.print(Text(facts(headings), style="bold"), soft_wrap=True)
    for kernel, row in zip(kernels, rows, strict=True):
        if beside:
            console.print(line_text(kernel.name.ljust(name_width) + facts(row)), soft_wrap=True)
        else:
            console.print(line_text(kernel.name), soft_wrap=True)
            console.print(Text(facts(row)), soft_wrap=True)


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
