"""The second pass over failed memory claims: their cases profiled again with ncu's Source Counters and
Memory Workload Analysis sections, and the report imported twice: the details page for the rules that
fired, the source page for the lines with the most excess (`explain`). Both imports are kept, so that a
recording replays its explanations.

Built cases are profiled together, in one ncu process. A program case's program runs again under ncu,
for the one launch its values came from (case#N's own; the first it selects otherwise), and its
imports are kept in a folder of their own under PROGRAM_EXPLANATIONS."""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from ncuverify import explain
from ncuverify.errors import InputError
from ncuverify.explain import Explanation
from ncuverify.names import QualifiedCase
from ncuverify.profile import recording
from ncuverify.profile.diagnose import diagnose
from ncuverify.profile.plan import FileCases, plan_cases
from ncuverify.profile.program_command import Sections
from ncuverify.profile.program_run import run_program
from ncuverify.profile.program_work import PlannedProgram, ProgramWork
from ncuverify.profile.run import run_ncu
from ncuverify.profile.saved_report import REPORT_FILE, import_report
from ncuverify.profile.session import RUNS, Settings
from ncuverify.runner import steps_up_to

EXPLAIN_SECTIONS = ("SourceCounters", "MemoryWorkloadAnalysis_Tables")
EXPLAIN_DETAILS = "explain.details.csv"
EXPLAIN_SOURCE = "explain.source.csv"
EXPLAIN_CASES = "explain.json"
_KEPT = (EXPLAIN_DETAILS, EXPLAIN_SOURCE, EXPLAIN_CASES)  # what a folder of explanations holds
PROGRAM_EXPLANATIONS = "explain-programs"  # one folder per program case explained: 0, 1, ...
MAX_PROGRAM_EXPLANATIONS = 1000  # read back from a recording, which may come from anyone


def explain_cases(
    cases_wanted: Mapping[QualifiedCase, str],
    planned_from: Sequence[FileCases],
    work_dir: Path,
    settings: Settings,
) -> dict[str, Explanation]:
    """Profile each wanted case (-> topic) once with ncu's source counters, keep the two imports of its
    report in work_dir, and explain each case (by its qualified name) from them."""
    if not cases_wanted:
        return {}
    wanted = {str(case): topic for case, topic in cases_wanted.items()}  # the plan's names
    planned, _ = plan_cases(planned_from, work_dir)
    # A step of a sequence after the steps before it, which are profiled but not explained.
    ordered = list(planned.values())
    launched = {c.name: c for name in wanted if name in planned for c in steps_up_to(ordered, name)}
    cases = [replace(case, repeat=1) for case in launched.values()]
    folder = work_dir / RUNS / "explain"
    run = run_ncu(
        folder, cases, (), settings.ncu, device=settings.gpus[0], sections=EXPLAIN_SECTIONS, keep_report=True
    )
    diagnose(run)
    report = folder / REPORT_FILE
    if not report.exists():
        return {}
    ran = [s.case for s in run.cases if s.ok]
    _keep_imports(settings, report, {name: wanted.get(name) for name in ran}, work_dir)
    return _explanations_in(work_dir)


def explain_programs(
    wanted: Mapping[QualifiedCase, str],
    programs: Mapping[str, PlannedProgram],
    work_dir: Path,
    settings: Settings,
) -> tuple[dict[str, Explanation], dict[str, str]]:
    """Run each wanted program case (`f::add` or `f::add#2` -> topic) again under ncu with the sections,
    for the one launch its values came from; keep the imports of each report in a folder of its own
    (programs: the planned program cases by name). The explanation of each case that ran, and why each
    other was not explained, by qualified name."""
    found: dict[str, Explanation] = {}
    unexplained: dict[str, str] = {}
    for number, (case, topic) in enumerate(wanted.items()):
        name, base, launch = str(case), str(case.without_launch()), case.launch
        if base not in programs:
            continue
        folder = work_dir / RUNS / f"explain-program-{number}"
        report = folder / REPORT_FILE.removesuffix(".ncu-rep")
        sections = Sections(EXPLAIN_SECTIONS, (launch or 1) - 1, report)
        run = run_program(ProgramWork((programs[base],), settings.gpus[0], sections), folder, settings.ncu)
        if not run.cases[0].ok:
            unexplained[name] = str(run.cases[0].error)
            continue
        kept = work_dir / PROGRAM_EXPLANATIONS / str(number)
        kept.mkdir(parents=True, exist_ok=True)
        _keep_imports(settings, sections.saved, {name: topic}, kept)
        found.update(_explanations_in(kept, work_dir))
    return found, unexplained


