"""What the outputs say of a run as a whole: its exit code, and which verdicts fail it."""

from __future__ import annotations

from collections.abc import Sequence

from ncuverify.errors import ExitCode
from ncuverify.judge.claims import describe, format_number
from ncuverify.results import ClaimResult, FileResult, Verdict, exit_code

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
