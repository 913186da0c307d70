"""Results as JSON: everything a run found, and which run it was. `ncuverify merge` reads it back
(reading.py)."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from ncuverify import __version__
from ncuverify.errors import ExitCode
from ncuverify.export.outcome import RunOutcome, outcome_of
from ncuverify.export.run_identity import ShardOf, suite_digest
from ncuverify.judge.claims import describe
from ncuverify.results import ClaimResult, FileResult, Verdict, judged_nothing, nothing_judged_line, set_aside

if TYPE_CHECKING:  # a name only: the baseline reads exported fields (a cycle)
    from ncuverify.baseline.snapshot import Change

# The form of the `baseline` section: a reader that knows an earlier one can tell.
BASELINE_SECTION_VERSION = 1


def _number(value: float | None) -> float | None:
    """A measured value for JSON: NaN and infinities, which JSON cannot hold, as null."""
    return None if value is None or not math.isfinite(value) else value


def _label(value: Any) -> str:
    """A table's text cell for JSON: a missing value (None, NaN) as ""."""
    if isinstance(value, str):
        return value
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else str(value)


def claim_record(result: ClaimResult) -> dict[str, Any]:
    """A claim's verdict; a claim over kernels adds its set (`kernels`, `match`) and every kernel's value
    and verdict (`per_kernel`), and a claim of a sweep its point (`point`: each sweep variable's value),
    keys that other claims do not have."""
    claim = result.claim
    record: dict[str, Any] = {
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
        "cite": claim.cite.model_dump() if claim.cite is not None else None,
        "why": claim.why,
        "note": claim.note,
        "xfail": claim.xfail.model_dump() if claim.xfail is not None else None,
        "arch": claim.arch,
    }
    if claim.kernels is not None:
        record |= {"kernels": claim.kernels, "match": claim.match, "per_kernel": _per_kernel(result)}
    if result.point:
        record["point"] = dict(result.point)
    return record


def _per_kernel(result: ClaimResult) -> list[dict[str, Any]]:
    return [
        {"kernel": o.kernel, "value": _number(o.value), "verdict": o.verdict.value, "reason": o.reason}
        for o in result.kernels
    ]


def file_record(result: FileResult) -> dict[str, Any]:
    measurements = []
    if result.measurements is not None:
        for case, kernel, metric, value, unit in result.measurements.rows:
            measurements.append(
                {
                    "case": _label(case),
                    "kernel": _label(kernel),
                    "metric": _label(metric),
                    "value": _number(value),
                    "unit": _label(unit),
                }
            )
    return {
        "path": str(result.path),
        "key": result.key,
        "input_error": result.input_error,
        "internal_error": result.internal_error,
        "not_run": result.not_run,
        "seconds": round(result.seconds, 3),
        "replayed": result.replayed,
        "provenance": asdict(result.provenance) if result.provenance is not None else None,
        # where some figures were taken again from a recording (check --reuse): which, from where
        "reused_from": asdict(result.reused_from) if result.reused_from is not None else None,
        "warnings": result.warnings,
        "counts": {verdict.value: result.count(verdict) for verdict in Verdict},
        "claims": [claim_record(claim) for claim in result.claims],
        "set_aside": result.set_aside,
        "measurements": measurements,
        "explanations": {claim_id: e.to_dict() for claim_id, e in result.explanations.items()},
    }


def to_json(
    run: Sequence[FileResult] | RunOutcome, code: ExitCode | None = None, shard: ShardOf | None = None
) -> str:
    """Everything the run found, and which run it was: without shard, the whole (1/1) of the suite of
    the results' files. `set_aside` counts the claims on the profiler that --static-only left out, a
    run that judged nothing says so in `problem`, and a run compared with a baseline has a `baseline`
    section (what regressed, grew as allowed, improved; the kernels added and removed).
    The exit code is the outcome's unless code is given."""
    outcome = outcome_of(run)
    results = outcome.results
    code = outcome.code if code is None else code
    shard = shard or ShardOf(1, 1, suite_digest([result.path for result in results]))
    document = {
        "ncuverify": __version__,
        "exit_code": int(code),
        "run": _run_record(shard),
        "counts": {verdict.value: sum(r.count(verdict) for r in results) for verdict in Verdict},
        "set_aside": set_aside(results),
        "files": [file_record(result) for result in results],
    }
    unjudged = judged_nothing(results)
    if unjudged:
        document["problem"] = nothing_judged_line(unjudged)
    if outcome.against_baseline:
        document["baseline"] = baseline_record(outcome)
    return json.dumps(document, indent=1)


def baseline_record(outcome: RunOutcome) -> dict[str, Any]:
    """What moved against the baseline: each regression (which fails the run), each growth an allow
    entry accepts, each improvement, the kernels of sets added and removed since, and the line that
    says ncuverify failed to compare (null where it did not); and where the baseline's kernels were
    compiled by another nvcc than the run's, the line that says so (toolkits)."""
    toolkits = outcome.compared.toolkits if outcome.compared is not None else None
    return {
        "version": BASELINE_SECTION_VERSION,
        "regressed": [_change_record(outcome, change) for change in outcome.regressed],
        "allowed": [_change_record(outcome, change) for change in outcome.allowed],
        "improved": [_change_record(outcome, change) for change in outcome.improved],
        "added": [{"file": m.file, "case": m.case} for m in outcome.moves if m.added],
        "removed": [{"file": m.file, "case": m.case} for m in outcome.moves if not m.added],
        "error": outcome.baseline_error,
        **({"toolkits": toolkits} if toolkits is not None else {}),
    }


def _change_record(outcome: RunOutcome, change: Change) -> dict[str, Any]:
    path = outcome.path_of(change.file)
    return {
        "file": change.file,
        "path": str(path) if path is not None else None,
        "line": outcome.case_line(change.file, change.case),
        "case": change.case,
        "metric": change.metric,
        "before": _number(change.before),
        "after": _number(change.after),
        "allowed": change.allowed,
    }


def _run_record(shard: ShardOf) -> dict[str, Any]:
    record: dict[str, Any] = {"suite": shard.suite, "shard": [shard.k, shard.n]}
    if shard.missing:
        record["missing"] = list(shard.missing)
    return record
