"""Baselines: every value a run measured, saved, so that a later run can say what got worse or better
than main even where no claim breaks (registers +8, time +10%, spills appearing).

Only measures with a tolerance are compared. Larger is worse for all of them. The defaults below can be
changed per expectation file (`regressions:`) and on the command line (`--tolerance NAME=rel:0.1`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ncuverify import __version__
from ncuverify.errors import InputError
from ncuverify.pipeline import FileResult
from ncuverify.spec import Tolerance

DEFAULT_TOLERANCES: dict[str, Tolerance] = {
    "gpu__time_duration.sum": Tolerance(rel=0.10),  # time varies from run to run
    "static__registers_per_thread": Tolerance(abs=0),  # the compiler's decisions do not
    "static__spill_store_bytes": Tolerance(abs=0),
    "static__spill_load_bytes": Tolerance(abs=0),
    "static__stack_frame_bytes": Tolerance(abs=0),
}


@dataclass(frozen=True)
class Change:
    file: str
    case: str
    metric: str
    before: float
    after: float
    worse: bool  # a regression; else an improvement beyond the tolerance

    @property
    def ratio(self) -> float | None:
        return self.after / self.before if self.before else None


def snapshot(results: Sequence[FileResult]) -> dict[str, Any]:
    """Every measured value of a run: file stem -> case -> metric -> value."""
    files: dict[str, dict[str, dict[str, float]]] = {}
    for result in results:
        if result.measurements is None:
            continue
        cases = files.setdefault(result.path.stem, {})
        for row in result.measurements.frame.itertuples(index=False):
            if not math.isnan(row.value):
                cases.setdefault(str(row.case), {})[str(row.metric)] = float(row.value)
    provenance = next((r.provenance for r in results if r.provenance is not None), None)
    return {
        "ncuverify": __version__,
        "measured_on": provenance.describe() if provenance else None,
        "files": files,
    }


def save(results: Sequence[FileResult], path: Path) -> None:
    path.write_text(json.dumps(snapshot(results), indent=1, sort_keys=True))


def load(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise InputError(f"{path}: no such baseline") from None
    except ValueError as error:
        raise InputError(f"{path}: not a baseline ({error})") from None
    if not isinstance(data, dict) or not isinstance(data.get("files"), dict):
        raise InputError(f"{path}: not a baseline (no 'files')")
    return data


def parse_tolerance(text: str) -> tuple[str, Tolerance]:
    """`gpu__time_duration.sum=rel:0.05` or `static__registers_per_thread=abs:8`."""
    name, _, rule = text.partition("=")
    kind, _, amount = rule.partition(":")
    try:
        value = float(amount)
    except ValueError:
        value = -1.0
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
    baseline: dict[str, Any], results: Sequence[FileResult], overrides: dict[str, Tolerance]
) -> list[Change]:
    """Every tracked measure that moved beyond its tolerance, worse or better, in file and case order."""
    changes = []
    for result in results:
        before_cases = baseline["files"].get(result.path.stem, {})
        now = snapshot([result])["files"].get(result.path.stem, {})
        tolerances = tolerances_for(result, overrides)
        for case, metrics in now.items():
            for metric, tolerance in tolerances.items():
                before = before_cases.get(case, {}).get(metric)
                after = metrics.get(metric)
                if before is None or after is None:
                    continue
                if not tolerance.allows(before, after):
                    changes.append(Change(result.path.stem, case, metric, before, after, worse=True))
                elif not tolerance.allows(after, before):
                    changes.append(Change(result.path.stem, case, metric, before, after, worse=False))
    return changes
