"""After judging, for the whole run: what ncu says about each failed claim on global or shared memory,
from the recording when replaying, else from a second pass over the failing cases (`session`)."""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from pathlib import Path

from ncuverify import explain
from ncuverify.environment import Environment
from ncuverify.errors import EnvironmentProblem, InputError
from ncuverify.explain import Explanation
from ncuverify.internal import isolated
from ncuverify.names import QualifiedCase, is_ncu_metric
from ncuverify.options import CheckOptions
from ncuverify.profile import explain_pass, kinds, recording
from ncuverify.results import FileResult, Verdict
from ncuverify.stages.profiling import file_cases, profile_settings
from ncuverify.stages.progress import say
from ncuverify.stages.values import Prepared, Profiled


def not_explained(
    results: list[FileResult], waiting: list[Prepared], internal_error: str
) -> list[FileResult]:
    """A bug while explaining: the profiled files with failed claims get its line and keep their verdicts."""
    profiled_paths = {p.path for p in waiting}
    return [
        with_internal_error(r, internal_error) if r.path in profiled_paths and r.count(Verdict.FAILED) else r
        for r in results
    ]


def with_internal_error(result: FileResult, internal_error: str) -> FileResult:
    """The result with internal_error, unless it has one already (the first bug is the one to report)."""
    return replace(result, internal_error=result.internal_error or internal_error)


def explain_failures(
    results: list[FileResult],
    waiting: list[Prepared],
    profiled: Profiled,
    options: CheckOptions,
    environment: Environment,
    work_dir: Path,
) -> list[FileResult]:
    """The results, with what ncu says about each failed claim on global or shared memory: from the
    recording when replaying, else from a second pass over the failing cases."""
    if not profiled.replayed:
        explain_pass.clear_explanations(work_dir)  # what a run before this one left in a kept folder
    wanted = _to_explain(results, {p.path: p.key.name for p in waiting})
    if not wanted or not (options.explain or profiled.replayed):
        return results
    unexplained: dict[str, str] = {}  # qualified case -> why its second pass gave nothing
    try:
        if profiled.replayed:
            root = options.from_profile or work_dir
            keys = [p.key for p in waiting]
            found = {}  # a recording of the run, or a folder of per-file recordings
            for folder in (root, *(root / key.legacy for key in keys)):
                recorded = explain_pass.recorded_explanations(folder).items()
                found.update({recording.renamed(name, keys): explanation for name, explanation in recorded})
        else:
            say(options, f"explaining {len(wanted)} failed claim(s)")
            files, settings = file_cases(waiting), profile_settings(options, environment)
            cases = dict(wanted.values())
            found, unexplained = kinds.explained(cases, files, work_dir, settings, options.allow_programs)
    except (EnvironmentProblem, InputError) as problem:
        failing = {path for path, _ in wanted}
        if profiled.replayed and isinstance(problem, InputError):  # a damaged recording is wrong input
            return [replace(r, input_error=str(problem)) if r.path in failing else r for r in results]
        warning = f"no explanation from ncu: {problem}"
        return [replace(r, warnings=[*r.warnings, warning]) if r.path in failing else r for r in results]
    return [
        isolated(partial(_with_explanations, r, wanted, found, unexplained), partial(with_internal_error, r))
        for r in results
    ]


def _to_explain(
    results: list[FileResult], keys: dict[Path, str]
) -> dict[tuple[Path, str], tuple[QualifiedCase, str]]:
    """(file, claim id) -> (qualified case, topic) for each failed profiler claim on global or shared memory."""
    wanted = {}
    for result in results:
        for claim_result in result.claims:
            claim = claim_result.claim
            refs = [ref for ref in claim.metric_refs() if is_ncu_metric(ref.name)]
            topic = explain.topic_of(ref.name for ref in refs)
            if claim_result.verdict is Verdict.FAILED and topic is not None and result.path in keys:
                # the claim's own case, else (all its metrics name theirs) the case of its first one
                case = claim.case or refs[0].case
                wanted[result.path, claim.id] = (QualifiedCase.of(keys[result.path], case), topic)
    return wanted


def _with_explanations(
    result: FileResult,
    wanted: dict[tuple[Path, str], tuple[QualifiedCase, str]],
    found: dict[str, Explanation],
    unexplained: dict[str, str],
) -> FileResult:
    """The result with its claims' explanations, and a warning for each claim whose case's second pass
    gave none (a program that failed when it ran again)."""
    # found and unexplained name cases as recordings do: by their text
    mine = {claim_id: str(case) for (path, claim_id), (case, _) in wanted.items() if path == result.path}
    explanations = {claim_id: found[case] for claim_id, case in mine.items() if case in found}
    warnings = [
        f"no explanation from ncu for {claim_id}: {unexplained[case]}"
        for claim_id, case in mine.items()
        if case in unexplained
    ]
    if explanations:
        result = replace(result, explanations=explanations)
    return replace(result, warnings=[*result.warnings, *warnings]) if warnings else result
