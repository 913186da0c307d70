"""Measurements, live or replayed, split per file: each run's report parsed against its status, and a
run's measurements split back into each file's, with the file's own case names."""

from __future__ import annotations

from collections.abc import Sequence

from ncuverify.errors import EnvironmentProblem, InputError
from ncuverify.measurements import Measurements, Row
from ncuverify.names import QualifiedCase, is_time
from ncuverify.profile.plan import FileCases
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
    wanted = set(keys)
    relevant = [run for run in runs if any(_file_of(s.case) in wanted for s in run.cases)]
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


def _parsed(name: str) -> QualifiedCase | None:
    """The case a run names so; None for a name of no case (a damaged recording's)."""
    try:
        return QualifiedCase.parse(name)
    except ValueError:
        return None


class _Names(dict[str, tuple[str | None, str, str | None]]):
    """Each name a run gives, read once: (file key, the case as the file names it, the case whose
    repeats it names or None). A run's rows name a few hundred cases some tens of thousands of times."""

    def __missing__(self, name: str) -> tuple[str | None, str, str | None]:
        identity = _parsed(name)
        if identity is None:
            read: tuple[str | None, str, str | None] = (None, name, None)
        else:
            repeated = str(identity.without_repeats()) if identity.repeats else None
            read = (identity.file, str(identity.in_file(None)), repeated)
        self[name] = read
        return read


def _file_of(name: str) -> str | None:
    """The key of the file whose case a run names so (None: none)."""
    identity = _parsed(name)
    return identity.file if identity is not None else None


def _named(run: Run) -> str:
    return run.source or "a recorded run"


def by_file(measured: Measurements, keys: Sequence[str]) -> dict[str, Measurements]:
    """A run's measurements split per file, with the file's own case names; a file of which no case
    was measured, failed or left unmeasured is left out."""
    names = _Names()
    measured = with_repeats(measured, names)
    wanted = set(keys)
    rows: dict[str, list[Row]] = {}  # each file's rows, in one pass over the run's
    for row in measured.rows:
        key, case, _ = names[row[0]]
        if key in wanted:
            rows.setdefault(key, []).append((case, *row[1:]))
    failed: dict[str, dict[str, str]] = {}
    for name, why in measured.failed_cases.items():
        key, case, _ = names[name]
        failed.setdefault(key or "", {})[case] = why
    unmeasured: dict[str, list[str]] = {}
    for name in measured.unmeasured:
        key, case, _ = names[name]
        unmeasured.setdefault(key or "", []).append(case)
    found = {}
    for key in keys:
        if key in rows or key in failed or key in unmeasured:
            found[key] = Measurements(
                tuple(rows.get(key, ())), failed.get(key, {}), tuple(unmeasured.get(key, ()))
            )
    return found


def with_repeats(measured: Measurements, names: _Names | None = None) -> Measurements:
    """Each repeated case with the time of its repeats (`<case> (repeats)`, the median of its launches)
    in place of what its one launch with the other metrics gave; the repeats' other values (buffers
    read back) are left out. Where the repeats failed or ncu's report ended before them, so did the
    case's time."""
    names = _Names() if names is None else names

    def _repeated(name: str) -> str | None:
        return names[name][2]

    named = [row[0] for row in measured.rows] + [*measured.failed_cases, *measured.unmeasured]
    split = {case for name in named if (case := _repeated(name)) is not None}
    if not split:
        return measured
    times = [
        (case, *row[1:])
        for row in measured.rows
        if (case := _repeated(row[0])) is not None and is_time(row[2])
    ]
    kept = [
        row
        for row in measured.rows
        if _repeated(row[0]) is None and not (row[0] in split and is_time(row[2]))
    ]
    failed = {_repeated(case) or case: why for case, why in measured.failed_cases.items()}
    unmeasured = tuple(dict.fromkeys(_repeated(case) or case for case in measured.unmeasured))
    return Measurements((*kept, *times), failed, unmeasured)


def symbols_of(files: Sequence[FileCases]) -> dict[str, str]:
    return {
        str(QualifiedCase.of(file.key, name)): file.builds[case.kernel].symbol
        for file in files
        for name, case in file.spec.content.cases.items()
        if case.kernel in file.builds
    }
