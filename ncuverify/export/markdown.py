"""Results as Markdown: a summary fit for a pull-request comment or a CI step summary. Every text from
expectation files, kernel sources and ncu is escaped, so that the comment shows that text rather than
rendering it."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ncuverify.explain import claim_lines
from ncuverify.export.outcome import FAILING, RunOutcome, headline, outcome_of
from ncuverify.judge.claims import describe, format_number
from ncuverify.judge.over_kernels import kernel_line, shown_outcomes, tally
from ncuverify.results import (
    FileResult,
    Verdict,
    set_aside,
    set_aside_line,
)
from ncuverify.text import one_line

if TYPE_CHECKING:  # a name only: the baseline reads exported fields (a cycle)
    from ncuverify.baseline.snapshot import Change

# The improvements and the kernels added or removed since the baseline listed one by one; a comment has
# room for no more.
LISTED_MOVES = 20

# Characters that Markdown (GitHub's flavour: tables, strikethrough, math) reads as markup anywhere in a
# line; each is written with a backslash, which Markdown reads as "this character, as text".
_INLINE_MARKUP = re.compile(r"[\\`*_\[\]~|$]")
# What makes a line a heading, a list item, a rule or a quote when it starts the line.
_LINE_MARKUP = re.compile(r"[-+=#]|\d+[.)]")
# Text that a code span shows as it is: nothing in it could end the span or the table cell.
_PLAIN = re.compile(r"[\w./:+-]{1,200}", flags=re.ASCII)


def _inline(text: str) -> str:
    """Untrusted text as Markdown that shows it as it is, on one line: control characters as visible
    escapes, <, > and & as entities (so that no HTML is ever written), markup characters escaped."""
    text = one_line(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _INLINE_MARKUP.sub(lambda match: "\\" + match.group(), text)


def _code(text: str) -> str:
    """A name as code where it is plainly a name; anything else as escaped text."""
    return f"`{text}`" if _PLAIN.fullmatch(text) else _inline(text)


def _lead(text: str) -> str:
    """A name that starts a line: as code where it is plainly a name, else as a line of text."""
    return f"`{text}`" if _PLAIN.fullmatch(text) else _line(text)


def _line(text: str) -> str:
    """Untrusted text that starts a line: escaped, and never a heading, list item, rule or quote."""
    escaped = _inline(text.lstrip())
    marker = _LINE_MARKUP.match(escaped)
    if marker is None:
        return escaped
    end = marker.end()
    return escaped[: end - 1] + "\\" + escaped[end - 1 :]


def _items(lines: Sequence[str]) -> list[str]:
    """Untrusted lines as a list, one item per line (lines indented by two or more nested), each on
    one line whatever it holds."""
    return [("  - " if line.startswith("  ") else "- ") + _line(line) for line in lines if line.strip()]


def _row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def verdict_pie(results: Sequence[FileResult]) -> list[str]:
    """The claims by verdict as a Mermaid pie chart, which GitHub and GitLab draw in a comment (others
    show the block as text). Only ncuverify's own words and numbers go into it."""
    counts = [(v.value, sum(r.count(v) for r in results)) for v in Verdict]
    slices = [f'    "{name}" : {count}' for name, count in counts if count]
    return ["```mermaid", "pie showData title Claims by verdict", *slices, "```", ""] if slices else []


