"""Stage 3 for a whole run: every file's cases profiled together, then explained where claims failed.

The cases of all files are profiled in as few ncu processes as the metrics allow (`schedule`), spread
over the GPUs given, each GPU's processes one after another. A case is named `<file key>::<case>`
in the runner's plans and statuses, so that one process can hold the cases of many files and the
results split back per file. A case that faults or hangs ends its process; the cases after it run
again in a fresh one.

Where claims on global or shared memory failed, a second pass profiles only their cases with ncu's
Source Counters and Memory Workload Analysis sections, and imports the report twice: the details page
for the rules that fired, the source page for the lines with the most excess (`explain`).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

from ncuverify import explain, profile, recording, schedule
from ncuverify.build import KernelBuild
from ncuverify.errors import EnvironmentProblem, InputError
from ncuverify.explain import Explanation
from ncuverify.measurements import Measurements
from ncuverify.runner import CaseStatus, PlannedCase
from ncuverify.spec import Claim, Spec

SEP = recording.SEP
RUNS = "runs"  # under the work folder: one folder per ncu process (plan, status, log, report)
EXPLAIN_SECTIONS = ("SourceCounters", "MemoryWorkloadAnalysis_Tables")
EXPLAIN_DETAILS = "explain.details.csv"
EXPLAIN_SOURCE = "explain.source.csv"
EXPLAIN_CASES = "explain.json"


def qualified(key: str, case: str) -> str:
    return f"{key}{SEP}{case}"


@dataclass(frozen=True)
class FileCases:
    """One file's part of a run: its key (a name unique in the run), spec, builds and profiler claims."""

    key: str
    spec: Spec
    builds: dict[str, KernelBuild]
    claims: list[Claim]


@dataclass(frozen=True)
class Settings:
    """How the run profiles: ncu's options, the GPUs, what it knows of ncu's passes."""

    ncu: profile.NcuOptions
    gpus: tuple[int, ...] = (0,)
    passes: schedule.PassCounts | None = None
    keep_report: bool = False  # also keep ncu's .ncu-rep of every process
    say: Callable[[str], None] | None = None


def case_metrics(spec: Spec, claims: Sequence[Claim]) -> dict[str, set[str]]:
    """The cases these claims read (in file order), each with the ncu metrics it needs. A control is
    judged by the claim's expression on the control case, so it needs what the claim's case needs."""
    needs: dict[str, set[str]] = {}
    for claim in claims:
        for ref in claim.metric_refs():
            wanted = {ref.name} if profile.is_ncu_metric(ref) else set()
            needs.setdefault(ref.case, set()).update(wanted)
            if claim.control is not None and ref.case == claim.case:
                needs.setdefault(claim.control, set()).update(wanted)
    return {name: needs[name] for name in spec.content.cases if name in needs}


def profile_files(
    files: Sequence[FileCases], work_dir: Path, settings: Settings
) -> tuple[list[recording.Run], Measurements]:
    """Profile every case the files' claims read: the runs of every ncu process, in a fixed order, and
    what they measured (cases under their qualified names)."""
    planned, wanted = _plan(files, work_dir)
    passes = settings.passes or schedule.PassCounts()
    groups = schedule.groups(wanted, passes)
    units = schedule.spread(groups, wanted, settings.gpus, passes)
    by_gpu = {gpu: [(i, u) for i, u in enumerate(units) if u.gpu == gpu] for gpu in settings.gpus}
    stop = threading.Event()
    ncu = replace(settings.ncu, cancelled=stop.is_set)

    def run_gpu(gpu: int) -> list[tuple[int, list[_Measured]]]:
        return [(i, _run_unit(u, planned, work_dir / RUNS / f"{i}", ncu, settings)) for i, u in by_gpu[gpu]]

    if len(by_gpu) == 1:
        done = run_gpu(settings.gpus[0])
    else:
        with ThreadPoolExecutor(max_workers=len(by_gpu)) as pool:
            futures = [pool.submit(run_gpu, gpu) for gpu in by_gpu]
            try:
                done = [item for future in futures for item in future.result()]
            except BaseException:  # Ctrl-C or a failure: stop the other GPUs' processes too
                stop.set()
                raise
    measured_runs = [item for _, unit_runs in sorted(done, key=lambda item: item[0]) for item in unit_runs]
    measured = Measurements.empty()
    for _, part in measured_runs:
        measured = measured.combined(part)
    _learn_passes(passes, measured, units)
    return [run for run, _ in measured_runs], measured


