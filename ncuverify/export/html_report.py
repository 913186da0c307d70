"""Results as one self-contained HTML page: a summary (counts by verdict, per file, where the figures
come from), the failed claims first with what ncu says, every claim with a small picture of where its
value landed against what was expected (and its negative control beside it), and for files that cite
documents the hardware's figure against the document's. Filters by file, verdict and text work with
the page opened from disk: styles, script and pictures are inline, nothing is fetched.

The summary charts are drawn by matplotlib as SVG; a claim's picture, one per claim and hundreds per
page, is a few SVG shapes written here, as matplotlib would take seconds to draw them all. Every text
from expectation files, kernel sources and ncu is escaped: the page shows it, never runs it."""

from __future__ import annotations

import html
import io
import math
import re
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ncuverify.errors import ExitCode
from ncuverify.explain import claim_lines
from ncuverify.export.outcome import RunOutcome, headline, outcome_of
from ncuverify.judge.claims import describe, format_number
from ncuverify.results import (
    ClaimResult,
    FileResult,
    Verdict,
    set_aside,
    set_aside_line,
)
from ncuverify.spec.sweeps import point_suffix
from ncuverify.text import one_line, printable

if TYPE_CHECKING:  # names only: the baseline reads exported results (a cycle); matplotlib loads late
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from ncuverify.baseline.snapshot import Change

COLOURS = {
    Verdict.PASSED: "#2e7d32",
    Verdict.FAILED: "#c62828",
    Verdict.ERROR: "#8e24aa",
    Verdict.SKIPPED: "#f9a825",
    Verdict.XFAILED: "#558b2f",
    Verdict.XPASSED: "#d84315",
    Verdict.OTHER_ARCH: "#9e9e9e",
}
# Shown first: what a reviewer must look at.
FAILING = (Verdict.FAILED, Verdict.ERROR, Verdict.XPASSED)


def _text(value: object) -> str:
    """Untrusted text as HTML text: one line, control characters visible, markup escaped."""
    return html.escape(one_line(str(value)), quote=True)


def _name(value: object) -> str:
    """An id or metric name as HTML text that may break after its underscores and dots (a long name
    would otherwise widen its column past the window)."""
    return re.sub(r"(_+|\.)", r"\1<wbr>", _text(value))


def to_html(run: Sequence[FileResult] | RunOutcome, title: str = "ncuverify report") -> str:
    """The page: the summary (opening with what the run came to), the failures, the audit, the
    baseline's moves (where a run was compared with one), the sweeps, then every claim."""
    outcome = outcome_of(run)
    results = outcome.results
    claims = [(r, c) for r in results for c in r.claims]
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{_text(title)}</title>",
        f"<style>{STYLE}</style></head><body>",
        f"<h1>{_text(title)}</h1>",
        _summary(outcome),
        _failures(claims),
        _audit(claims),
        _baseline(outcome),
        _sweeps(claims),
        _claims(results),
        f"<script>{SCRIPT}</script>",
        "</body></html>",
    ]
    return "\n".join(part for part in parts if part) + "\n"


# --- the summary ----------------------------------------------------------------------------------------


def _summary(outcome: RunOutcome) -> str:
    results = outcome.results
    counts = Counter(c.verdict for r in results for c in r.claims)
    rows = "".join(
        f"<tr><td>{_text(r.path)}</td>"
        + "".join(f"<td>{r.count(v) or ''}</td>" for v in Verdict)
        + f"<td>{_text(_problem(r))}</td></tr>"
        for r in results
    )
    header = "".join(f"<th>{v.value}</th>" for v in Verdict)
    totals = ", ".join(f"{counts[v]} {v.value}" for v in Verdict if counts[v]) or "no claims"
    aside = set_aside(results)
    if aside:
        totals += f", {set_aside_line(aside)}"
    verdict = "passed" if outcome.code is ExitCode.OK else "problem"
    said = f'<p class="{verdict}" id="verdict">ncuverify: {_text(headline(outcome))}</p>'
    return (
        '<section id="summary"><h2>Summary</h2>'
        f"{said}<p>{_text(totals)}</p>{_provenance(results)}"
        f'<figure class="chart">{verdict_chart(counts)}</figure>'
        f"<table><tr><th>file</th>{header}<th>problem</th></tr>{rows}</table></section>"
    )


