"""ncu's command line for one process: which metrics or sections, which kernels, where its log goes."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ncuverify.names import TIME_METRIC

# A process start (ncu, the runner's Python and CUDA: about 1.5 s on an H200 machine) hides behind the
# profiling of the process before it; a third at once would only wait.
PROCESSES_PER_GPU = 2


@dataclass(frozen=True)
class NcuOptions:
    """How ncu is run; the defaults leave clocks alone and start every pass with cold caches."""

    executable: str = "ncu"
    clock_control: str = "none"
    cache_control: str = "all"
    case_timeout_s: float = 300.0  # one case, with all of ncu's replays of it
    # ncu processes at once on one GPU: with 2, the next starts (ncu, Python, CUDA) while one profiles,
    # and fills and launches once it has ended (the session's gates)
    processes_per_gpu: int = PROCESSES_PER_GPU
    on_case: Callable[[str], None] | None = None  # told the name of each case as it starts
    cancelled: Callable[[], bool] | None = None  # asked while ncu runs; True stops it (another GPU failed)


def ncu_command(
    options: NcuOptions,
    metrics: Iterable[str],
    symbols: Iterable[str],
    log_file: Path,
    plan_file: Path,
    report_file: Path | None = None,
    sections: Sequence[str] = (),
) -> list[str]:
    """The ncu command line that profiles a plan: only the metrics and kernels the claims need. With
    sections, ncu collects those sections instead (and its report is read by importing report_file)."""
    kernel_filter = "|".join(sorted({re.escape(s) for s in symbols}))
    output = [] if sections else list(CSV_OUTPUT)
    if sections:
        collect = [argument for section in sections for argument in ("--section", section)]
    else:
        collect = metrics_arguments(metrics)
    keep = ["--export", str(report_file), "--force-overwrite"] if report_file is not None else []
    return [
        options.executable,
        *output,
        *replay_arguments(options),
        "--kernel-name-base",
        "mangled",
        "--print-kernel-base",
        "mangled",
        "--kernel-name",
        f"regex:^({kernel_filter})$",
        *collect,
        *keep,
        "--log-file",
        str(log_file),
        sys.executable,
        "-m",
        "ncuverify.runner",
        str(plan_file),
    ]


CSV_OUTPUT = ("--csv", "--page", "raw", "--print-units", "base")


def replay_arguments(options: NcuOptions) -> list[str]:
    """How ncu treats clocks and caches between the passes of a launch."""
    return ["--clock-control", options.clock_control, "--cache-control", options.cache_control]


def metrics_arguments(metrics: Iterable[str]) -> list[str]:
    # ncu needs at least one metric, also when the claims read only buffers the kernel wrote.
    return ["--metrics", ",".join(sorted(set(metrics))) or TIME_METRIC]
