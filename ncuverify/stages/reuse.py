"""`check --reuse DIR`: the figures of a recording taken again for every case whose measurement key
(profile.measurement_keys) is the one the recording keeps, so that only the other cases are profiled.

The recording is read as `--from-profile` reads it (profile.recording, bounded, untrusted), and what
is taken from it is what was recorded under the very key computed today: a forged key or figure gains
what a forged replay gains, nothing more. A case is taken only where it was measured (a case that
failed or that ncu's report ended before is profiled again), and the steps of a sequence are taken
all together or not at all (they are profiled as one). A recording that cannot be read, or that keeps
no keys, gives nothing: every case is profiled, and a warning says why. Each case not taken keeps why
(`Reuse.refused`). `check --dry-run --reuse` asks the same decision (`reused`) what a run would take.
"""

from __future__ import annotations

import csv
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from ncuverify.errors import EnvironmentProblem, InputError
from ncuverify.measurements import Measurements
from ncuverify.names import QualifiedCase
from ncuverify.profile import per_file, programs, recording
from ncuverify.profile.cases import launch_cases
from ncuverify.profile.plan import FileCases, case_metrics, with_earlier_steps
from ncuverify.profile.run import Run
from ncuverify.profile.table import tidy_rows
from ncuverify.provenance import Provenance, ReusedFrom
from ncuverify.results import FileKey
from ncuverify.spec.programs import launch_of


@dataclass(frozen=True)
class Reuse:
    """What a run takes from a recording: each file's cases (its own names) and their figures, the
    recorded runs cut down to those cases (for a recording of this run), and why nothing, if so."""

    folder: Path
    provenance: Provenance | None = None
    cases: dict[str, frozenset[str]] = field(default_factory=dict)  # file key -> cases reused
    measured: dict[str, Measurements] = field(default_factory=dict)  # file key -> their figures
    runs: list[Run] = field(default_factory=list)
    warning: str | None = None
    # file key -> case -> why the recording does not give it (a case the files' claims read)
    refused: dict[str, dict[str, str]] = field(default_factory=dict)

    def reused_from(self, key: str, read: int) -> ReusedFrom | None:
        """The file's mark of reused figures, read: how many cases its claims read in all."""
        if self.provenance is None:
            return None
        cases = tuple(sorted(self.cases.get(key, ())))
        return ReusedFrom(str(self.folder), self.provenance.recorded_at, self.provenance.gpu, cases, read)


@dataclass(frozen=True)
class Reused:
    """A run's files with the cases they reuse left out of the profile, and what the run does with what
    it reused: its warnings, the cut runs a recording of it keeps, each file's mark."""

    files: list[FileCases]
    taken: Reuse | None = None

    @classmethod
    def of(cls, taken: Reuse, files: Sequence[FileCases]) -> Reused:
        return cls([replace(file, reused=taken.cases.get(file.key, frozenset())) for file in files], taken)

    @property
    def warnings(self) -> tuple[str, ...]:
        return (self.taken.warning,) if self.taken is not None and self.taken.warning else ()

    @property
    def runs(self) -> list[Run]:
        return self.taken.runs if self.taken is not None else []

    @property
    def marks(self) -> dict[str, ReusedFrom]:
        """Each file's mark of reused figures (every file of a run that reuses, even of none)."""
        if self.taken is None:
            return {}
        marks = {file.key: self.taken.reused_from(file.key, read_cases(file)) for file in self.files}
        return {key: mark for key, mark in marks.items() if mark is not None}

    def why_not(self, key: str, case: str) -> str | None:
        """Why the file's case is profiled rather than taken from the recording (None: not known, as
        where the recording gives nothing at all, which the warning says)."""
        return self.taken.refused.get(key, {}).get(case) if self.taken is not None else None

    def merged(self, measured: dict[str, Measurements]) -> dict[str, Measurements]:
        """Each file's figures: those profiled now with those reused (no case is in both)."""
        if self.taken is None:
            return measured
        combined = dict(measured)
        for key, ours in self.taken.measured.items():
            combined[key] = combined[key].combined(ours) if key in combined else ours
        return combined