def _problem(result: FileResult) -> str:
    problem = result.input_error or result.internal_error or result.not_run
    if problem is None and result.set_aside:
        return set_aside_line(result.set_aside)
    return problem or ""


def _provenance(results: Sequence[FileResult]) -> str:
    said = sorted(
        {
            f"{'replayed from a recording made' if r.replayed else 'measured'} on {r.provenance.describe()}"
            for r in results
            if r.provenance is not None
        }
        | {r.reused_from.describe() for r in results if r.reused_from is not None}
    )
    return "".join(f'<p class="provenance">{_text(line)}</p>' for line in said) or (
        '<p class="provenance">nothing profiled: static facts only</p>'
    )


# --- the failed claims, first ---------------------------------------------------------------------------


def _failures(claims: list[tuple[FileResult, ClaimResult]]) -> str:
    failing = [(r, c) for r, c in claims if c.verdict in FAILING]
    if not failing:
        return '<section id="failures"><h2>Failures</h2><p>none</p></section>'
    items = []
    for result, claim_result in failing:
        claim = claim_result.claim
        explanation = result.explanations.get(claim.id)
        said = printable("\n".join(claim_lines(claim.id, explanation))) if explanation is not None else ""
        items.append(
            f'<li><b class="{claim_result.verdict.value}">{claim_result.verdict.value}</b> '
            f"<code>{_text(claim.id)}</code> in {_text(result.path)}: {_text(claim_result.reason or '')}"
            + (f"<pre>{html.escape(said)}</pre>" if said else "")
            + "</li>"
        )
    return f'<section id="failures"><h2>Failures</h2><ul>{"".join(items)}</ul></section>'


# --- the audit: the hardware's figure against the document's ------------------------------------------


def _audit(claims: list[tuple[FileResult, ClaimResult]]) -> str:
    ratios = [(c, _document_ratio(c)) for _, c in claims]
    cited = [
        (c.claim.id, ratio, STANDING[c.claim.cite.holds])
        for c, ratio in ratios
        if ratio is not None and ratio > 0 and c.claim.cite is not None
    ]
    if not cited:
        return ""
    return (
        '<section id="audit"><h2>The documents against the hardware</h2>'
        "<p>Each cited figure with a value: measured ÷ the document's value, on a log scale (1 is the"
        " document's), by whether the document's figure holds on this hardware.</p>"
        f'<figure class="chart">{audit_chart(cited)}</figure></section>'
    )


def _document_ratio(result: ClaimResult) -> float | None:
    """Measured / the document's figure, where the claim cites a figure with a value and was measured."""
    cite = result.claim.cite
    if cite is None or not cite.value or result.measured is None:
        return None
    return result.measured / cite.value


# --- against a baseline ----------------------------------------------------------------------------------

# The moves charted (the worst first); the table lists every one.
CHARTED_CHANGES = 40


def _baseline(outcome: RunOutcome) -> str:
    if not outcome.against_baseline:
        return ""
    changes = outcome.changes
    ordered = sorted(changes, key=lambda c: (not (c.worse and c.allowed is None), c.allowed is not None))
    rows = "".join(
        f'<tr class="{_change_class(c)}"><td>{_text(c.file)}</td><td>{_text(c.case)}</td>'
        f'<td><code>{_text(c.metric)}</code></td><td class="number">{_text(format_number(c.before))}</td>'
        f'<td class="number">{_text(format_number(c.after))}</td><td>{_text(_change_word(c))}</td></tr>'
        for c in ordered
    )
    charted = [c for c in ordered if c.ratio is not None and c.ratio > 0][:CHARTED_CHANGES]
    chart = f'<figure class="chart">{baseline_chart(charted)}</figure>' if charted else ""
    counted = (
        f"{len(outcome.regressed)} regressed, {len(outcome.improved)} improved,"
        f" {len(outcome.allowed)} grew as the allow-list accepts"
    )
    failed = (
        f'<p class="problem">ncuverify failed comparing the run with it: {_text(outcome.baseline_error)}</p>'
        if outcome.baseline_error is not None
        else ""
    )
    table = (
        "<table><tr><th>file</th><th>case</th><th>measure</th><th>before</th><th>after</th>"
        f"<th></th></tr>{rows}</table>"
        if rows
        else ""
    )
    return (
        f'<section id="baseline"><h2>Against the baseline</h2>{failed}<p>{_text(counted)}</p>'
        f"{chart}{table}{_moves(outcome)}</section>"
    )


