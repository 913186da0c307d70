"""An explanation as text for a terminal, JUnit or Markdown."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ncuverify.explain.explanation import Explanation, SourceLine
from ncuverify.explain.topics import TOPICS


def render(explanation: Explanation, display_path: Callable[[str], str] = lambda p: p) -> list[str]:
    """Plain text lines: one per rule, one per source line, or one saying why there is no line."""
    unit = f"excessive {TOPICS[explanation.topic].unit}" if explanation.topic in TOPICS else "excess"
    out = [f"ncu {rule.rule}: {rule.text}" for rule in explanation.rules]
    out += [_render_line(line, unit, display_path) for line in explanation.lines]
    if not explanation.lines:
        out.append(_nothing_attributed(explanation, unit))
    return out


def _render_line(line: SourceLine, unit: str, display_path: Callable[[str], str]) -> str:
    amount = f"{_count(line.excess)} {unit}"
    if line.total is not None:
        amount += f" of {_count(line.total)}"
    where = f"{display_path(line.file)}:{line.line}"
    return f"{where}  {line.text}  {amount} ({_percent(line.share)} of the kernel's excess)"


def _nothing_attributed(explanation: Explanation, unit: str) -> str:
    kernel = explanation.kernel or "the kernel"
    if explanation.line_info:
        return f"ncu attributed no {unit} to a source line of {kernel}"
    # Without line info ncu cannot map SASS back to CUDA lines, which is what the per-line view needs.
    return (
        f"ncu attributed no {unit} to a source line of {kernel}: it had no source lines for it "
        "(the kernel was built without line information: `lineinfo: true` for a kernel that "
        "ncuverify builds, nvcc's -lineinfo for one of yours)"
    )


def _count(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"


def _percent(share: float) -> str:
    # A small but real share should not read as "0%".
    return "<1%" if 0 < share < 0.005 else f"{share:.0%}"


def shown_path(path: str) -> str:
    """A source path as the report shows it: relative to the working folder where it lies under it."""
    try:
        return str(Path(path).relative_to(Path.cwd()))
    except ValueError:
        return path


def claim_lines(claim_id: str, explanation: Explanation) -> list[str]:
    """What ncu says about a failed claim, as report lines: a heading, then the explanation indented."""
    return [
        f"{claim_id}: what ncu says about {explanation.kernel}",
        *(f"  {line}" for line in render(explanation, shown_path)),
    ]
