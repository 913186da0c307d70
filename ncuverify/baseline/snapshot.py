"""Baselines: every value a run measured, saved, so that a later run can say what got worse or better
than main even where no claim breaks (registers +8, time +10%, spills appearing).

Only measures with a tolerance are compared. Larger is worse for all of them. The defaults below can be
changed per expectation file (`regressions:`) and on the command line (`--tolerance NAME=rel:0.1`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ncuverify import __version__
from ncuverify import json_fields as fields
from ncuverify.build import STATIC_METRICS
from ncuverify.errors import InputError
from ncuverify.files import read_json
from ncuverify.json_fields import Malformed
from ncuverify.judge.kernel_sets import of_set_case
from ncuverify.names import SHARED_STATIC_BYTES, TIME_METRIC
from ncuverify.results import FileResult
from ncuverify.spec import Tolerance
from ncuverify.text import one_line

DEFAULT_TOLERANCES: dict[str, Tolerance] = {
    TIME_METRIC: Tolerance(rel=0.10),  # time varies from run to run
    # the compiler's decisions do not
    **{name: Tolerance(abs=0) for name, metric in STATIC_METRICS.items() if metric.exact},
}


@dataclass(frozen=True)
class Change:
    file: str
    case: str
    metric: str
    before: float
    after: float
    worse: bool  # a regression; else an improvement beyond the tolerance
    allowed: str | None = None  # a regression that an allow entry accepts: its reason
    allowed_by: int | None = None  # that entry's index in its file

    @property
    def ratio(self) -> float | None:
        return self.after / self.before if self.before else None


@dataclass(frozen=True)
class CaseValues:
    """One case's values in a baseline: metric -> value, every one finite (JSON holds no others)."""

    metrics: Mapping[str, float]

    def __post_init__(self) -> None:
        object.__setattr__(self, "metrics", MappingProxyType(dict(self.metrics)))


@dataclass(frozen=True)
class FileValues:
    """One expectation file's cases in a baseline, by name; a kernel of a set is a case of its own
    (`KEY[kernel]`)."""

    cases: Mapping[str, CaseValues]

    def __post_init__(self) -> None:
        object.__setattr__(self, "cases", MappingProxyType(dict(self.cases)))

    def value(self, case: str, metric: str) -> float | None:
        values = self.cases.get(case)
        return values.metrics.get(metric) if values is not None else None


NO_VALUES = FileValues({})


@dataclass(frozen=True)
class Baseline:
    """Every value a run measured, by file key (in a baseline of an earlier version: by stem), case and
    metric, and what saved it."""

    files: Mapping[str, FileValues]
    version: str | None = None  # of the ncuverify that saved it ("ncuverify" in the file)
    measured_on: str | None = None  # the GPU and tools, as Provenance.describe() says them
    # which nvcc compiled the kernels nvcc built, as Provenance.compiled_with() says it; None where NVRTC
    # compiled every kernel, or in a baseline saved before ncuverify kept it
    compiled_with: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "files", MappingProxyType(dict(self.files)))

    def recorded(self, result: FileResult) -> FileValues:
        """The file's entry: under its key; in a baseline of an earlier version, which knew files by
        their stems, under its stem."""
        if result.key in self.files:
            return self.files[result.key]
        return self.files.get(result.path.stem, NO_VALUES)

    def as_values(self) -> dict[str, dict[str, dict[str, float]]]:
        """File key -> case -> metric -> value, in plain dicts of its own (baseline_of's argument)."""
        return {
            key: {case: dict(values.metrics) for case, values in entry.cases.items()}
            for key, entry in self.files.items()
        }

    def json_text(self) -> str:
        """The file `baseline save` writes."""
        document: dict[str, object] = {
            "ncuverify": self.version,
            "measured_on": self.measured_on,
            "files": self.as_values(),
        }
        if self.compiled_with is not None:  # a baseline of NVRTC's kernels keeps the bytes it had
            document["compiled_with"] = self.compiled_with
        return json.dumps(document, indent=1, sort_keys=True)


def baseline_of(
    files: Mapping[str, Mapping[str, Mapping[str, float]]],
    version: str | None = None,
    measured_on: str | None = None,
    compiled_with: str | None = None,
) -> Baseline:
    """A baseline of plain values: file key -> case -> metric -> value."""
    return Baseline(
        {
            key: FileValues({case: CaseValues(metrics) for case, metrics in cases.items()})
            for key, cases in files.items()
        },
        version,
        measured_on,
        compiled_with,
    )


def snapshot(results: Sequence[FileResult]) -> Baseline:
    """Every measured value of a run (finite values only: JSON holds no others)."""
    files: dict[str, dict[str, dict[str, float]]] = {}
    for result in results:
        if result.measurements is None:
            continue
        cases = files.setdefault(result.key, {})
        for case, _, metric, value, _ in result.measurements.rows:
            if math.isfinite(value):  # NaN where ncu said n/a
                cases.setdefault(case, {})[metric] = value
    provenance = next((r.provenance for r in results if r.provenance is not None), None)
    return baseline_of(
        files, __version__, provenance.describe() if provenance else None, compiled_with(results)
    )