def _moves(outcome: RunOutcome) -> str:
    """The kernels of sets added and removed since the baseline: listed, not failing."""
    parts = []
    for added, word in ((True, "added"), (False, "removed")):
        cases = [f"{move.file}: {move.case}" for move in outcome.moves if move.added is added]
        if cases:
            items = "".join(f"<li>{_text(case)}</li>" for case in cases)
            parts.append(
                f"<p>{len(cases)} kernels {word} since the baseline (not a failure)</p><ul>{items}</ul>"
            )
    return "".join(parts)


def _change_class(change: Change) -> str:
    return "allowed" if change.allowed is not None else ("failed" if change.worse else "passed")


def _change_word(change: Change) -> str:
    if change.allowed is not None:
        return f"allowed: {change.allowed}"
    return "worse" if change.worse else "better"


# --- sweeps: the metric against the size ------------------------------------------------------------------

CHARTED_SWEEPS = 24


def sweep_series(
    claims: list[tuple[FileResult, ClaimResult]],
) -> dict[tuple[str, str, str], list[tuple[int, float]]]:
    """Each swept claim's measured values by its sweep variable's value: (file, claim written, variable)
    -> points in order, for claims swept over one variable at two points or more. A claim's point is
    what its sweep gave it (ClaimResult.point), never read from its id."""
    series: dict[tuple[str, str, str], list[tuple[int, float]]] = {}
    for result, claim_result in claims:
        if len(claim_result.point) != 1 or claim_result.measured is None:
            continue
        [(name, value)] = claim_result.point
        written = claim_result.claim.id.removesuffix(point_suffix(claim_result.point))
        series.setdefault((str(result.path), written, name), []).append((value, claim_result.measured))
    return {key: sorted(points) for key, points in series.items() if len(points) >= 2}


def _sweeps(claims: list[tuple[FileResult, ClaimResult]]) -> str:
    series = list(sweep_series(claims).items())[:CHARTED_SWEEPS]
    if not series:
        return ""
    figures = "".join(
        f'<figure class="chart sweep"><figcaption>{_text(f"{claim} in {file}, against {name}")}</figcaption>'
        f"{sweep_chart(name, points)}</figure>"
        for (file, claim, name), points in series
    )
    return f'<section id="sweeps"><h2>Sweeps</h2>{figures}</section>'


# --- every claim ----------------------------------------------------------------------------------------


def _claims(results: Sequence[FileResult]) -> str:
    files = "".join(f"<option>{_text(r.path)}</option>" for r in results)
    verdicts = "".join(f"<option>{v.value}</option>" for v in Verdict)
    rows = "".join(_claim_row(r, c) for r in results for c in r.claims)
    return (
        '<section id="claims"><h2>Claims</h2><p class="filters">'
        f'<select id="file"><option value="">every file</option>{files}</select> '
        f'<select id="verdict"><option value="">every verdict</option>{verdicts}</select> '
        '<input id="text" type="search" placeholder="claim, case or metric"></p>'
        '<table class="claims"><tr><th>claim</th><th>case</th><th>metric</th><th>expected</th><th>measured</th>'
        f"<th>verdict</th><th>where it landed</th></tr>{rows}</table></section>"
    )


def _claim_row(result: FileResult, claim_result: ClaimResult) -> str:
    claim = claim_result.claim
    measured = format_number(claim_result.measured) if claim_result.measured is not None else "-"
    if claim_result.control_measured is not None:
        measured += f" (control {format_number(claim_result.control_measured)})"
    verdict = claim_result.verdict.value
    return (
        f'<tr class="claim" data-file="{_text(result.path)}" data-verdict="{verdict}">'
        f"<td><code>{_name(claim.id)}</code></td><td>{_name(claim.case or claim.kernels or '-')}</td>"
        f"<td><code>{_name(claim.metric)}</code></td><td>{_text(describe(claim.expect))}</td>"
        f'<td class="number">{_text(measured)}</td><td class="{verdict}">{verdict}</td>'
        f"<td>{landing(claim_result)}</td></tr>"
    )


