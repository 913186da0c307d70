"""What ncu's output says went wrong: a machine that cannot measure, or a metric ncu does not know."""

from __future__ import annotations

import re

from ncuverify.errors import EnvironmentProblem, InputError
from ncuverify.ncu.log import error_lines
from ncuverify.profile.run import Run
from ncuverify.profile.shown import shown_output

# Messages of ncu that mean this machine cannot measure, with what to tell the user.
_ENVIRONMENT_PROBLEMS = [
    (
        "ERR_NVGPUCTRPERM",
        "ncu may not read the GPU's performance counters here (ERR_NVGPUCTRPERM): run as root, or set "
        "NVreg_RestrictProfilingToAdminUsers=0 for the NVIDIA driver",
    ),
    (
        "LibraryNotLoaded",
        "ncu's profiler library did not load on this machine (LibraryNotLoaded): counters cannot be read",
    ),
    ("Failed to initialize the profiler", "ncu could not initialize the profiler on this machine"),
    ("is not supported on this device", "ncu does not support this GPU"),
    ("No supported GPU", "ncu found no GPU it supports"),
]


def diagnose(run: Run) -> None:
    """Raise EnvironmentProblem where ncu's output says this machine cannot measure, and InputError
    where it says the claims asked for something it does not know."""
    text = run.report + "\n" + run.output
    unknown = re.findall(r"Failed to find metric (\S+)", text)
    if unknown:
        names = ", ".join(shown_output(name, 120) for name in sorted(set(unknown))[:10])
        raise InputError(f"ncu knows no metric {names} on this GPU")
    if "No kernels were profiled" in text and any(s.ok for s in run.cases):
        raise EnvironmentProblem(
            "ncu profiled no kernel although the runner launched its cases (No kernels were profiled): "
            "is the GPU supported by this ncu, or another profiler attached?"
        )
    for needle, message in _ENVIRONMENT_PROBLEMS:
        if needle in text:
            raise EnvironmentProblem(message)
    # Once the runner has reported on its cases, ncu's own errors belong to those cases (a kernel
    # that faulted under the profiler), not to the machine.
    errors = error_lines(text)
    if errors and not _has_csv(run.report) and not run.cases:
        raise EnvironmentProblem(f"ncu failed: {shown_output(errors[0])}")


def _has_csv(text: str) -> bool:
    return any(line.startswith('"ID"') for line in text.splitlines())
