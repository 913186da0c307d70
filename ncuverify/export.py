"""Results as files for machines and reviewers: JSON (everything), JUnit XML (one test case per claim,
for CI systems) and Markdown (a summary fit for a pull-request comment or a CI step summary).
"""

from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ElementTree
from collections.abc import Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import pandas as pd

from ncuverify import __version__
from ncuverify.errors import ExitCode
from ncuverify.explain import Explanation, claim_lines
from ncuverify.judge import ClaimResult, Verdict, describe, format_number
from ncuverify.pipeline import FileResult, exit_code
from ncuverify.profile import MEASUREMENT_COLUMNS, Measurements
from ncuverify.recording import Provenance
from ncuverify.spec import Claim

# What a claim's verdict is for a CI system reading JUnit.
_FAILING = (Verdict.FAILED, Verdict.XPASSED)
_NOT_RUN = (Verdict.SKIPPED, Verdict.OTHER_ARCH)


def _number(value: float | None) -> float | None:
    return None if value is None or math.isnan(value) else value


def claim_record(result: ClaimResult) -> dict[str, Any]:
    claim = result.claim
    return {
        "id": claim.id,
        "case": claim.case,
        "metric": claim.metric,
        "expected": describe(claim.expect),
        "expect": claim.expect.model_dump(exclude_none=True),
        "measured": _number(result.measured),
        "verdict": result.verdict.value,
        "reason": result.reason,
        "control": claim.control,
        "control_measured": _number(result.control_measured),
        "cite": claim.cite.model_dump(),
        "note": claim.note,
        "xfail": claim.xfail.model_dump() if claim.xfail is not None else None,
        "arch": claim.arch,
    }


def file_record(result: FileResult) -> dict[str, Any]:
    measurements = []
    if result.measurements is not None:
        for row in result.measurements.frame.itertuples(index=False):
            measurements.append(
                {
                    "case": row.case,
                    "kernel": row.kernel,
                    "metric": row.metric,
                    "value": _number(row.value),
                    "unit": row.unit,
                }
            )
    return {
        "path": str(result.path),
        "input_error": result.input_error,
        "not_run": result.not_run,
        "seconds": round(result.seconds, 3),
        "replayed": result.replayed,
        "provenance": asdict(result.provenance) if result.provenance is not None else None,
        "warnings": result.warnings,
        "counts": {verdict.value: result.count(verdict) for verdict in Verdict},
        "claims": [claim_record(claim) for claim in result.claims],
        "measurements": measurements,
        "explanations": {claim_id: e.to_dict() for claim_id, e in result.explanations.items()},
    }


def to_json(results: Sequence[FileResult], code: ExitCode | None = None) -> str:
    code = exit_code(results) if code is None else code
    document = {
        "ncuverify": __version__,
        "exit_code": int(code),
        "counts": {verdict.value: sum(r.count(verdict) for r in results) for verdict in Verdict},
        "files": [file_record(result) for result in results],
    }
    return json.dumps(document, indent=1)


def from_json(text: str) -> list[FileResult]:
    """The file results of a JSON document written by --json (for merging the shards of a run)."""
    document = json.loads(text)
    return [_file_result(record) for record in document["files"]]


def _file_result(record: dict[str, Any]) -> FileResult:
    claims = [
        ClaimResult(
            claim=Claim.model_validate(
                {
                    k: c[k]
                    for k in ("id", "case", "metric", "expect", "cite", "note", "control", "xfail", "arch")
                    if c.get(k) is not None
                }
            ),
            verdict=Verdict(c["verdict"]),
            measured=c["measured"],
            reason=c["reason"],
            control_measured=c["control_measured"],
        )
        for c in record["claims"]
    ]
    frame = pd.DataFrame(record["measurements"], columns=MEASUREMENT_COLUMNS).astype({"value": float})
    return FileResult(
        Path(record["path"]),
        claims,
        input_error=record["input_error"],
        seconds=record["seconds"],
        provenance=Provenance(**record["provenance"]) if record["provenance"] else None,
        replayed=record["replayed"],
        warnings=record["warnings"],
        measurements=Measurements(frame=frame),
        not_run=record.get("not_run"),
        explanations={k: Explanation.from_dict(v) for k, v in record.get("explanations", {}).items()},
    )


def merge(shards: Sequence[Sequence[FileResult]]) -> list[FileResult]:
    """One result per file from the shards' results: every claim once, in file order of the first shard."""
    merged: dict[Path, FileResult] = {}
    for results in shards:
        for result in results:
            known = merged.get(result.path)
            if known is None:
                merged[result.path] = result
                continue
            merged[result.path] = replace(
                known,
                claims=[*known.claims, *result.claims],
                input_error=known.input_error or result.input_error,
                not_run=known.not_run if result.not_run is None else result.not_run,
                seconds=known.seconds + result.seconds,
                provenance=known.provenance or result.provenance,
                warnings=[*known.warnings, *result.warnings],
                measurements=_both(known.measurements, result.measurements),
                explanations={**known.explanations, **result.explanations},
            )
    return list(merged.values())


def _both(first: Measurements | None, second: Measurements | None) -> Measurements | None:
    if first is None or second is None:
        return first or second
    return first.combined(second)