# A run and its measurements: parsed once, to find the cases to run again and to judge.
_Measured = tuple[recording.Run, Measurements]


def _plan(
    files: Sequence[FileCases], work_dir: Path
) -> tuple[dict[str, PlannedCase], list[schedule.ProfiledCase]]:
    """Every case to profile, under its qualified name, with its cubin written once per kernel (over
    what an earlier run in a kept profile's folder left: never its kernels)."""
    cubins = work_dir / "cubins"
    cubins.mkdir(parents=True, exist_ok=True)
    planned: dict[str, PlannedCase] = {}
    wanted: list[schedule.ProfiledCase] = []
    written: set[Path] = set()
    for number, file in enumerate(files):
        for name, metrics in case_metrics(file.spec, file.claims).items():
            case = file.spec.content.cases[name]
            # numbered, not named: a file's key is a path, which may hold any character
            cubin = cubins / f"{number}.{case.kernel}.cubin"
            if cubin not in written:
                recording.write_file(cubin, file.builds[case.kernel].cubin)
                written.add(cubin)
            full = qualified(file.key, name)
            planned[full] = profile.planned_case(full, case, file.builds[case.kernel], cubin)
            reads_back = any(getattr(arg, "name", None) for arg in case.args)
            wanted.append(schedule.ProfiledCase(full, case.repeat, frozenset(metrics), reads_back))
    return planned, wanted


def _run_unit(
    unit: schedule.Unit,
    planned: dict[str, PlannedCase],
    folder: Path,
    ncu: profile.NcuOptions,
    settings: Settings,
) -> list[_Measured]:
    """One unit's ncu process, and one more for the cases after each case that faulted or hung."""
    runs: list[_Measured] = []
    remaining = list(unit.cases)
    if settings.say is not None:
        say = settings.say
        ncu = replace(ncu, on_case=lambda case: say(f"profiling {case.replace(SEP, ': ')}"))
    while remaining:
        cases = [planned[name] for name in remaining]
        run_dir = folder / str(len(runs))
        run = profile.run_ncu(
            run_dir, cases, unit.metrics, ncu, device=unit.gpu, keep_report=settings.keep_report
        )
        profile.diagnose(run)
        status = _faults_named(run.status, cases, run_dir, ncu, unit.gpu) or _runner_failure(run, remaining)
        symbols = {c.name: c.symbol for c in cases}
        recorded = recording.Run(run.report, tuple(status), run.command)
        measured = _run_measurements(recorded, symbols)
        if run.stopped is not None and measured.unmeasured:
            recorded = replace(recorded, cases=_stopped(recorded.cases, measured.unmeasured, run.stopped))
            measured = _run_measurements(recorded, symbols)
        runs.append((recorded, measured))
        remaining = _to_run_again(status, measured)
    return runs


def _faults_named(
    status: list[CaseStatus],
    planned: list[PlannedCase],
    work_dir: Path,
    ncu: profile.NcuOptions,
    gpu: int,
) -> list[CaseStatus]:
    """Where a kernel's fault ended the process under ncu, the CUDA error it raises without ncu."""
    named = []
    for entry in status:
        if entry.context_lost and "process ended" in str(entry.error):
            case = next(c for c in planned if c.name == entry.case)
            error = profile.name_the_fault(work_dir / "fault", case, ncu.case_timeout_s, gpu)
            if error is not None:
                entry = replace(
                    entry, error=f"{error} (run again without the profiler; under it: {entry.error})"
                )
        named.append(entry)
    return named


def _stopped(status: Sequence[CaseStatus], unmeasured: Sequence[str], reason: str) -> tuple[CaseStatus, ...]:
    """After ncu was stopped past the runner's last case: the cases its report lacks fail with why."""
    return tuple(s.failed(reason) if s.case in unmeasured else s for s in status)


