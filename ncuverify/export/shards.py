"""The shards of a run, read back and merged. The merge takes only the shards of one whole run: one
suite (the same expectation files, with the same contents), each of its N shares exactly once, every
kernel and case of one version in every shard that holds it, every claim as its expectation file has
it (where the files are here: written.py); and it judges every claim again from the shard's own
measured values (rejudging.py), never taking a verdict on trust."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ncuverify.errors import InputError
from ncuverify.export.outcome import RunOutcome
from ncuverify.export.reading import NOT_A_RESULT, baseline_of, read_document
from ncuverify.export.rejudging import Disagrees, rejudged
from ncuverify.export.run_identity import ShardOf
from ncuverify.export.written import not_as_written
from ncuverify.files import read_json
from ncuverify.measurements import Measurements, Row
from ncuverify.names import SASS_PREFIX, STATIC_PREFIX
from ncuverify.results import FileResult
from ncuverify.text import one_line

if TYPE_CHECKING:  # a name only: the baseline reads exported fields (a cycle)
    from ncuverify.baseline.ratchet import Comparison

# The whole suite's results are about 6 MB; a file ten times that is not a result ncuverify wrote.
MAX_RESULT_BYTES = 64 * 2**20


@dataclass(frozen=True)
class Shard:
    """One file written by check --json: its results, and which share of which suite they are (None
    where it was written before the JSON said so)."""

    path: Path
    results: list[FileResult]
    shard: ShardOf | None
    compared: Comparison | None = None  # what moved against the baseline the shard was compared with
    baseline_error: str | None = None  # the line saying that comparison failed


def read_shard(path: Path) -> Shard:
    """A file written by check --json; InputError naming the file and the field for anything else."""
    shown = _name(path)
    try:
        document = read_json(path, MAX_RESULT_BYTES)
    except FileNotFoundError:
        raise InputError(f"{shown}: no such file") from None
    except OSError as error:
        raise InputError(f"{shown}: cannot be read ({error.strerror or error})") from None
    except ValueError as error:
        raise InputError(f"{shown}: not {NOT_A_RESULT}: {error}") from None
    results, shard = read_document(document, str(path))
    return Shard(path, results, shard, *baseline_of(document, str(path)))


def merged_outcome(shards: Sequence[Shard], results: list[FileResult]) -> RunOutcome:
    """The merged run's outcome: its results, and every shard's moves against the baseline (each
    shard compared its own files), so that a regression in one shard fails the merged run too."""
    compared = [shard.compared for shard in shards if shard.compared is not None]
    error = next((shard.baseline_error for shard in shards if shard.baseline_error is not None), None)
    if not compared:
        return RunOutcome(results, baseline_error=error)
    from ncuverify.baseline.ratchet import Comparison  # late: the baseline reads exported fields

    changes = [change for each in compared for change in each.changes]
    moves = [move for each in compared for move in each.moves]
    toolkits = next((each.toolkits for each in compared if each.toolkits is not None), None)
    return RunOutcome(results, Comparison(changes, moves, toolkits), error)


def merge(shards: Sequence[Shard], partial: bool = False) -> tuple[list[FileResult], list[str]]:
    """One result per file from the shards of one run, every claim once, in the first shard's file
    order; and warning lines. InputError unless the shards are one whole run: one suite, one N, each
    share 1..N exactly once, and unless every kernel and case is of one version in every shard; and
    unless each claim's verdict is what its shard's measured values give. With partial, an incomplete run, or shards written before the JSON named
    its run, are merged too, and the warnings say what is missing or could not be checked."""
    if not shards:
        raise InputError("merge: no shards given")
    warnings = [_unchecked(shard, partial) for shard in shards if shard.shard is None]
    warnings += [
        _incomplete(shard, shard.shard, partial) for shard in shards if shard.shard and shard.shard.missing
    ]
    runs = [(shard, shard.shard) for shard in shards if shard.shard is not None]
    if runs:
        _one_run(runs)
        n = runs[0][1].n
        missing = [f"{k}/{n}" for k in range(1, n + 1) if k not in {of.k for _, of in runs}]
        if missing:
            what = f"shard{'s' if len(missing) > 1 else ''} {', '.join(missing)} missing"
            count = f"{len(runs)} of {n}"
            if not partial:
                given = ", ".join(_name(shard.path) for shard, _ in runs)
                raise InputError(
                    f"merge: {what}: {given} {'is' if len(runs) == 1 else 'are'} {count} shards of the run"
                    " (merge --partial merges them anyway)"
                )
            warnings.append(f"merge: {what}: the results are those of {count} shards of the run")
    _one_version(shards)
    found = {not_as_written(_name(s.path), s.results, s.shard.suite if s.shard else None) for s in shards}
    warnings += sorted(warning for warning in found if warning is not None)
    return _merged([_judged_again(shard) for shard in shards]), warnings


def _incomplete(shard: Shard, of: ShardOf, partial: bool) -> str:
    what = f"{_name(shard.path)}: a partial merge, without shard{'s' if len(of.missing) > 1 else ''} {', '.join(of.missing)}"
    if not partial:
        raise InputError(f"{what} (merge --partial merges it anyway)")
    return what


def _unchecked(shard: Shard, partial: bool) -> str:
    what = f"{_name(shard.path)}: written by an earlier ncuverify, without the run it belongs to"
    if not partial:
        raise InputError(
            f"{what}: cannot check that the shards make one run (merge --partial merges it anyway)"
        )
    return f"{what}: not checked to be a shard of this run"


def _one_run(runs: Sequence[tuple[Shard, ShardOf]]) -> None:
    """InputError unless the shards are of one suite, split the same way, each share once, over the
    same files."""
    first, first_of = runs[0]
    seen: dict[int, Shard] = {}
    for shard, of in runs:
        name = _name(shard.path)
        if of.suite != first_of.suite:
            raise InputError(
                f"{name}: run.suite: a shard of another suite than {_name(first.path)}"
                " (other expectation files, or edited ones)"
            )
        if of.n != first_of.n:
            raise InputError(
                f"{name}: run.shard: shard {of}, but {_name(first.path)} is shard {first_of}:"
                " not shards of one run"
            )
        if of.k in seen:
            raise InputError(f"{name}: run.shard: shard {of} again (also {_name(seen[of.k].path)})")
        seen[of.k] = shard
        files = {result.key for result in shard.results}
        expected = {result.key for result in first.results}
        if files != expected:
            odd = one_line(min(files - expected or expected - files))
            raise InputError(
                f"{name}: files: not the files of {_name(first.path)} ({odd} is in one of them only;"
                " run every shard from the same folder on the same files)"
            )


def _judged_again(shard: Shard) -> Shard:
    """The shard with every claim judged again; InputError where a stored verdict is not the one its
    measured values give (the shard is refused whole: which of its fields were edited is not known)."""
    results = []
    for result in shard.results:
        try:
            results.append(rejudged(result))
        except Disagrees as error:
            raise InputError(
                one_line(
                    f"{_name(shard.path)}: {result.path}: {error}: the shard was edited, or judged by"
                    " another ncuverify"
                )
            ) from None
    return replace(shard, results=results)


def _one_version(shards: Sequence[Shard]) -> None:
    """InputError where two shards measured different versions of a kernel or a case: other sources
    or options (the kernels' digests), another launch, arguments or program (the cases' digests),
    other program files (their sha256), or other static facts (a run of static claims alone carries no digests). Their figures are not of
    one run, whatever the suite's files say."""
    seen: dict[tuple[str, ...], tuple[str, Shard]] = {}
    for shard in shards:
        for key, value, what in _versions(shard):
            first, earlier = seen.setdefault(key, (value, shard))
            if first != value:
                raise InputError(
                    one_line(
                        f"{_name(shard.path)}: {what} is {value}, but {first} in {_name(earlier.path)}:"
                        " the shards measured two versions of it, not one run"
                    )
                )