def anything_to_profile(files: Sequence[FileCases]) -> bool:
    """Whether a case of the files is left to profile once the reused ones are left out."""
    return any(
        set(case_metrics(file.spec, file.claims)) - file.reused or programs.planned_programs([file])
        for file in files
    )


def reused(
    folder: Path | None, files: Sequence[FileCases], keys: dict[str, str], file_keys: Sequence[FileKey]
) -> Reused:
    """What a run of the files, keyed by keys, takes again from --reuse's recording in folder (nothing
    without one): the one decision, for the run and for its dry run alike."""
    if folder is None:
        return Reused(list(files))
    return Reused.of(reusable(folder, files, keys, file_keys), files)


def reusable(
    folder: Path, files: Sequence[FileCases], keys: dict[str, str], file_keys: Sequence[FileKey]
) -> Reuse:
    """What of the recording in folder the files' cases, keyed by keys (qualified case -> key), may
    take again."""
    try:
        recorded = recording.load(folder, file_keys)
    except InputError as error:
        return Reuse(folder, warning=f"--reuse: {error}; every case is profiled")
    recorded_keys = recorded.provenance.measurement_keys
    if not recorded_keys:
        return Reuse(
            folder,
            warning=f"--reuse: {folder} keeps no measurement keys (recorded before"
            " ncuverify kept them); every case is profiled",
        )
    if not keys:
        return Reuse(folder, warning="--reuse: ncu's version is not known here; every case is profiled")
    try:
        measured = _recorded_measurements(recorded.runs, files)
    except (InputError, EnvironmentProblem) as error:
        return Reuse(folder, warning=f"--reuse: {error}; every case is profiled")
    decided = {
        file.key: _decided(file, keys, recorded_keys, measured.get(file.key, Measurements.empty()))
        for file in files
    }
    cases = {key: taken for key, (taken, _) in decided.items() if taken}
    refused = {key: why for key, (_, why) in decided.items() if why}
    figures = {key: _only(measured[key], taken, _programs(files, key)) for key, taken in cases.items()}
    try:
        runs = cut_runs(recorded.runs, files, cases)
    except (InputError, EnvironmentProblem, csv.Error) as error:  # read once already: damage is unlikely
        return Reuse(folder, warning=f"--reuse: {error}; every case is profiled")
    return Reuse(folder, recorded.provenance, cases, figures, runs, refused=refused)


def read_cases(file: FileCases) -> int:
    """How many cases the file's claims have profiled: built cases with the steps before them, and
    program cases."""
    return len(with_earlier_steps(file.spec, case_metrics(file.spec, file.claims))) + len(
        programs.planned_programs([replace(file, reused=frozenset())])
    )


def _recorded_measurements(runs: Sequence[Run], files: Sequence[FileCases]) -> dict[str, Measurements]:
    """Each file's recorded figures, as --from-profile reads them."""
    keys = [file.key for file in files]
    named = programs.program_cases(files)
    built = [run for run in runs if not programs.is_program_run(run, named)]
    measured = per_file.measurements_by_file(built, keys, per_file.symbols_of(files))
    for key, ours in per_file.by_file(programs.replayed_programs(runs, named), keys).items():
        measured[key] = measured[key].combined(ours) if key in measured else ours
    return measured


def _decided(
    file: FileCases, keys: dict[str, str], recorded_keys: dict[str, str], measured: Measurements
) -> tuple[frozenset[str], dict[str, str]]:
    """The file's cases whose key is the recorded one and that the recording measured (a sequence's
    steps only where all of them are), and why each other case is not taken."""
    content = file.spec.content
    runs = [*with_earlier_steps(file.spec, case_metrics(file.spec, file.claims))]
    runs += [name for name in content.programs if str(QualifiedCase.of(file.key, name)) in keys]
    failed = {_case_of(name, content.programs) for name in [*measured.failed_cases, *measured.unmeasured]}
    present = {_case_of(name, content.programs) for name in measured.cases}
    why: dict[str, str] = {}
    for name in runs:
        qualified = str(QualifiedCase.of(file.key, name))
        reason = _why_not(keys.get(qualified), recorded_keys.get(qualified), name in present, name in failed)
        if reason is not None:
            why[name] = reason
    by_sequence: dict[str, list[str]] = {}
    for name in runs:
        first = content.sequence_steps(name)[0] if name in content.cases else name
        by_sequence.setdefault(first, []).append(name)
    for steps in by_sequence.values():
        if any(step in why for step in steps):
            why.update(
                {step: "another step of its sequence is profiled" for step in steps if step not in why}
            )
    return frozenset(name for name in runs if name not in why), why


