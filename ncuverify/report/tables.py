"""The tables beside the claims: each kernel's static facts (`build`) and what moved against a
baseline."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ncuverify.baseline.ratchet import KernelMove
from ncuverify.baseline.snapshot import Change
from ncuverify.build import BUILD_COLUMNS, KernelBuild
from ncuverify.build.built import build_warnings
from ncuverify.errors import ExitCode
from ncuverify.export.outcome import RunOutcome, headline
from ncuverify.judge.claims import format_number
from ncuverify.report.claims import SHOWN_KERNELS, table_fits
from ncuverify.report.text import block_text, line_text, packed, print_prose, prose_lines
from ncuverify.text import one_line


def print_build(console: Console, path: Path, built: dict[str, KernelBuild] | str) -> None:
    """The static facts of each kernel of a file, or why it did not build: a table where it fits the
    terminal with every name whole, else a block per kernel."""
    if isinstance(built, str):
        console.print(line_text(f"{path}: input error", "bold red"), soft_wrap=True)
        console.print(block_text(built), soft_wrap=True)
        return
    table = _build_table(path, built)
    if table_fits(console, table):
        console.print(table)
    else:
        print_prose(console, path, "bold")
        for name, kernel in built.items():
            _print_kernel_block(console, name, kernel)
    problems = [
        f"{name}: {problem}" for name, kernel in built.items() for problem in kernel.facts.discrepancies()
    ]
    for problem in problems:
        print_prose(console, problem, "bold magenta")
    for warning in build_warnings(built):
        print_prose(console, f"warning: {warning}", "bold yellow")


def _build_table(path: Path, built: dict[str, KernelBuild]) -> Table:
    table = Table(title=line_text(path), title_justify="left")
    for column in ("kernel", "entry", "arch"):
        table.add_column(column, no_wrap=True)  # names are never cut or folded
    for metric in BUILD_COLUMNS:
        table.add_column(metric.label, justify="right", no_wrap=True)
    table.add_column("SASS mix", overflow="fold")
    for name, kernel in built.items():
        metrics = kernel.facts.metrics()
        table.add_row(
            line_text(name),
            line_text(kernel.entry),
            line_text(kernel.arch),
            *(Text(_fact(metrics, metric.name)) for metric in BUILD_COLUMNS),
            line_text(_sass_mix(kernel)),
        )
    return table


def _print_kernel_block(console: Console, name: str, kernel: KernelBuild) -> None:
    """A kernel's static facts where the table does not fit: its name and entry whole, then its facts
    as `label value` items broken between items."""
    heading = name if kernel.entry == name else f"{name} (entry {kernel.entry})"
    print_prose(console, f"{heading}, {kernel.arch}", "bold")
    metrics = kernel.facts.metrics()
    facts = [f"{metric.label} {_fact(metrics, metric.name)}" for metric in BUILD_COLUMNS]
    indent = "  "
    for packed_line in packed([one_line(fact) for fact in facts], console.width - len(indent)):
        console.print(Text(indent + packed_line), soft_wrap=True)
    for mix_line in prose_lines(f"SASS mix: {_sass_mix(kernel)}", console.width - len(indent)):
        console.print(Text.assemble(indent, mix_line), soft_wrap=True)


def _fact(metrics: dict[str, float], name: str) -> str:
    return format_number(metrics[name]) if name in metrics else "-"


def _sass_mix(kernel: KernelBuild) -> str:
    return " ".join(f"{op}×{n}" for op, n in kernel.facts.mix().most_common(10)) or "-"


def print_against_baseline(console: Console, outcome: RunOutcome) -> None:
    """What moved against the baseline (where it could be compared), then what the run came to, in the
    words the other outputs open with: a regression alone fails a run whose every claim holds."""
    if outcome.compared is not None:
        if outcome.compared.toolkits is not None:
            console.print(line_text(f"note: {outcome.compared.toolkits}", "bold yellow"), soft_wrap=True)
        print_changes(console, outcome.compared.changes, outcome.compared.moves)
    style = "bold green" if outcome.code is ExitCode.OK else "bold red"
    print_prose(console, f"ncuverify: {headline(outcome)}", style)


def print_changes(console: Console, changes: Sequence[Change], moves: Sequence[KernelMove] = ()) -> None:
    """What moved against the baseline beyond its tolerance (regressions first, then growths the
    allow-list accepts, then improvements), and the kernels of sets added and removed since."""
    print_moves(console, moves)
    if not changes:
        console.print(Text("baseline: no measure moved beyond its tolerance", style="green"))
        return
    ordered = sorted(changes, key=lambda c: (not c.worse, c.allowed is not None))
    table = Table(title="compared with the baseline", title_justify="left")
    for column in ("file", "case", "measure", "baseline", "now", "change", ""):
        numbers = column in ("baseline", "now", "change")
        table.add_column(column, justify="right" if numbers else "left", no_wrap=column != "")
    for change in ordered:
        table.add_row(
            line_text(change.file),
            line_text(change.case),
            line_text(change.metric),
            Text(format_number(change.before)),
            Text(format_number(change.after)),
            Text(_moved(change)),
            _verdict(change),
        )
    if table_fits(console, table):
        console.print(table)
    else:  # a line each, no name cut
        console.print(Text("compared with the baseline"))
        for change in ordered:
            said = f"{change.file} {change.case} {change.metric}: {format_number(change.before)} -> "
            said += f"{format_number(change.after)} ({_moved(change)})"
            console.print(Text.assemble(_verdict(change), " ", line_text(said)), soft_wrap=True)
    worse = sum(1 for c in changes if c.worse and c.allowed is None)
    allowed = sum(1 for c in changes if c.allowed is not None)
    said = f"baseline: {worse} regressed, {len(changes) - worse - allowed} improved"
    console.print(Text(said + (f", {allowed} grew as the allow-list accepts" if allowed else "")))


def _moved(change: Change) -> str:
    ratio = change.ratio
    return f"×{ratio:.3g}" if ratio is not None else f"+{format_number(change.after - change.before)}"


def _verdict(change: Change) -> Text:
    if change.allowed is not None:
        return line_text(f"allowed: {change.allowed}", "yellow")
    return Text("worse", style="bold red") if change.worse else Text("better", style="green")


def print_moves(console: Console, moves: Sequence[KernelMove]) -> None:
    """Kernels of sets added or removed since the baseline (the first SHOWN_KERNELS of each): reported,
    not failing."""
    for added, word in ((True, "added"), (False, "removed")):
        cases = [f"{move.file}: {move.case}" for move in moves if move.added is added]
        if not cases:
            continue
        console.print(
            line_text(f"baseline: {len(cases)} kernels {word} since (not a failure)"), soft_wrap=True
        )
        for case in cases[:SHOWN_KERNELS]:
            console.print(line_text(f"  {case}"), soft_wrap=True)
        if len(cases) > SHOWN_KERNELS:
            console.print(Text(f"  and {len(cases) - SHOWN_KERNELS} more"))
