"""The judge stage for one file: its profiler claims judged on the run's profile (or skipped, with
why), its verdicts in the order of its claims."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace

from ncuverify.judge.claims import judge, skip_all
from ncuverify.results import ClaimResult, FileResult, Verdict
from ncuverify.spec import Spec
from ncuverify.spec.programs import claims_per_launch, launch_of
from ncuverify.stages.values import Prepared, Profiled


def not_finished(prepared: Prepared, internal_error: str) -> FileResult:
    """A bug while judging the file's profiler claims: its static verdicts are kept."""
    return FileResult(
        prepared.path,
        at_points(prepared.spec, prepared.judged),
        internal_error=internal_error,
        seconds=time.monotonic() - prepared.started,
        warnings=prepared.warnings,
        spec=prepared.spec,
        key=prepared.key.name,
        set_aside=prepared.set_aside,
    )


def finish_file(prepared: Prepared, profiled: Profiled) -> FileResult:
    """The file's result: its profiler claims judged on the run's profile (or skipped, with why)."""
    results = list(prepared.judged)
    measured = prepared.static
    internal_error = None
    warnings = list(prepared.warnings)
    if prepared.waiting:
        if profiled.input_error is not None:
            return FileResult(
                prepared.path, [], input_error=profiled.input_error, spec=prepared.spec, key=prepared.key.name
            )
        internal_error = profiled.internal_errors.get(prepared.key.name, profiled.internal_error)
        warnings += profiled.warnings
        if internal_error is not None:
            results += skip_all(
                prepared.waiting, "not profiled: ncuverify failed (its internal error says how)"
            )
        elif profiled.replayed and prepared.key.name not in profiled.measured:
            missing = f"the recording holds no case of {prepared.path.name}"
            return FileResult(
                prepared.path, [], input_error=missing, spec=prepared.spec, key=prepared.key.name
            )
        elif profiled.replayed and prepared.refused is not None:
            return FileResult(
                prepared.path, [], input_error=prepared.refused, spec=prepared.spec, key=prepared.key.name
            )
        elif prepared.key.name in profiled.measured:
            measured = prepared.static.combined(profiled.measured[prepared.key.name])
            programs, cases = prepared.spec.content.programs, set(measured.cases)
            judged = judge(claims_per_launch(prepared.waiting, programs, cases), measured, prepared.arch)
            results += [stale(result, prepared.stale) for result in judged]
        else:
            results += skip_all(prepared.waiting, profiled.problem or "not profiled")
    return FileResult(
        prepared.path,
        at_points(prepared.spec, _in_file_order(prepared.spec, results)),
        internal_error=internal_error,
        seconds=time.monotonic() - prepared.started,
        provenance=profiled.provenance if prepared.waiting else None,
        replayed=profiled.replayed and bool(prepared.waiting),
        reused_from=profiled.reused.get(prepared.key.name) if prepared.waiting else None,
        warnings=warnings,
        measurements=measured,
        spec=prepared.spec,
        key=prepared.key.name,
        set_aside=prepared.set_aside,
    )


def stale(result: ClaimResult, stale_cases: dict[str, str]) -> ClaimResult:
    """A claim judged on recorded figures of a case that changed since: an error, saying why (the
    figures are not today's kernel's), not a verdict on them."""
    cases = [ref.case for ref in result.claim.metric_refs()] + [result.claim.control or ""]
    # a case by its name (a step of a sequence, reduce#2, is one); a program's launch, add#2, by add's
    named = [name for case in cases for name in (case, launch_of(case)[0]) if name in stale_cases]
    if not named:
        return result
    reason = f"stale: {stale_cases[named[0]]}; its recorded figures are not today's (check --allow-stale judges them anyway)"
    return replace(result, verdict=Verdict.ERROR, reason=reason)


def at_points(spec: Spec, results: Sequence[ClaimResult]) -> list[ClaimResult]:
    """The results, each claim of a sweep with its point (the values of its sweep's variables)."""
    return [replace(result, point=spec.points.claims.get(result.claim.id, ())) for result in results]


def _in_file_order(spec: Spec, results: list[ClaimResult]) -> list[ClaimResult]:
    position = {claim.id: index for index, claim in enumerate(spec.content.claims)}
    # a claim on a case with `combine: each` is judged per launch, as claim#1, claim#2, ...
    return sorted(results, key=lambda result: position[launch_of(result.claim.id)[0]])
