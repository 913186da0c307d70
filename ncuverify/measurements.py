"""The measurement table: every value a run knows of its cases, from the build (static facts, SASS
counts), the profiler and the buffers the runner read back, in one tidy table that judge, report and
export read without any profiling. It is kept as rows (plain tuples): a check of static claims alone
never needs pandas, whose import costs more than the check; `frame` gives the table as a DataFrame."""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ncuverify.names import BUFFER_PREFIX, SASS_PREFIX, STATIC_PREFIX

if TYPE_CHECKING:
    import pandas as pd

MEASUREMENT_COLUMNS = ["case", "kernel", "metric", "value", "unit"]

# One measured value: case, kernel, metric, value (NaN for ncu's n/a), unit.
Row = tuple[str, str, str, float, str]


@dataclass(frozen=True)
class Measurements:
    """One tidy table of measured values: case, kernel, metric, value, unit; plus cases that failed."""

    rows: tuple[Row, ...] = ()
    failed_cases: dict[str, str] = field(default_factory=dict)
    unmeasured: tuple[str, ...] = ()  # cases that ran but that ncu's report does not cover

    @classmethod
    def of_frame(
        cls, frame: pd.DataFrame, failed_cases: dict[str, str] | None = None, unmeasured: Sequence[str] = ()
    ) -> Measurements:
        """The measurements of a table with the MEASUREMENT_COLUMNS (others are left out)."""
        columns = [frame[name] for name in MEASUREMENT_COLUMNS]
        rows = tuple(
            (str(case), str(kernel), str(metric), _number(value), str(unit))
            for case, kernel, metric, value, unit in zip(*columns, strict=True)
        )
        return cls(rows, dict(failed_cases or {}), tuple(unmeasured))

    @functools.cached_property
    def frame(self) -> pd.DataFrame:
        """The rows as a DataFrame with the MEASUREMENT_COLUMNS."""
        import pandas as pd

        frame = pd.DataFrame(list(self.rows), columns=MEASUREMENT_COLUMNS)
        return frame.astype({"value": "float64"})

    @functools.cached_property
    def cases(self) -> frozenset[str]:
        """The cases that have a row."""
        return frozenset(row[0] for row in self.rows)

    def value(self, case: str, metric: str) -> float:
        """The value of a metric for a case; KeyError with a reason if it is not there."""
        found = self._first_values.get((case, metric))
        if found is not None and not math.isnan(found):
            return found
        if case in self.failed_cases:  # static facts of a case that did not launch are still known
            raise KeyError(f"case {case} did not run: {self.failed_cases[case]}")
        if case in self.unmeasured:
            raise KeyError(f"case {case} ran, but ncu's report ended before it")
        if found is not None:
            raise KeyError(f"ncu reported {metric} as n/a for case {case}")
        if case not in self.cases:
            raise KeyError(f"case {case} was not measured")
        raise KeyError(f"no {_describe_metric(metric)} for case {case}")

    @functools.cached_property
    def _first_values(self) -> dict[tuple[str, str], float]:
        """Each case and metric's first value (a claim reads many: one pass, then lookups)."""
        values: dict[tuple[str, str], float] = {}
        for case, _, metric, value, _ in self.rows:
            values.setdefault((case, metric), value)
        return values

    def combined(self, other: Measurements) -> Measurements:
        rows = self.rows + other.rows
        unmeasured = (*self.unmeasured, *other.unmeasured)
        if unmeasured:  # a case that one part left unmeasured and the other measured is measured
            measured = {row[0] for row in rows if not row[2].startswith((SASS_PREFIX, STATIC_PREFIX))}
            unmeasured = tuple(c for c in unmeasured if c not in measured)
        return Measurements(rows, {**self.failed_cases, **other.failed_cases}, unmeasured)

    @classmethod
    def empty(cls) -> Measurements:
        return cls()


def _number(value: Any) -> float:
    """A table's value as a float; None (no value) as NaN."""
    return math.nan if value is None else float(value)


def _describe_metric(metric: str) -> str:
    if metric.startswith(SASS_PREFIX):
        return f"SASS count of {metric.removeprefix(SASS_PREFIX)!r} (no disassembler: install nvdisasm)"
    if metric.startswith(BUFFER_PREFIX):
        return f"{metric} (the runner read no such buffer back)"
    if metric.startswith(STATIC_PREFIX):
        return f"static fact {metric} (the build did not report it)"
    return f"value of {metric} from ncu"