def _versions(shard: Shard) -> Iterator[tuple[tuple[str, ...], str, str]]:
    """What says which version of a kernel or a case a shard measured: (key, value, what it is)."""
    for result in shard.results:
        provenance = result.provenance
        if provenance is not None:
            for name, digest in provenance.kernels.items():
                yield (
                    ("kernel", name),
                    digest,
                    f"provenance.kernels[{name}] (the digest of its source and options)",
                )
            for name, digest in provenance.cases.items():
                yield (
                    ("case", name),
                    digest,
                    f"provenance.cases[{name}] (the digest of its launch, arguments or program)",
                )
            for case, files in provenance.program_files.items():
                for path, digest in files.items():
                    yield (
                        ("program file", case, path),
                        digest,
                        f"provenance.program_files[{case}][{path}] (the sha256 of a file its command runs)",
                    )
        for case, kernel, metric, value, _ in result.measurements.rows if result.measurements else ():
            if metric.startswith((STATIC_PREFIX, SASS_PREFIX)):
                # a fact of the kernel, whichever case launched it: a shard holds the kernels of its own
                # cases, and two shards that built one kernel must agree on it. Every digit counts; n/a
                # is written as null and read back as NaN, alike in both
                yield (
                    ("static", result.key, kernel, metric),
                    repr(value),
                    f"{result.path}: {metric} of kernel {kernel} (case {case})",
                )


def _merged(shards: Sequence[Shard]) -> list[FileResult]:
    merged: dict[str, FileResult] = {}
    judged_by: dict[tuple[str, str], int] = {}  # file key and claim id -> the shard that judged it
    for index, shard in enumerate(shards):
        for result in shard.results:
            for claim_result in result.claims:
                earlier = judged_by.setdefault((result.key, claim_result.claim.id), index)
                if earlier != index:
                    raise InputError(
                        f"{_name(shard.path)}: claim {claim_result.claim.id} of {_name(result.path)}"
                        f" is also in {_name(shards[earlier].path)}"
                    )
            known = merged.get(result.key)
            merged[result.key] = result if known is None else _both_results(known, result)
    return list(merged.values())


def _name(path: Path) -> str:
    """A path in a message: on one line, whatever it holds."""
    return one_line(str(path))


def _both_results(known: FileResult, result: FileResult) -> FileResult:
    return replace(
        known,
        claims=[*known.claims, *result.claims],
        input_error=known.input_error or result.input_error,
        internal_error=known.internal_error or result.internal_error,
        not_run=known.not_run if result.not_run is None else result.not_run,
        seconds=max(known.seconds, result.seconds),  # the shards ran side by side
        provenance=known.provenance or result.provenance,
        warnings=[*known.warnings, *result.warnings],
        measurements=_both(known.measurements, result.measurements),
        explanations={**known.explanations, **result.explanations},
        set_aside=known.set_aside + result.set_aside,  # each shard set aside the claims of its share
    )


def _both(first: Measurements | None, second: Measurements | None) -> Measurements | None:
    """Both shards' measurements, each case's metric once (where two shards hold a case's static facts,
    the first shard's value is kept)."""
    if first is None or second is None:
        return first or second
    combined = first.combined(second)
    kept: dict[tuple[str, str, str], Row] = {}
    for row in combined.rows:
        kept.setdefault(row[:3], row)
    return replace(combined, rows=tuple(kept.values()))


def run_seconds(shards: Sequence[Shard]) -> float:
    """How long the run took: its longest shard (each about as long as its longest file)."""
    return max((result.seconds for shard in shards for result in shard.results), default=0.0)