def _keep_imports(settings: Settings, report: Path, cases: Mapping[str, str | None], folder: Path) -> None:
    """The report's details and source pages, and its cases (in launch order) with their topics (None:
    a step launched before one explained, not explained itself)."""
    (folder / EXPLAIN_DETAILS).write_text(import_report(settings.ncu, report, "details"))
    (folder / EXPLAIN_SOURCE).write_text(import_report(settings.ncu, report, "source"))
    (folder / EXPLAIN_CASES).write_text(json.dumps(cases, indent=1))


def clear_explanations(work_dir: Path) -> None:
    """Remove the explanations an earlier run left in this folder (a kept profile's folder may be used
    again), so that a replay of this run shows only its own: the files of this module's names alone."""
    for folder in _explanation_folders(work_dir):
        for name in _KEPT:
            (folder / name).unlink(missing_ok=True)


def recorded_explanations(folder: Path) -> dict[str, Explanation]:
    """The explanations kept in a work or recording folder, its program cases' included: qualified case
    -> Explanation. InputError, naming the file, where one of them is damaged."""
    found: dict[str, Explanation] = {}
    for each in _explanation_folders(folder):
        found.update(_explanations_in(each, folder))
    return found


def _explanation_folders(folder: Path) -> list[Path]:
    """The folder, then its program cases' folders (plain folders, not links; at most
    MAX_PROGRAM_EXPLANATIONS of them)."""
    programs = folder / PROGRAM_EXPLANATIONS
    if not programs.is_dir() or programs.is_symlink():
        return [folder]
    kept = sorted(itertools.islice(programs.iterdir(), MAX_PROGRAM_EXPLANATIONS))
    return [folder, *(each for each in kept if each.is_dir() and not each.is_symlink())]


def _explanations_in(folder: Path, root: Path | None = None) -> dict[str, Explanation]:
    """The explanations of the three files in folder (which lies in root)."""
    root = root or folder
    paths = [folder / name for name in _KEPT]
    if not any(path.exists() or path.is_symlink() for path in paths):
        return {}
    details, source, cases = (recording.read_text(path, root, recording.MAX_EXPLAIN_BYTES) for path in paths)
    topics = _explained_cases(cases, folder / EXPLAIN_CASES)
    try:
        return {
            name: explain.explain(details, source, launch, topic)
            for launch, (name, topic) in enumerate(topics.items())
            if topic is not None
        }
    except (ValueError, InputError) as error:
        raise InputError(f"{folder}: the recorded explanations are damaged ({error})") from None


def _explained_cases(text: str, path: Path) -> dict[str, str | None]:
    """explain.json: each profiled case (in launch order) -> its topic; None for a step profiled only
    because a later step of its sequence is explained."""
    data = recording.parse_json(text, path, "not the explained cases")
    if not isinstance(data, dict):
        raise InputError(f"{path}: not the explained cases: not an object")
    for name, topic in data.items():
        if not (topic is None or (isinstance(topic, str) and topic in explain.TOPICS)):
            known = ", ".join(explain.TOPICS)
            raise InputError(f"{path}: not the explained cases: {name[:80]!r}: not a topic ({known})")
    return data
