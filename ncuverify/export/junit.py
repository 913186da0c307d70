"""Results as JUnit XML: one test case per claim, for CI systems. Every text from expectation files,
kernel sources and ncu is made printable, so that the XML is well-formed whatever it holds."""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from collections.abc import Sequence

from ncuverify.explain import Explanation, claim_lines
from ncuverify.export.outcome import FAILING, NOT_RUN, claim_message
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


def to_junit(results: Sequence[FileResult]) -> str:
    """One <testsuite> per file, one <testcase> per claim; wrong input and ncuverify's own failure on a
    file are <error>s of the file, a file not run a skipped case, and so are the claims --static-only
    set aside (one case, which counts them). Every text is made printable first:
    XML 1.0 cannot hold most control characters, whatever the escaping."""
    suites = ElementTree.Element("testsuites", name="ncuverify")
    for result in results:
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
    ElementTree.indent(suites)
    return ElementTree.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


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