def compiled_with(results: Sequence[FileResult]) -> str | None:
    """Which nvcc compiled the run's nvcc-built kernels, each once; None where none was (NVRTC's)."""
    found = {which for r in results if r.provenance is not None for which in r.provenance.nvcc.values()}
    return one_line(", ".join(sorted(found))) or None


def toolkit_note(baseline: Baseline, results: Sequence[FileResult]) -> str | None:
    """The line that says the baseline's kernels were compiled by another nvcc than the run's (registers
    and spills differ between nvcc releases); None where they were not, or either is unknown."""
    before, now = baseline.compiled_with, compiled_with(results)
    if before is None or now is None or before == now:
        return None
    return (
        f"the baseline's kernels were compiled with {before}, this run's with {now}: registers, spills"
        " and timings may differ between nvcc releases and toolkits"
    )


def save(results: Sequence[FileResult], path: Path) -> None:
    path.write_text(snapshot(results).json_text())


# A baseline of the whole suite is about 1 MB; one of 64 MiB was not written by `baseline save`.
MAX_BASELINE_BYTES = 64 * 2**20


def load(path: Path) -> Baseline:
    """A baseline written by `baseline save`, every value checked: InputError naming the file and the
    first field that is wrong (`base.json: not a baseline (files.f.c.m: not a number)`)."""
    try:
        return _baseline(read_json(path, MAX_BASELINE_BYTES))
    except FileNotFoundError:
        raise InputError(f"{one_line(str(path))}: no such baseline") from None
    except OSError as error:
        raise InputError(f"{one_line(str(path))}: cannot be read ({error.strerror or error})") from None
    except ValueError as error:  # what read_json and _baseline find wrong (Malformed is a ValueError)
        raise InputError(one_line(f"{path}: not a baseline ({error})")) from None


def _baseline(data: Any) -> Baseline:
    """The baseline's values, checked; Malformed naming the first field that is wrong."""
    if not isinstance(data, dict):
        raise Malformed("", "not a JSON object")
    for key in data:
        if key not in ("ncuverify", "measured_on", "compiled_with", "files"):
            raise Malformed("", f"unknown key {fields.shown(key)}")
    if "files" not in data:
        raise Malformed("files", "missing")
    version, measured_on, toolkits = (
        fields.optional(fields.text, data.get(key), key)
        for key in ("ncuverify", "measured_on", "compiled_with")
    )
    files: dict[str, dict[str, dict[str, float]]] = {}
    for key, cases in fields.json_object(data["files"], "files").items():
        where = fields.member("files", key)
        files[key] = {}
        for case, metrics in fields.json_object(cases, where).items():
            at = fields.member(where, case)
            files[key][case] = {
                metric: fields.finite(value, fields.member(at, metric))
                for metric, value in fields.json_object(metrics, at).items()
            }
    return baseline_of(files, version, measured_on, toolkits)


def parse_tolerance(text: str) -> tuple[str, Tolerance]:
    """`gpu__time_duration.sum=rel:0.05` or `static__registers_per_thread=abs:8`."""
    name, _, rule = text.partition("=")
    kind, _, amount = rule.partition(":")
    try:
        value = float(amount)
    except ValueError:
        value = -1.0
    if not math.isfinite(value):  # nan compares false with everything: it would allow any change
        raise InputError(
            f"--tolerance {one_line(repr(text))}: the amount must be a finite number, e.g. gpu__time_duration.sum=rel:0.1"
        )
    if not name or kind not in ("rel", "abs") or value < 0:
        raise InputError(
            f"--tolerance {text!r}: write NAME=rel:FRACTION or NAME=abs:AMOUNT, e.g. gpu__time_duration.sum=rel:0.1"
        )
    return name, Tolerance(**{kind: value})


def tolerances_for(result: FileResult, overrides: dict[str, Tolerance]) -> dict[str, Tolerance]:
    """Defaults, then the file's `regressions:`, then the command line's."""
    from_file = result.spec.content.regressions if result.spec is not None else {}
    return {**DEFAULT_TOLERANCES, **from_file, **overrides}


def compare(
    baseline: Baseline, results: Sequence[FileResult], overrides: dict[str, Tolerance]
) -> list[Change]:
    """Every tracked measure that moved beyond its tolerance, worse or better, in file and case order."""
    changes = []
    for result in results:
        before_values = baseline.recorded(result)
        now = snapshot([result]).files.get(result.key, NO_VALUES)
        tolerances = tolerances_for(result, overrides)
        for case, values in now.cases.items():
            for metric, tolerance in _of_case(case, tolerances).items():
                before = before_values.value(case, metric)
                after = values.metrics.get(metric)
                if before is None or after is None:
                    continue
                if not tolerance.allows(before, after):
                    changes.append(Change(result.key, case, metric, before, after, worse=True))
                elif not tolerance.allows(after, before):
                    changes.append(Change(result.key, case, metric, before, after, worse=False))
    return changes


# A kernel of a set may not grow its shared memory either: the ratchet of a kernel library.
SET_TOLERANCES: dict[str, Tolerance] = {SHARED_STATIC_BYTES: Tolerance(abs=0)}


def _of_case(case: str, tolerances: dict[str, Tolerance]) -> dict[str, Tolerance]:
    """The tolerances of a case; a kernel of a set (`KEY[kernel]`) holds its shared memory too."""
    return {**SET_TOLERANCES, **tolerances} if of_set_case(case) is not None else tolerances
