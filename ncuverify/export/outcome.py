"""What a run found as a whole: its files' results (the claims' verdicts, the claims set aside, the
files ncuverify failed on) and what moved against a baseline. The exit code and every output (the
terminal, JSON, JUnit, Markdown, HTML) are computed from this one value, so that none of them says a
run passed that another fails."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ncuverify.errors import ExitCode, InputError
from ncuverify.judge.claims import describe, format_number
from ncuverify.results import (
    ClaimResult,
    FileResult,
    Verdict,
    exit_code,
    judged_nothing,
    nothing_judged_line,
    set_aside,
    set_aside_line,
    worst,
)
from ncuverify.spec import Spec, load

if TYPE_CHECKING:  # names only: the baseline reads exported fields (a cycle)
    from ncuverify.baseline.ratchet import Comparison, KernelMove
    from ncuverify.baseline.snapshot import Change

# What a claim's verdict is for a CI system reading JUnit, and for the summary's "What did not hold".
FAILING = (Verdict.FAILED, Verdict.XPASSED)
NOT_RUN = (Verdict.SKIPPED, Verdict.OTHER_ARCH)


def run_exit_code(results: Sequence[FileResult]) -> ExitCode:
    """The run's exit code; never "every claim holds" where ncuverify itself failed on a file."""
    code = exit_code(results)
    if code is ExitCode.OK and any(result.internal_error is not None for result in results):
        return ExitCode.INTERNAL_ERROR
    return code


def claim_message(result: ClaimResult) -> str:
    """What a claim that did not hold says, in one line: its metric, the value measured and expected."""
    measured = format_number(result.measured) if result.measured is not None else "not measured"
    text = f"{result.claim.metric}: measured {measured}, expected {describe(result.claim.expect)}"
    return f"{text} ({result.reason})" if result.reason else text


@dataclass(frozen=True)
class RunOutcome:
    """A run's results and, where it was compared with a baseline, what moved against it (compared),
    or the line that says ncuverify failed to compare it (baseline_error)."""

    results: Sequence[FileResult]
    compared: Comparison | None = None
    baseline_error: str | None = None

    @property
    def against_baseline(self) -> bool:
        return self.compared is not None or self.baseline_error is not None

    @property
    def changes(self) -> Sequence[Change]:
        return self.compared.changes if self.compared is not None else ()

    @property
    def moves(self) -> Sequence[KernelMove]:
        return self.compared.moves if self.compared is not None else ()

    @property
    def regressed(self) -> list[Change]:
        """The measures that got worse than the baseline and that no allow entry accepts: each fails."""
        return [change for change in self.changes if change.worse and change.allowed is None]

    @property
    def allowed(self) -> list[Change]:
        return [change for change in self.changes if change.worse and change.allowed is not None]

    @property
    def improved(self) -> list[Change]:
        return [change for change in self.changes if not change.worse]

    @property
    def code(self) -> ExitCode:
        """The exit code: the results', a regression a claim's failure, a failed comparison an internal
        error (the first in the order 4, 2, 1, 3 wins)."""
        code = run_exit_code(self.results)
        if self.baseline_error is not None:
            code = worst(code, ExitCode.INTERNAL_ERROR)
        if self.regressed:
            code = worst(code, ExitCode.CLAIM_FAILED)
        return code

    def failing_claims(self) -> int:
        return sum(1 for r in self.results for c in r.claims if c.verdict in (*FAILING, Verdict.ERROR))

    def path_of(self, key: str) -> Path | None:
        """The expectation file a change's file key names, as the run was given it."""
        return next((result.path for result in self.results if result.key == key), None)

    def case_line(self, key: str, case: str) -> int | None:
        """The line where the file of that key writes a change's case (a kernel of a set, `KEY[kernel]`:
        its kernel entry): None where the file or the case is not known (here, for results read back
        from JSON, the file loaded again)."""
        if key not in self._specs:
            result = next((result for result in self.results if result.key == key), None)
            self._specs[key] = spec_of(result) if result is not None else None
        spec = self._specs[key]
        return spec.lines.case_line(case) if spec is not None else None

    @functools.cached_property
    def _specs(self) -> dict[str, Spec | None]:
        """The files loaded by case_line, by key: once a run, as every output asks for each change's line."""
        return {}


def outcome_of(run: Sequence[FileResult] | RunOutcome) -> RunOutcome:
    """A run given as its outcome, or as its results alone (not compared with a baseline)."""
    return run if isinstance(run, RunOutcome) else RunOutcome(list(run))


def headline(outcome: RunOutcome) -> str:
    """What the run came to, in the words every output opens with; "every claim holds" only where the
    exit code is 0."""
    code, results = outcome.code, outcome.results
    unjudged = judged_nothing(results)
    if code is ExitCode.NOT_MEASURABLE and unjudged:
        return nothing_judged_line(unjudged)
    if code is ExitCode.OK and set_aside(results):
        return "every claim judged holds; " + set_aside_line(set_aside(results))
    if code is ExitCode.CLAIM_FAILED:
        return _failed(outcome)
    if code is ExitCode.INTERNAL_ERROR and not any(r.internal_error for r in results):
        return "ncuverify failed comparing the run with the baseline"
    return {
        ExitCode.OK: "every claim holds",
        ExitCode.BAD_INPUT: "an expectation file is wrong",
        ExitCode.NOT_MEASURABLE: "some claims could not be measured here",
        ExitCode.INTERNAL_ERROR: "ncuverify failed on a file",
    }[code]


def _failed(outcome: RunOutcome) -> str:
    regressed = len(outcome.regressed)
    said = f"{regressed} measure{'s' if regressed != 1 else ''} regressed against the baseline"
    if not regressed:
        return "claims failed"
    return f"claims failed; {said}" if outcome.failing_claims() else said


def spec_of(result: FileResult) -> Spec | None:
    """The file as the run loaded it; results read back from JSON (merge) have none: the file loaded
    here where it loads, for its lines."""
    if result.spec is not None or result.input_error is not None or result.internal_error is not None:
        return result.spec
    try:
        return load(result.path)
    except (InputError, OSError, ValueError):  # not here; a NUL in a path read back from JSON
        return None