def _to_run_again(status: list[CaseStatus], measured: Measurements) -> list[str]:
    """After a case poisoned or ended the process: the cases it kept from running or from being reported."""
    if not any(s.context_lost for s in status):
        return []
    done = {s.case for s in status}
    not_run = [case for s in status for case in s.not_run or ()]
    return [*measured.unmeasured, *(case for case in not_run if case not in done)]


def _runner_failure(run: profile.ProfileRun, cases: list[str]) -> list[CaseStatus]:
    """The runner left no status: it never started. Every case fails with what it printed last."""
    lines = [line for line in (run.output + run.report).splitlines() if line.strip()]
    said = profile.shown_output(lines[-1]) if lines else "no output"
    reason = f"the runner did not start (exit {run.returncode}): {said}"
    return [CaseStatus(name, False, reason) for name in cases]


def _learn_passes(passes: schedule.PassCounts, measured: Measurements, units: list[schedule.Unit]) -> None:
    """Remember how many replay passes ncu needed for each unit's metrics, for the next run's grouping."""
    frame = measured.frame
    counts = frame[frame["metric"] == "profiler__replayer_passes"].dropna(subset=["value"])
    for unit in units:
        reported = counts[counts["case"].isin(unit.cases)]["value"]
        if not reported.empty:
            passes.remember(unit.metrics, int(reported.max()))


# --- measurements, live or replayed ----------------------------------------------------------------------


def _run_measurements(run: recording.Run, symbols: dict[str, str]) -> Measurements:
    """A run's measurements; each case's kernel comes from the status (the runner writes it) or symbols."""
    known = {s.case: s.kernel for s in run.cases if s.kernel}
    return profile.measurements(profile.parse_csv(run.report), run.cases, {**symbols, **known})


def measurements_by_file(
    runs: Sequence[recording.Run], keys: Sequence[str], symbols: dict[str, str]
) -> dict[str, Measurements]:
    """Each file's measurements, with its own case names, from the recorded runs that hold its cases;
    a file of which the runs hold no case is left out. A run whose report cannot be read, or does not
    match its status, is an InputError naming its files."""
    prefixes = tuple(qualified(key, "") for key in keys)
    relevant = [run for run in runs if any(s.case.startswith(prefixes) for s in run.cases)]
    measured = Measurements.empty()
    for run in relevant:
        try:
            measured = measured.combined(_run_measurements(run, symbols))
        except EnvironmentProblem as problem:
            raise InputError(f"{run.source or 'a recorded run'}: {problem}") from None
    return by_file(measured, keys)


def by_file(measured: Measurements, keys: Sequence[str]) -> dict[str, Measurements]:
    """A run's measurements split per file, with the file's own case names; a file of which no case
    was measured, failed or left unmeasured is left out."""
    cases = {*measured.frame["case"].astype(str), *measured.failed_cases, *measured.unmeasured}
    return {
        key: measured.of_prefix(qualified(key, ""))
        for key in keys
        if any(case.startswith(qualified(key, "")) for case in cases)
    }


def symbols_of(files: Sequence[FileCases]) -> dict[str, str]:
    return {
        qualified(file.key, name): file.builds[case.kernel].symbol
        for file in files
        for name, case in file.spec.content.cases.items()
        if case.kernel in file.builds
    }


# --- explanations ----------------------------------------------------------------------------------------


def explain_cases(
    wanted: dict[str, str], planned_from: Sequence[FileCases], work_dir: Path, settings: Settings
) -> dict[str, Explanation]:
    """Profile each wanted case (qualified name -> topic) once with ncu's source counters, keep the two
    imports of its report in work_dir, and explain each case from them."""
    if not wanted:
        return {}
    planned, _ = _plan(planned_from, work_dir)
    cases = [replace(planned[name], repeat=1) for name in wanted if name in planned]
    folder = work_dir / RUNS / "explain"
    run = profile.run_ncu(
        folder, cases, (), settings.ncu, device=settings.gpus[0], sections=EXPLAIN_SECTIONS, keep_report=True
    )
    profile.diagnose(run)
    report = folder / profile.REPORT_FILE
    if not report.exists():
        return {}
    ran = [s.case for s in run.status if s.ok]
    (work_dir / EXPLAIN_DETAILS).write_text(profile.import_report(settings.ncu, report, "details"))
    (work_dir / EXPLAIN_SOURCE).write_text(profile.import_report(settings.ncu, report, "source"))
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