def to_junit(results: Sequence[FileResult]) -> str:
    """One <testsuite> per file, one <testcase> per claim; wrong input is an <error> of the file."""
    suites = ElementTree.Element("testsuites", name="ncuverify")
    for result in results:
        suite = ElementTree.SubElement(suites, "testsuite", name=str(result.path))
        failures = errors = skipped = 0
        if result.input_error is not None:
            case = ElementTree.SubElement(suite, "testcase", classname=result.path.stem, name="input")
            ElementTree.SubElement(
                case, "error", message="the expectation file is wrong"
            ).text = result.input_error
            errors += 1
        for claim_result in result.claims:
            case = ElementTree.SubElement(
                suite, "testcase", classname=result.path.stem, name=claim_result.claim.id, time="0"
            )
            message = _message(claim_result)
            if claim_result.verdict in _FAILING:
                ElementTree.SubElement(case, "failure", message=message).text = _details(
                    claim_result, result.explanations.get(claim_result.claim.id)
                )
                failures += 1
            elif claim_result.verdict is Verdict.ERROR:
                ElementTree.SubElement(case, "error", message=message).text = _details(claim_result)
                errors += 1
            elif claim_result.verdict in (*_NOT_RUN, Verdict.XFAILED):
                ElementTree.SubElement(case, "skipped", message=message)
                skipped += 1
            else:
                ElementTree.SubElement(case, "system-out").text = message
        tests = len(result.claims) + (result.input_error is not None) + (result.not_run is not None)
        suite.set("tests", str(tests))
        suite.set("failures", str(failures))
        suite.set("errors", str(errors))
        suite.set("skipped", str(skipped))
        suite.set("time", f"{result.seconds:.3f}")
    ElementTree.indent(suites)
    return ElementTree.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def _message(result: ClaimResult) -> str:
    measured = format_number(result.measured) if result.measured is not None else "not measured"
    text = f"{result.claim.metric}: measured {measured}, expected {describe(result.claim.expect)}"
    return f"{text} ({result.reason})" if result.reason else text


def _details(result: ClaimResult, explanation: Explanation | None = None) -> str:
    cite = result.claim.cite
    lines = [_message(result), f"source: {cite.document} §{cite.section}: {cite.figure}"]
    if result.claim.note:
        lines.append(f"note: {result.claim.note}")
    if explanation is not None:
        lines += claim_lines(result.claim.id, explanation)
    return "\n".join(lines)


def to_markdown(results: Sequence[FileResult]) -> str:
    """A summary: the counts, where the figures come from, and every claim that did not pass."""
    code = exit_code(results)
    lines = [f"## ncuverify: {_headline(code)}", ""]
    lines += [
        "| file | passed | failed | errors | skipped | other |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for result in results:
        if result.input_error is not None or result.not_run is not None:
            lines.append(
                f"| `{result.path}` | {'input error' if result.input_error else 'not run'} | | | | |"
            )
            continue
        other = (
            result.count(Verdict.XFAILED) + result.count(Verdict.XPASSED) + result.count(Verdict.OTHER_ARCH)
        )
        counts = [result.count(v) for v in (Verdict.PASSED, Verdict.FAILED, Verdict.ERROR, Verdict.SKIPPED)]
        lines.append(f"| `{result.path}` | " + " | ".join(str(c) for c in [*counts, other]) + " |")
    lines.append("")
    for result in results:
        if result.provenance is not None:
            how = "replayed from a recording made" if result.replayed else "measured"
            lines.append(f"- `{result.path.name}`: {how} on {result.provenance.describe()}")
        lines += [f"- `{result.path.name}`: warning: {w}" for w in result.warnings]
    problems = [(r, c) for r in results for c in r.claims if c.verdict in (*_FAILING, Verdict.ERROR)]
    if problems or any(r.input_error for r in results):
        lines += [
            "",
            "### What did not hold",
            "",
            "| file | claim | measured | expected | verdict | why |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for result, claim_result in problems:
            measured = format_number(claim_result.measured) if claim_result.measured is not None else "-"
            cells = [
                f"`{result.path.name}`",
                f"`{claim_result.claim.id}`",
                measured,
                describe(claim_result.claim.expect),
                claim_result.verdict.value,
                claim_result.reason or "",
            ]
            lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
        for result in results:
            if result.input_error is not None:
                lines += ["", f"`{result.path}`: input error", "", "```", result.input_error, "```"]
        explained = [(r, claim_id, e) for r in results for claim_id, e in r.explanations.items()]
        if explained:
            lines += ["", "### What ncu says about them", ""]
            for result, claim_id, explanation in explained:
                lines += [f"`{result.path.name}`", "", "```", *claim_lines(claim_id, explanation), "```", ""]
    return "\n".join(lines) + "\n"


def _headline(code: ExitCode) -> str:
    return {
        ExitCode.OK: "every claim holds",
        ExitCode.CLAIM_FAILED: "claims failed",
        ExitCode.BAD_INPUT: "an expectation file is wrong",
        ExitCode.NOT_MEASURABLE: "some claims could not be measured here",
    }[code]