def landing(result: ClaimResult, width: int = 160, height: int = 18) -> str:
    """Where the measured value landed: the expected value or range as a band, the measured value as
    a mark (the negative control's as a hollow one), on a scale that leaves the margin visible."""
    low, high = _expected_range(result)
    values = [v for v in (low, high, result.measured, result.control_measured) if v is not None]
    if result.measured is None or not all(math.isfinite(v) for v in values):
        return ""
    start, end = min(values), max(values)
    pad = (end - start) * 0.15 or abs(end) * 0.1 or 1.0
    start, end = start - pad, end + pad

    def x(value: float) -> float:
        return round((value - start) / (end - start) * width, 1)

    band_low = x(low) if low is not None else 0.0
    band_high = x(high) if high is not None else float(width)
    colour = COLOURS[result.verdict]
    shapes = [
        f'<rect x="{band_low}" y="4" width="{max(1.5, band_high - band_low)}" height="{height - 8}" fill="#90caf9"/>',
        f'<line x1="{x(result.measured)}" y1="1" x2="{x(result.measured)}" y2="{height - 1}" stroke="{colour}" stroke-width="3"/>',
    ]
    if result.control_measured is not None:
        shapes.append(
            f'<circle cx="{x(result.control_measured)}" cy="{height / 2}" r="4" fill="none" stroke="#424242"/>'
        )
    return (
        f'<svg class="landing" width="{width}" height="{height}" role="img" '
        f'aria-label="measured {_text(format_number(result.measured))}">{"".join(shapes)}</svg>'
    )


def _expected_range(result: ClaimResult) -> tuple[float | None, float | None]:
    """The values the expectation allows, as a low and a high end (None: open on that side)."""
    expect = result.claim.expect
    if expect.equals is not None:
        return expect.equals, expect.equals
    if expect.at_least is not None:
        return expect.at_least, None
    if expect.at_most is not None:
        return None, expect.at_most
    if expect.between is not None:
        return expect.between
    approx = expect.approx or 0.0
    allowed = expect.abs if expect.abs is not None else abs(approx) * (expect.rel or 0.0)
    return approx - allowed, approx + allowed


# --- the charts matplotlib draws -------------------------------------------------------------------------


def verdict_chart(counts: Counter[Verdict]) -> str:
    """The claims' count by verdict, as a horizontal bar chart."""
    shown = [v for v in Verdict if counts[v]] or list(Verdict)
    figure, axes = _figure(6.0, 0.35 * len(shown) + 0.8)
    bars = axes.barh([v.value for v in shown], [counts[v] for v in shown], color=[COLOURS[v] for v in shown])
    axes.bar_label(bars, padding=3)
    axes.invert_yaxis()
    axes.set_xlabel("claims")
    return _svg(figure)


# A document's standing on the hardware, as the audit says it, and its colour.
STANDING = {"yes": "holds", "approximately": "holds approximately", "no": "does not hold"}
STANDING_COLOURS = {"holds": "#2e7d32", "holds approximately": "#f9a825", "does not hold": "#c62828"}


def audit_chart(cited: list[tuple[str, float, str]]) -> str:
    """Each cited figure's ratio (measured / the document's) on a log scale, a row per standing."""
    standings = [s for s in STANDING_COLOURS if any(standing == s for _, _, standing in cited)]
    figure, axes = _figure(7.0, 0.5 * len(standings) + 1.0)
    for row, standing in enumerate(standings):
        ratios = [ratio for _, ratio, s in cited if s == standing]
        axes.scatter(ratios, [row] * len(ratios), color=STANDING_COLOURS[standing], alpha=0.6, s=18)
    axes.set_xscale("log")
    axes.axvline(1.0, color="#424242", linewidth=1)
    axes.set_yticks(range(len(standings)), standings)
    axes.set_xlabel("measured / the document's figure")
    return _svg(figure)