def to_markdown(run: Sequence[FileResult] | RunOutcome, max_bytes: int | None = None) -> str:
    """A summary: what the run came to (the headline its exit code says), the counts, where the figures
    come from, what moved against the baseline, and every claim that did not pass. Every text from a
    file or from ncu is escaped: the summary is shown as a pull-request comment. With max_bytes, whole
    rows and sections are left out from the end until it fits in that many bytes (UTF-8), and a last
    line says how many claims are not shown; the baseline's section comes before the claims, so that
    a regression is among the last cut."""
    outcome = outcome_of(run)
    results = outcome.results
    lines = _Units([f"## ncuverify: {_inline(headline(outcome))}", "", *verdict_pie(results)])
    aside = set_aside(results)
    if aside:
        lines += [f"{set_aside_line(aside)}: not judged, so not shown as passing.", ""]
    lines += [
        "| file | passed | failed | errors | skipped | other |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    lines.end_unit()
    for result in results:
        trouble = (
            "input error"
            if result.input_error is not None
            else "internal error"
            if result.internal_error is not None
            else "not run"
            if result.not_run is not None
            else None
        )
        if trouble is not None:
            lines.append(_row([_code(str(result.path)), trouble, "", "", "", ""]))
            lines.end_unit()
            continue
        other = (
            result.count(Verdict.XFAILED) + result.count(Verdict.XPASSED) + result.count(Verdict.OTHER_ARCH)
        )
        counts = [result.count(v) for v in (Verdict.PASSED, Verdict.FAILED, Verdict.ERROR, Verdict.SKIPPED)]
        lines.append(_row([_code(str(result.path)), *(str(c) for c in [*counts, other])]))
        lines.end_unit()
    lines.append("")
    for result in results:
        name = _lead(result.path.name)
        if result.provenance is not None:
            how = "replayed from a recording made" if result.replayed else "measured"
            lines.append(f"- {name}: {how} on {_inline(result.provenance.describe())}")
        if result.reused_from is not None:
            lines.append(f"- {name}: {_inline(result.reused_from.describe())}")
        lines += [f"- {name}: warning: {_inline(w)}" for w in result.warnings]
        if result.set_aside:
            lines.append(f"- {name}: {set_aside_line(result.set_aside)}")
        lines.end_unit()
    lines += _baseline(outcome)
    lines.end_unit()
    problems = [(r, c) for r in results for c in r.claims if c.verdict in (*FAILING, Verdict.ERROR)]
    broken = [r for r in results if r.input_error is not None or r.internal_error is not None]
    if problems or broken:
        lines += [
            "",
            "### What did not hold",
            "",
            "| file | claim | measured | expected | verdict | why |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        lines.end_unit()
        for result, claim_result in problems:
            measured = format_number(claim_result.measured) if claim_result.measured is not None else "-"
            cells = [
                _code(result.path.name),
                _code(claim_result.claim.id),
                _inline(measured),
                _inline(describe(claim_result.claim.expect)),
                claim_result.verdict.value,
                _inline(claim_result.reason or ""),
            ]
            lines.append(_row(cells))
            lines.end_unit(claims=1)
        for result, claim_result in problems:
            if claim_result.kernels:
                lines += [
                    "",
                    f"{_lead(result.path.name)} {_code(claim_result.claim.id)}:"
                    f" {_inline(tally(claim_result.kernels))}",
                    "",
                    *_items([kernel_line(claim_result.claim, o) for o in shown_outcomes(claim_result)]),
                ]
                lines.end_unit()
        for result in broken:
            for error, what in (
                (result.input_error, "input error"),
                (result.internal_error, "internal error"),
            ):
                if error is not None:
                    lines += ["", f"{_lead(str(result.path))}: {what}", "", *_items(error.split("\n"))]
                    lines.end_unit()
        explained = [(r, claim_id, e) for r in results for claim_id, e in r.explanations.items()]
        if explained:
            lines += ["", "### What ncu says about them", ""]
            for result, claim_id, explanation in explained:
                lines += [
                    _lead(result.path.name),
                    "",
                    *_items(claim_lines(claim_id, explanation)),
                    "",
                ]
                lines.end_unit()
    lines.end_unit()
    return lines.text(max_bytes, claims=len(problems))


class _Units(list[str]):
    """The summary's lines, and where a whole unit of them ends (the heading and the tables' heads, a
    row, a file's notes, a claim's details): the summary is cut only there, so that what is kept is
    valid Markdown and shows no half of a row or of a claim."""

    def __init__(self, lines: Sequence[str]) -> None:
        super().__init__(lines)
        self.ends: list[tuple[int, int]] = []  # (lines before the cut, claims shown before it)
        self.claims = 0

    def end_unit(self, claims: int = 0) -> None:
        self.claims += claims
        self.ends.append((len(self), self.claims))

    def text(self, max_bytes: int | None, claims: int) -> str:
        """The lines as Markdown; with max_bytes, the longest run of whole units that fits with a last
        line saying how many of the claims are not shown (only that line where none fits)."""
        whole = "\n".join(self) + "\n"
        if max_bytes is None or len(whole.encode("utf-8", "backslashreplace")) <= max_bytes:
            return whole
        sizes = [0]
        for line in self:
            sizes.append(sizes[-1] + len(line.encode("utf-8", "backslashreplace")) + 1)
        for end, shown in reversed(self.ends):
            last = _cut_line(claims - shown, max_bytes)
            if sizes[end] + len(last.encode()) <= max_bytes:
                return "\n".join(self[:end]) + last
        return _cut_line(claims, max_bytes).lstrip("\n")


def _cut_line(not_shown: int, max_bytes: int) -> str:
    """The summary's last line once cut, after a blank line (which ends a table that it would join)."""
    claims = f"{not_shown} more claims not shown" if not_shown else "more details not shown"
    return f"\n\n{claims}: the summary is cut to fit in {max_bytes} bytes\n"


def _baseline(outcome: RunOutcome) -> list[str]:
    """What moved against the baseline: the regressions first (each fails the run), then the growths
    the allow-list accepts and the improvements; the kernels of sets added and removed since."""
    if not outcome.against_baseline:
        return []
    lines = ["", "### Against the baseline", ""]
    if outcome.baseline_error is not None:
        lines += [f"ncuverify failed comparing the run with it: {_inline(outcome.baseline_error)}", ""]
    if outcome.compared is not None and outcome.compared.toolkits is not None:
        lines += [f"Note: {_inline(outcome.compared.toolkits)}", ""]
    lines.append(
        f"{len(outcome.regressed)} regressed, {len(outcome.improved)} improved,"
        f" {len(outcome.allowed)} grew as the allow-list accepts"
    )
    if outcome.changes:
        lines += [
            "",
            "| file | case | measure | baseline | now | verdict |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        # every change that fails or is accepted; the improvements, which need no review, cut short
        for change in [*outcome.regressed, *outcome.allowed, *outcome.improved[:LISTED_MOVES]]:
            line = outcome.case_line(change.file, change.case)
            where = _code(change.file) + (f" line {line}" if line is not None else "")
            cells = [
                where,
                _code(change.case),
                _code(change.metric),
                _inline(format_number(change.before)),
                _inline(format_number(change.after)),
                _change_word(change),
            ]
            lines.append(_row(cells))
    if len(outcome.improved) > LISTED_MOVES:
        lines += ["", f"and {len(outcome.improved) - LISTED_MOVES} more improvements"]
    for added, word in ((True, "added"), (False, "removed")):
        cases = [f"{move.file}: {move.case}" for move in outcome.moves if move.added is added]
        if cases:
            more = [f"and {len(cases) - LISTED_MOVES} more"] if len(cases) > LISTED_MOVES else []
            said = f"{len(cases)} kernels {word} since the baseline (not a failure):"
            lines += ["", said, "", *_items([*cases[:LISTED_MOVES], *more])]
    return lines


def _change_word(change: Change) -> str:
    if change.allowed is not None:
        return "allowed: " + _inline(change.allowed)
    return "**regressed**" if change.worse else "improved"
