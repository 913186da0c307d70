"""Exit codes and the errors that map onto them."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """What `ncuverify check` returns; documented in the README and docs/command-line.md."""

    OK = 0  # every claim holds
    CLAIM_FAILED = 1  # a claim failed, or could not be evaluated on a run that did measure
    BAD_INPUT = 2  # the expectation file or a kernel is wrong (YAML, schema, compile)
    NOT_MEASURABLE = 3  # the claims cannot be measured here (no GPU, no ncu, no counter access;
    # or --static-only set aside every claim: nothing was judged)
    INTERNAL_ERROR = 4  # a bug in ncuverify: one line names the file that holds the traceback


class InputError(Exception):
    """The user's input is wrong; the message names the file, line and field."""


class EnvironmentProblem(Exception):
    """This machine cannot measure profiler claims; the message says why and what to do."""
