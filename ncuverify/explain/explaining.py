"""Explaining one launch: the rules of its topic that fired, and the source lines with the most excess."""

from __future__ import annotations

import math
from collections.abc import Sequence

from ncuverify.errors import InputError
from ncuverify.explain.details import DetailsRow, details_rows, rules_by_launch
from ncuverify.explain.explanation import Explanation, SourceLine
from ncuverify.explain.source import LineRow, parse_source
from ncuverify.explain.topics import TOPICS, Topic


def explain(details_csv: str, source_csv: str, launch: int, topic: str, top: int = 3) -> Explanation:
    """What explains a failed claim of `topic` on the `launch`-th profiled launch (0-based).

    The rules of that launch that speak about the topic, and the `top` source lines with the largest
    nonzero excess, largest first.
    """
    spec = _topic(topic)
    rows = details_rows(details_csv)
    rules = rules_by_launch(rows)
    blocks = parse_source(source_csv)
    block = blocks[launch] if 0 <= launch < len(blocks) else None
    if block is None and launch not in rules:
        raise InputError(
            f"launch {launch} is in neither ncu page: the details page has launches "
            f"{sorted(rules)}, the source page {len(blocks)}"
        )
    return Explanation(
        kernel=block.kernel if block else _kernel_name(rows, launch),
        topic=spec.name,
        rules=tuple(rule for rule in rules.get(launch, ()) if rule.rule in spec.rules),
        lines=_worst_lines(block.lines if block else (), spec, top),
        line_info=bool(block and block.lines),
    )


def _topic(topic: str) -> Topic:
    if topic not in TOPICS:
        raise ValueError(f"unknown topic {topic!r}; known: {', '.join(TOPICS)}")
    return TOPICS[topic]


def _kernel_name(rows: Sequence[DetailsRow], launch: int) -> str:
    return next((row.get("Kernel Name") for row in rows if row.launch == launch), "")


def _worst_lines(rows: Sequence[LineRow], topic: Topic, top: int) -> tuple[SourceLine, ...]:
    excess = [_finite(row.metrics.get(topic.excess_metric)) for row in rows]
    whole = sum(excess)
    if whole <= 0:
        return ()
    # sorted() is stable, so lines with equal excess stay in source order.
    ranked = sorted((pair for pair in zip(excess, rows, strict=True) if pair[0] > 0), key=lambda p: -p[0])
    return tuple(_source_line(row, value, whole, topic) for value, row in ranked[: max(top, 0)])


def _finite(value: float | None) -> float:
    return value if value is not None and math.isfinite(value) else 0.0


def _source_line(row: LineRow, excess: float, whole: float, topic: Topic) -> SourceLine:
    total = row.metrics.get(topic.total_metric)
    return SourceLine(
        file=row.file,
        line=row.line,
        text=row.text,
        excess=excess,
        share=excess / whole,
        total=total if total is not None and math.isfinite(total) else None,
    )