def baseline_chart(changes: Sequence[Change]) -> str:
    """Each move's ratio (after / before) on a log scale: worse in red, better in green, allowed in
    yellow."""
    figure, axes = _figure(7.0, 0.28 * len(changes) + 1.0)
    colours = {"failed": COLOURS[Verdict.FAILED], "passed": COLOURS[Verdict.PASSED], "allowed": "#f9a825"}
    labels = [_label(f"{c.file} {c.case} {c.metric}") for c in changes]
    axes.barh(labels, [c.ratio or 1.0 for c in changes], color=[colours[_change_class(c)] for c in changes])
    axes.set_xscale("log")
    axes.axvline(1.0, color="#424242", linewidth=1)
    axes.invert_yaxis()
    axes.set_xlabel("after / before")
    return _svg(figure)


def sweep_chart(name: str, points: list[tuple[int, float]]) -> str:
    """The measured value against the sweep's variable; a log scale where the values span 8x or more."""
    figure, axes = _figure(4.0, 2.6)
    xs, ys = [x for x, _ in points], [y for _, y in points]
    axes.plot(xs, ys, marker="o", color="#1565c0")
    if min(xs) > 0 and max(xs) / min(xs) >= 8:
        axes.set_xscale("log", base=2)
    if min(ys) > 0 and max(ys) / min(ys) >= 8:
        axes.set_yscale("log")
    axes.set_xlabel(_label(name))
    return _svg(figure)


def _label(text: str) -> str:
    """Untrusted text as a matplotlib label: one line, at most 80 characters, its dollar signs literal
    (matplotlib reads $...$ as mathematics, and a malformed formula fails the drawing)."""
    return one_line(text)[:80].replace("$", r"\$")


def _figure(width: float, height: float) -> tuple[Figure, Axes]:
    """A figure of its own, drawn without pyplot: no backend is chosen for the process, no global
    figure is kept."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), dpi=96)
    figure.set_layout_engine("tight")
    return figure, figure.add_subplot()


def _svg(figure: Figure) -> str:
    """The figure as inline SVG: text as text (small, searchable), no XML prologue or DOCTYPE (which
    names a DTD on the web)."""
    import matplotlib

    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "ncuverify"}):
        figure.savefig(buffer, format="svg", metadata=dict.fromkeys(("Date", "Creator", "Format", "Type")))
    svg = buffer.getvalue()
    return svg[svg.index("<svg") :]


STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #212121; }
table { border-collapse: collapse; font-size: 0.9em; }
td, th { border-bottom: 1px solid #e0e0e0; padding: 2px 8px; text-align: left; vertical-align: middle; }
td.number { text-align: right; }
/* Ids and metric names are long words: they break anywhere rather than widen the page past the window. */
td code { overflow-wrap: anywhere; }
select, input { font: inherit; }
table.claims td:first-child { min-width: 16em; }
.passed { color: #2e7d32; } .failed, .xpassed { color: #c62828; font-weight: bold; }
.error { color: #8e24aa; font-weight: bold; } .skipped { color: #f9a825; } .other_arch { color: #9e9e9e; }
pre { background: #f5f5f5; padding: 0.5em; white-space: pre-wrap; }
.chart svg { max-width: 100%; height: auto; }
.provenance { color: #616161; }
p.problem { color: #f9a825; font-weight: bold; }
tr.allowed td:last-child { color: #f9a825; }
figure.sweep { display: inline-block; margin: 0.5em; }
"""

# Filters that work from disk: no request, no library; rows carry their file and verdict.
SCRIPT = """
(function () {
  var file = document.getElementById("file"), verdict = document.getElementById("verdict"),
      text = document.getElementById("text");
  function filter() {
    var words = text.value.toLowerCase();
    document.querySelectorAll("tr.claim").forEach(function (row) {
      var shown = (!file.value || row.dataset.file === file.value) &&
                  (!verdict.value || row.dataset.verdict === verdict.value) &&
                  (!words || row.textContent.toLowerCase().indexOf(words) >= 0);
      row.style.display = shown ? "" : "none";
    });
  }
  [file, verdict, text].forEach(function (control) { control.addEventListener("input", filter); });
})();
"""
