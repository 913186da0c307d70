"""The measurement table: every value a run knows of its cases, from the build (static facts, SASS
counts), the profiler and the buffers the runner read back, in one tidy frame that judge, report and
export read without any profiling."""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable
from dataclasses import dataclass, field

import pandas as pd

from ncuverify.build.static import STATIC_PREFIX
from ncuverify.expression import SASS_PREFIX
from ncuverify.spec import BUFFER_PREFIX

MEASUREMENT_COLUMNS = ["case", "kernel", "metric", "value", "unit"]


@dataclass(frozen=True)
class Measurements:
    """One tidy table of measured values: case, kernel, metric, value, unit; plus cases that failed."""

    frame: pd.DataFrame
    failed_cases: dict[str, str] = field(default_factory=dict)
    unmeasured: tuple[str, ...] = ()  # cases that ran but that ncu's report does not cover

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
        if case not in self._cases:
            raise KeyError(f"case {case} was not measured")
        raise KeyError(f"no {_describe_metric(metric)} for case {case}")

    @functools.cached_property
    def _first_values(self) -> dict[tuple[str, str], float]:
        """Each case and metric's first value in the frame (a claim reads many: one pass, then lookups)."""
        values: dict[tuple[str, str], float] = {}
        for case, metric, value in zip(
            self.frame["case"], self.frame["metric"], self.frame["value"], strict=True
        ):
            values.setdefault((case, metric), math.nan if value is None else float(value))
        return values

    @functools.cached_property
    def _cases(self) -> frozenset[str]:
        return frozenset(self.frame["case"])

    def of_prefix(self, prefix: str) -> Measurements:
        """The measurements of the cases named prefix + name, under their names without the prefix."""

        def strip(names: Iterable[str]) -> list[str]:
            return [name.removeprefix(prefix) for name in names if name.startswith(prefix)]

        mask = [str(case).startswith(prefix) for case in self.frame["case"]]
        rows = self.frame.loc[pd.Series(mask, index=self.frame.index, dtype=bool)]
        return Measurements(
            frame=rows.assign(case=strip(rows["case"])).reset_index(drop=True),
            failed_cases={
                k.removeprefix(prefix): v for k, v in self.failed_cases.items() if k.startswith(prefix)
            },
            unmeasured=tuple(strip(self.unmeasured)),
        )

    def combined(self, other: Measurements) -> Measurements:
        frames = pd.concat([self.frame, other.frame], ignore_index=True)
        unmeasured = (*self.unmeasured, *other.unmeasured)
        if unmeasured:  # a case that one part left unmeasured and the other measured is measured
            measured = {
                case
                for case, metric in zip(frames["case"], frames["metric"], strict=True)
                if not str(metric).startswith((SASS_PREFIX, STATIC_PREFIX))
            }
            unmeasured = tuple(c for c in unmeasured if c not in measured)
        return Measurements(
            frame=frames, failed_cases={**self.failed_cases, **other.failed_cases}, unmeasured=unmeasured
        )

    @classmethod
    def empty(cls) -> Measurements:
        return cls(frame=pd.DataFrame(columns=MEASUREMENT_COLUMNS))


def _describe_metric(metric: str) -> str:
    if metric.startswith(SASS_PREFIX):
        return f"SASS count of {metric.removeprefix(SASS_PREFIX)!r} (no disassembler: install nvdisasm)"
    if metric.startswith(BUFFER_PREFIX):
        return f"{metric} (the runner read no such buffer back)"
    if metric.startswith(STATIC_PREFIX):
        return f"static fact {metric} (the build did not report it)"
    return f"value of {metric} from ncu"
