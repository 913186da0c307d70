"""Explanations for failed coalescing and bank-conflict claims, read from a second ncu pass.

That pass profiles the failing cases with `--section SourceCounters --section
MemoryWorkloadAnalysis_Tables` and its report is imported twice: the details page (which ncu rules
fired, with their text) and the source page (per CUDA source line, how many sectors or wavefronts were
excessive). This package reads both pages and picks what explains a failure.
"""

from ncuverify.explain.details import parse_rules, render_markup
from ncuverify.explain.explaining import explain
from ncuverify.explain.explanation import Explanation, RuleFinding, SourceLine
from ncuverify.explain.render import claim_lines, render, shown_path
from ncuverify.explain.source import LineRow, SourceBlock, parse_source
from ncuverify.explain.topics import TOPICS, Topic, topic_of

__all__ = [
    "TOPICS",
    "Explanation",
    "LineRow",
    "RuleFinding",
    "SourceBlock",
    "SourceLine",
    "Topic",
    "claim_lines",
    "explain",
    "parse_rules",
    "parse_source",
    "render",
    "render_markup",
    "shown_path",
    "topic_of",
]
