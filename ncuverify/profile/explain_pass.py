"""The second pass over failed memory claims: their cases profiled again with ncu's Source Counters and
Memory Workload Analysis sections, and the report imported twice: the details page for the rules that
fired, the source page for the lines with the most excess (`explain`). Both imports are kept, so that a
recording replays its explanations."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from ncuverify import explain
from ncuverify.errors import InputError
from ncuverify.explain import Explanation
from ncuverify.profile import recording
from ncuverify.profile.diagnose import diagnose
from ncuverify.profile.plan import FileCases, plan_cases
from ncuverify.profile.run import run_ncu
from ncuverify.profile.saved_report import REPORT_FILE, import_report
from ncuverify.profile.session import RUNS, Settings

EXPLAIN_SECTIONS = ("SourceCounters", "MemoryWorkloadAnalysis_Tables")
EXPLAIN_DETAILS = "explain.details.csv"
EXPLAIN_SOURCE = "explain.source.csv"
EXPLAIN_CASES = "explain.json"


def explain_cases(
    wanted: dict[str, str], planned_from: Sequence[FileCases], work_dir: Path, settings: Settings
) -> dict[str, Explanation]:
    """Profile each wanted case (qualified name -> topic) once with ncu's source counters, keep the two
    imports of its report in work_dir, and explain each case from them."""
    if not wanted:
        return {}
    planned, _ = plan_cases(planned_from, work_dir)
    cases = [replace(planned[name], repeat=1) for name in wanted if name in planned]
    folder = work_dir / RUNS / "explain"
    run = run_ncu(
        folder, cases, (), settings.ncu, device=settings.gpus[0], sections=EXPLAIN_SECTIONS, keep_report=True
    )
    diagnose(run)
    report = folder / REPORT_FILE
    if not report.exists():
        return {}
    ran = [s.case for s in run.cases if s.ok]
    (work_dir / EXPLAIN_DETAILS).write_text(import_report(settings.ncu, report, "details"))
    (work_dir / EXPLAIN_SOURCE).write_text(import_report(settings.ncu, report, "source"))
    (work_dir / EXPLAIN_CASES).write_text(json.dumps({name: wanted[name] for name in ran}, indent=1))
    return recorded_explanations(work_dir)


def recorded_explanations(folder: Path) -> dict[str, Explanation]:
    """The explanations kept in a work or recording folder: qualified case -> Explanation. InputError,
    naming the file, where one of them is damaged."""
    paths = [folder / name for name in (EXPLAIN_DETAILS, EXPLAIN_SOURCE, EXPLAIN_CASES)]
    if not any(path.exists() or path.is_symlink() for path in paths):
        return {}
    details, source, cases = (
        recording.read_text(path, folder, recording.MAX_EXPLAIN_BYTES) for path in paths
    )
    topics = _explained_cases(cases, folder / EXPLAIN_CASES)
    try:
        return {
            name: explain.explain(details, source, launch, topic)
            for launch, (name, topic) in enumerate(topics.items())
        }
    except (ValueError, InputError) as error:
        raise InputError(f"{folder}: the recorded explanations are damaged ({error})") from None


def _explained_cases(text: str, path: Path) -> dict[str, str]:
    """explain.json: each explained case (in launch order) -> its topic."""
    data = recording.parse_json(text, path, "not the explained cases")
    if not isinstance(data, dict):
        raise InputError(f"{path}: not the explained cases: not an object")
    for name, topic in data.items():
        if not (isinstance(topic, str) and topic in explain.TOPICS):
            known = ", ".join(explain.TOPICS)
            raise InputError(f"{path}: not the explained cases: {name[:80]!r}: not a topic ({known})")
    return data
