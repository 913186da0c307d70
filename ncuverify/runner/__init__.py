"""The program that Nsight Compute profiles: `python -m ncuverify.runner PLAN.json`.

It loads the cubins through cuda-python, allocates and fills each case's buffers, launches the case's
kernel once, synchronizes and checks every call. It prints nothing on stdout (ncu's report is read from
its own log file, but a quiet runner keeps any console clean) and records each case's outcome in the
plan's status file, rewritten after every case so that a crash loses nothing already launched.

The package itself holds what the profile stage reads of the runner (its plan, statuses, progress);
what launches (`run`, `case`, `fills`, `launch`: numpy, cuda.core) is imported by the runner alone.
"""

from ncuverify.runner.plan import Plan, PlannedCase, steps_up_to
from ncuverify.runner.progress import PROGRESS_FILE, Progress
from ncuverify.runner.status import (
    AFTER_FAILED_STEP,
    CUDA_DID_NOT_START,
    MAX_LAUNCHES,
    NEEDS_NCU,
    CaseStatus,
    StatusError,
    read_statuses,
    statuses_json,
)

__all__ = [
    "AFTER_FAILED_STEP",
    "CUDA_DID_NOT_START",
    "MAX_LAUNCHES",
    "NEEDS_NCU",
    "PROGRESS_FILE",
    "CaseStatus",
    "Plan",
    "PlannedCase",
    "Progress",
    "StatusError",
    "read_statuses",
    "statuses_json",
    "steps_up_to",
]
