"""Measurements, live or replayed, split per file: each run's report parsed against its status, and a
run's measurements split back into each file's, with the file's own case names."""

from __future__ import annotations

from collections.abc import Sequence

from ncuverify.errors import EnvironmentProblem, InputError
from ncuverify.measurements import Measurements, Row
from ncuverify.names import is_time
from ncuverify.profile.plan import REPEATS, FileCases, qualified
from ncuverify.profile.recording import SEP
from ncuverify.profile.run import Run
from ncuverify.profile.shown import shown_name
from ncuverify.profile.work import run_measurements


def measurements_by_file(
    runs: Sequence[Run], keys: Sequence[str], symbols: dict[str, str]
) -> dict[str, Measurements]:
    """Each file's measurements, with its own case names, from the recorded runs that hold its cases;
    a file of which the runs hold no case is left out. A run whose report cannot be read, does not
    match its status, or lacks the launches of a case that its status says ran, is an InputError naming
    its log."""
    prefixes = tuple(qualified(key, "") for key in keys)
    relevant = [run for run in runs if any(s.case.startswith(prefixes) for s in run.cases)]
    each: list[Measurements] = []
    for run in relevant:
        try:
            each.append(run_measurements(run, symbols))
        except EnvironmentProblem as problem:
            raise InputError(f"{_named(run)}: {problem}") from None
    _refuse_cut_short(relevant, each)
    measured = Measurements.empty()
    for ours in each:
        measured = measured.combined(ours)
    return by_file(measured, keys)


def _refuse_cut_short(runs: Sequence[Run], measured: Sequence[Measurements]) -> None:
    """InputError where a recorded log holds no launch of a case that its status says ran, and that no
    later run ran again: the log was cut short or damaged. (A live run runs again the cases that a
    fault kept out of ncu's report, and fails those that a stop kept out.)"""
    later: set[str] = set()
    for run, ours in reversed(list(zip(runs, measured, strict=True))):
        lacking = [case for case in ours.unmeasured if case not in later]
        if lacking:
            raise InputError(
                f"{_named(run)}: damaged: it lacks the launches of case {shown_name(lacking[0])}, which"
                " the recorded status says ran; the log was cut short, or edited"
            )
        later.update(status.case for status in run.cases)


def _named(run: Run) -> str:
    return run.source or "a recorded run"


def by_file(measured: Measurements, keys: Sequence[str]) -> dict[str, Measurements]:
    """A run's measurements split per file, with the file's own case names; a file of which no case
    was measured, failed or left unmeasured is left out."""
    measured = with_repeats(measured)
    wanted = set(keys)
    rows: dict[str, list[Row]] = {}  # each file's rows, in one pass over the run's
    for row in measured.rows:
        key, _, case = row[0].rpartition(SEP)  # a case's own name holds no SEP; a file's key may
        if key in wanted:
            rows.setdefault(key, []).append((case, *row[1:]))
    found = {}
    for key in keys:
        prefix = qualified(key, "")
        failed = {k.removeprefix(prefix): v for k, v in measured.failed_cases.items() if k.startswith(prefix)}
        unmeasured = tuple(c.removeprefix(prefix) for c in measured.unmeasured if c.startswith(prefix))
        if key in rows or failed or unmeasured:
            found[key] = Measurements(tuple(rows.get(key, ())), failed, unmeasured)
    return found


def with_repeats(measured: Measurements) -> Measurements:
    """Each repeated case with the time of its repeats (`<case> (repeats)`, the median of its launches)
    in place of what its one launch with the other metrics gave; the repeats' other values (buffers
    read back) are left out. Where the repeats failed or ncu's report ended before them, so did the
    case's time."""
    named = [row[0] for row in measured.rows] + [*measured.failed_cases, *measured.unmeasured]
    split = {name.removesuffix(REPEATS) for name in named if name.endswith(REPEATS)}
    if not split:
        return measured
    times = [
        (row[0].removesuffix(REPEATS), *row[1:])
        for row in measured.rows
        if row[0].endswith(REPEATS) and is_time(row[2])
    ]
    kept = [
        row
        for row in measured.rows
        if not row[0].endswith(REPEATS) and not (row[0] in split and is_time(row[2]))
    ]
    failed = {case.removesuffix(REPEATS): why for case, why in measured.failed_cases.items()}
    unmeasured = tuple(dict.fromkeys(case.removesuffix(REPEATS) for case in measured.unmeasured))
    return Measurements((*kept, *times), failed, unmeasured)


def symbols_of(files: Sequence[FileCases]) -> dict[str, str]:
    return {
        qualified(file.key, name): file.builds[case.kernel].symbol
        for file in files
        for name, case in file.spec.content.cases.items()
        if case.kernel in file.builds
    }
