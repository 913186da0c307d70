"""ncu's command line for a program case: the program's own command, run by ncu, profiling only the
launches the case selects (by demangled name, NVTX range, launch number and process)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from ncuverify.profile.command import CSV_OUTPUT, NcuOptions, metrics_arguments, replay_arguments
from ncuverify.spec.programs import ProgramCase


def program_ncu_command(
    options: NcuOptions,
    case: ProgramCase,
    metrics: Iterable[str],
    log_file: Path,
    command: Sequence[str],
) -> list[str]:
    """The ncu command line that runs command (its words as they are: no shell reads them) and
    profiles the case's launches, with the metrics the claims need."""
    name = case.kernel_exact if case.kernel_exact is not None else f"regex:{case.kernel}"
    nvtx = ["--nvtx"] if case.nvtx_include or case.nvtx_exclude else []
    nvtx += [word for rule in case.nvtx_include for word in ("--nvtx-include", rule)]
    nvtx += [word for rule in case.nvtx_exclude for word in ("--nvtx-exclude", rule)]
    skip = ["--launch-skip", str(case.launch_skip)] if case.launch_skip else []
    return [
        options.executable,
        *CSV_OUTPUT,
        *replay_arguments(options),
        "--kernel-name-base",
        "demangled",
        "--print-kernel-base",
        "demangled",
        "--kernel-name",
        name,
        *nvtx,
        *skip,
        "--launch-count",
        str(case.launch_count),
        "--target-processes",
        case.target_processes,
        *metrics_arguments(metrics),
        "--log-file",
        str(log_file),
        "--",
        *command,
    ]