def _why_not(key: str | None, recorded: str | None, present: bool, failed: bool) -> str | None:
    """Why a case's recorded figures are not taken; None where they are."""
    if key is None:
        return "no measurement key (its kernel is not built)"
    if recorded is None:
        return "not in the recording"
    if recorded != key:
        return "changed since the recording (its code, launch, metrics or the GPU and tools)"
    if failed:
        return "failed in the recording, or its report ended before it"
    if not present:
        return "not measured in the recording"
    return None


def _only(measured: Measurements, cases: frozenset[str], program_cases: Collection[str]) -> Measurements:
    """The figures of these cases alone (a program case's launches, add#1, add#2, with add)."""
    return Measurements(
        tuple(row for row in measured.rows if _case_of(row[0], program_cases) in cases),
        {case: why for case, why in measured.failed_cases.items() if _case_of(case, program_cases) in cases},
        tuple(case for case in measured.unmeasured if _case_of(case, program_cases) in cases),
    )


def _case_of(name: str, program_cases: Collection[str]) -> str:
    """The case a measured name is of: a program case's launch (add#2) is add's; a built case's name,
    which may hold a `#` of its own, is its own."""
    case = launch_of(name)[0]
    return case if case in program_cases else name


def _programs(files: Sequence[FileCases], key: str) -> Collection[str]:
    return next((file.spec.content.programs.keys() for file in files if file.key == key), ())


def cut_runs(runs: Sequence[Run], files: Sequence[FileCases], cases: dict[str, frozenset[str]]) -> list[Run]:
    """The recorded runs that hold reused cases, each with those cases alone (their statuses and their
    launches' lines of ncu's table), so that a recording of this run holds no figure of another case."""
    identities = [QualifiedCase.of(key, name) for key, names in cases.items() for name in names]
    kept = {str(identity) for identity in identities}
    kept |= {str(replace(identity, repeats=True)) for identity in identities}
    named = programs.program_cases(files)
    symbols = per_file.symbols_of(files)
    cut: list[Run] = []
    for run in runs:
        statuses = tuple(status for status in run.cases if status.case in kept)
        if not statuses:
            continue
        if programs.is_program_run(run, named):
            cut.append(run)  # one case per run: all of it
            continue
        known = {status.case: status.kernel for status in run.cases if status.kernel}
        launches, _, _ = launch_cases(tidy_rows(run.report), run.cases, {**symbols, **known})
        ours = {launch for launch, case in launches.items() if case in kept}
        cut.append(replace(run, report=_table_cut(run.report, ours), cases=statuses))
    return cut


def _table_cut(report: str, launches: set[int]) -> str:
    """ncu's log with only these launches' rows in its table (its other lines as they were)."""
    lines = report.splitlines(keepends=True)
    header_at = next((i for i, line in enumerate(lines) if line.strip().startswith('"ID"')), None)
    if header_at is None:
        return report
    header = next(csv.reader([lines[header_at].strip()]))
    id_at = header.index("ID")
    kept = lines[: header_at + 1]
    for line in lines[header_at + 1 :]:
        stripped = line.strip()
        if not stripped.startswith('"'):
            kept.append(line)
            continue
        record = next(csv.reader([stripped]))
        launch = record[id_at] if id_at < len(record) else ""
        if launch == "" or (launch.isdigit() and int(launch) in launches):
            kept.append(line)  # the units row has no ID
    return "".join(kept)
