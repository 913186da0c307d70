"""ncu's command line for a program case: the program's own command, run by ncu, profiling only the
launches the case selects (by demangled name, NVTX range, launch number and process)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ncuverify.profile.command import CSV_OUTPUT, NcuOptions, metrics_arguments, replay_arguments
from ncuverify.spec.programs import ProgramCase


@dataclass(frozen=True)
class Sections:
    """Instead of metrics: ncu's sections for one launch of those the case selects (the first is 0),
    kept in a report to import, as the explanation of a failed claim needs."""

    names: tuple[str, ...]
    launch: int
    report_file: Path  # without its .ncu-rep suffix, which ncu adds

    @property
    def saved(self) -> Path:
        """The report as ncu saves it."""
        return self.report_file.with_name(self.report_file.name + ".ncu-rep")


def program_ncu_command(
    options: NcuOptions,
    case: ProgramCase,
    metrics: Iterable[str],
    log_file: Path,
    command: Sequence[str],
    sections: Sections | None = None,
) -> list[str]:
    """The ncu command line that runs command (its words as they are: no shell reads them) and
    profiles the case's launches, with the metrics the claims need (or one of them with sections)."""
    name = case.kernel_exact if case.kernel_exact is not None else f"regex:{case.kernel}"
    nvtx = ["--nvtx"] if case.nvtx_include or case.nvtx_exclude else []
    nvtx += [word for rule in case.nvtx_include for word in ("--nvtx-include", rule)]
    nvtx += [word for rule in case.nvtx_exclude for word in ("--nvtx-exclude", rule)]
    if sections is None:
        output, collect = list(CSV_OUTPUT), metrics_arguments(metrics)
        first, count = case.launch_skip, case.launch_count
    else:
        output = []
        collect = [word for section in sections.names for word in ("--section", section)]
        collect += ["--export", str(sections.report_file), "--force-overwrite"]
        first, count = case.launch_skip + sections.launch, 1
    skip = ["--launch-skip", str(first)] if first else []
    return [
        options.executable,
        *output,
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
        str(count),
        "--target-processes",
        case.target_processes,
        *collect,
        "--log-file",
        str(log_file),
        "--",
        *command,
    ]
