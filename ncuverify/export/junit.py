"""Results as JUnit XML: one test case per claim, for CI systems. Every text from expectation files,
kernel sources and ncu is made printable, so that the XML is well-formed whatever it holds."""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ncuverify.explain import Explanation, claim_lines
from ncuverify.export.outcome import FAILING, NOT_RUN, RunOutcome, claim_message, outcome_of
from ncuverify.judge.claims import format_number
from ncuverify.judge.over_kernels import kernel_line, shown_outcomes
from ncuverify.results import (
    ClaimResult,
    FileResult,
    Verdict,
    judged_nothing,
    nothing_judged_line,
    set_aside_line,
)
from ncuverify.text import one_line, printable

if TYPE_CHECKING:  # a name only: the baseline reads exported fields (a cycle)
    from ncuverify.baseline.snapshot import Change


def to_junit(run: Sequence[FileResult] | RunOutcome) -> str:
    """One <testsuite> per file, one <testcase> per claim; wrong input and ncuverify's own failure on a
    file are <error>s of the file, a file not run a skipped case, and so are the claims --static-only
    set aside (one case, which counts them). A run compared with a baseline adds a suite of its own:
    a failing case per regression (with the file and, where known, the line of its case), a passing
    one per growth the allow-list accepts and per improvement. Every text is made printable first:
    XML 1.0 cannot hold most control characters, whatever the escaping."""
    outcome = outcome_of(run)
    suites = ElementTree.Element("testsuites", name="ncuverify")
    for result in outcome.results:
        suite = _element(suites, "testsuite", name=str(result.path))
        failures = errors = skipped = 0
        classname = result.key
        if result.input_error is not None:
            case = _element(suite, "testcase", classname=classname, name="input")
            _element(case, "error", result.input_error, message="the expectation file is wrong")
            errors += 1
        if result.internal_error is not None:
            case = _element(suite, "testcase", classname=classname, name="internal")
            _element(case, "error", result.internal_error, message="ncuverify failed on this file")
            errors += 1
        if result.not_run is not None:
            case = _element(suite, "testcase", classname=classname, name="not run")
            _element(case, "skipped", message=result.not_run)
            skipped += 1
        if result.set_aside:  # not judged: a CI system must not show the file all green
            case = _element(suite, "testcase", classname=classname, name="set aside")
            _element(case, "skipped", message=_set_aside_message(result))
            skipped += 1
        for claim_result in result.claims:
            case = _element(suite, "testcase", classname=classname, name=claim_result.claim.id, time="0")
            message = claim_message(claim_result)
            if claim_result.verdict in FAILING:
                details = _details(claim_result, result.explanations.get(claim_result.claim.id))
                _element(case, "failure", details, message=message)
                failures += 1
            elif claim_result.verdict is Verdict.ERROR:
                _element(case, "error", _details(claim_result), message=message)
                errors += 1
            elif claim_result.verdict in (*NOT_RUN, Verdict.XFAILED):
                _element(case, "skipped", message=message)
                skipped += 1
            else:
                _element(case, "system-out", message)
        suite.set("tests", str(len(suite)))
        suite.set("failures", str(failures))
        suite.set("errors", str(errors))
        suite.set("skipped", str(skipped))
        suite.set("time", f"{result.seconds:.3f}")
    if outcome.against_baseline:
        _baseline_suite(suites, outcome)
    ElementTree.indent(suites)
    return ElementTree.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def _baseline_suite(suites: ElementTree.Element, outcome: RunOutcome) -> None:
    suite = _element(suites, "testsuite", name="baseline")
    if outcome.baseline_error is not None:
        case = _element(suite, "testcase", classname="baseline", name="compare")
        _element(
            case, "error", outcome.baseline_error, message="ncuverify failed comparing with the baseline"
        )
    for change in outcome.regressed:
        case = _change_case(suite, outcome, change)
        _element(case, "failure", _change_message(change), message=_change_message(change))
    for change in [*outcome.allowed, *outcome.improved]:
        _element(_change_case(suite, outcome, change), "system-out", _change_message(change))
    moved = [
        f"{'added' if m.added else 'removed'} since the baseline: {m.file}: {m.case}" for m in outcome.moves
    ]
    if moved:
        _element(suite, "system-out", "\n".join(moved))
    suite.set("tests", str(sum(1 for child in suite if child.tag == "testcase")))
    suite.set("failures", str(len(outcome.regressed)))
    suite.set("errors", str(int(outcome.baseline_error is not None)))
    suite.set("skipped", "0")


def _change_case(suite: ElementTree.Element, outcome: RunOutcome, change: Change) -> ElementTree.Element:
    """A change's test case, named by its case and measure, with the file (and, where known, the line)
    that a CI system annotates."""
    path = outcome.path_of(change.file)
    where = {"file": str(path)} if path is not None else {}
    line = outcome.case_line(change.file, change.case)
    if line is not None:
        where["line"] = str(line)
    return _element(suite, "testcase", classname=change.file, name=f"{change.case} {change.metric}", **where)


def _change_message(change: Change) -> str:
    moved = (
        f"{change.metric}: {format_number(change.before)} in the baseline, {format_number(change.after)} now"
    )
    if change.allowed is not None:
        return f"{moved}: grew as allowed ({change.allowed})"
    return f"{moved}: {'worse' if change.worse else 'better'} beyond its tolerance"


def _element(
    parent: ElementTree.Element, tag: str, text: str | None = None, **attributes: str
) -> ElementTree.Element:
    """A child element whose attributes are one printable line each and whose text is printable."""
    element = ElementTree.SubElement(parent, tag, {k: one_line(v) for k, v in attributes.items()})
    if text is not None:
        element.text = printable(text)
    return element


def _set_aside_message(result: FileResult) -> str:
    unjudged = judged_nothing([result])
    return nothing_judged_line(unjudged) if unjudged else set_aside_line(result.set_aside)


def _details(result: ClaimResult, explanation: Explanation | None = None) -> str:
    source = result.claim.source_line()
    lines = [claim_message(result), *([source] if source else [])]
    if result.claim.note:
        lines.append(f"note: {result.claim.note}")
    lines += [kernel_line(result.claim, outcome) for outcome in shown_outcomes(result)]
    if explanation is not None:
        lines += claim_lines(result.claim.id, explanation)
    return "\n".join(lines)
