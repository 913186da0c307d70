"""What a run found as a whole: its files' results (the claims' verdicts, the claims set aside, the
files ncuverify failed on) and what moved against a baseline. The exit code and every output (the
terminal, JSON, JUnit, Markdown, HTML) are computed from this one value, so that none of them says a
run passed that another fails."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from stat import S_ISREG
from typing import TYPE_CHECKING

from ncuverify.errors import ExitCode
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


# Only an expectation file of this size is searched for a case's line: larger ones are not read again.
MAX_SEARCHED_BYTES = 4 * 2**20
# An indented mapping key, quoted or not: a case's or a kernel set's name where it is defined.
_KEY = re.compile(r"\s+(['\"]?)([^'\"\s:#][^'\":]*?)\1\s*:(?:\s|$)")


def case_line(path: Path | None, case: str) -> int | None:
    """The line of an expectation file where a case (or, for a kernel of a set, `KEY[kernel]`, the set)
    is named: known only where one line alone names it so, else None (a swept case, a name used
    twice, a file gone)."""
    from ncuverify.judge.kernel_sets import of_set_case  # late: it loads the build stage

    if path is None:
        return None
    label = of_set_case(case)
    try:
        stat = path.stat()
    except (OSError, ValueError):  # ValueError: a NUL in a path read from a shard's JSON
        return None
    if not S_ISREG(stat.st_mode):  # a path from a shard's JSON may name a device or a pipe: never read
        return None
    found = _keys_of(path, stat.st_mtime_ns, stat.st_size).get(label[0] if label is not None else case, [])
    return found[0] if len(found) == 1 else None


@functools.lru_cache(maxsize=64)
def _keys_of(path: Path, mtime_ns: int, size: int) -> dict[str, list[int]]:
    """Each indented key of the file, and the lines it stands on (read once per version of the file:
    every output asks for each change's line)."""
    if size > MAX_SEARCHED_BYTES:
        return {}
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}
    keys: dict[str, list[int]] = {}
    for number, line in enumerate(text.splitlines(), 1):
        matched = _KEY.match(line)
        if matched is not None:
            keys.setdefault(matched[2], []).append(number)
    return keys
