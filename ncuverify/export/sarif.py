"""Results as SARIF 2.1.0, the format code-scanning services read (GitHub's among them): one result per
failing claim, error, regression against a baseline and warning, each at its line of a file of the
repository, its path relative to the project's root."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from ncuverify import __version__
from ncuverify.export.findings import RULES, Finding, Place, findings
from ncuverify.results import FileResult
from ncuverify.text import printable

if TYPE_CHECKING:  # a name only: the baseline reads exported results (a cycle)
    from ncuverify.baseline.snapshot import Change

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
INFORMATION_URI = "https://pypi.org/project/ncuverify/"
# The base the paths are relative to: the root of the checkout, which a code-scanning service knows.
SOURCE_ROOT = "%SRCROOT%"


def to_sarif(results: Sequence[FileResult], changes: Sequence[Change] = ()) -> str:
    """One run of the tool ncuverify, with every rule it has and a result per finding."""
    rule_ids = list(RULES)
    driver = {
        "name": "ncuverify",
        "version": __version__,
        "informationUri": INFORMATION_URI,
        "rules": [_rule(rule_id) for rule_id in rule_ids],
    }
    document = {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [
            {
                "tool": {"driver": driver},
                "results": [_result(f, rule_ids.index(f.rule)) for f in findings(results, changes)],
                "columnKind": "unicodeCodePoints",
            }
        ],
    }
    return json.dumps(document, indent=1) + "\n"


def _rule(rule_id: str) -> dict[str, Any]:
    return {"id": rule_id, "shortDescription": {"text": RULES[rule_id]}}


def _result(finding: Finding, rule_index: int) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": finding.rule,
        "ruleIndex": rule_index,
        "level": finding.level.value,
        "message": {"text": printable(f"{finding.title}: {finding.message}")},
        "locations": [{"physicalLocation": _physical(finding.place)}],
    }
    if finding.source is not None:
        said = f"the kernel source line ncu names for {finding.title}"
        result["relatedLocations"] = [
            {"id": 1, "physicalLocation": _physical(finding.source), "message": {"text": printable(said)}}
        ]
    return result


def _physical(place: Place) -> dict[str, Any]:
    """A file of the repository as a URI reference relative to its root (every character but / that a
    URI cannot hold percent-encoded), and its line."""
    uri = quote(place.file, safe="/", errors="backslashreplace")
    return {
        "artifactLocation": {"uri": uri, "uriBaseId": SOURCE_ROOT},
        "region": {"startLine": max(place.line, 1)},
    }
