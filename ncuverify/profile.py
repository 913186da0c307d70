"""Stage 3: profile every case under Nsight Compute and turn its CSV into measurements.

An ncu process runs the runner (`python -m ncuverify.runner`), which launches each case of its plan
once; which cases share a process is `session`'s and `schedule`'s concern. ncu writes its report to a
log file of its own (`--log-file`), so nothing the runner prints can reach the parser. The parser accepts both CSV pages (raw: wide, with a units row; details: long) and
copes with the `==PROF==` preamble, thousands separators and `n/a`.
"""

from __future__ import annotations

import csv
import math
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ncuverify.build import KernelBuild, is_static
from ncuverify.errors import EnvironmentProblem, InputError
from ncuverify.expression import MetricRef
from ncuverify.measurements import MEASUREMENT_COLUMNS, Measurements
from ncuverify.processes import TimedOut, kill_group, run_bounded, start_group
from ncuverify.runner import (
    PROGRESS_FILE,
    CaseStatus,
    Plan,
    PlannedCase,
    Progress,
    StatusError,
    read_statuses,
)
from ncuverify.spec import BUFFER_PREFIX, CaseSpec
from ncuverify.text import one_line

# ncu's fixed columns in CSV output; every other column of the raw page is a metric.
_NCU_COLUMNS = {
    "ID",
    "Process ID",
    "Process Name",
    "Host Name",
    "Kernel Name",
    "Kernel Time",
    "Context",
    "Stream",
    "Block Size",
    "Grid Size",
    "Device",
    "CC",
}


@dataclass(frozen=True)
class NcuOptions:
    """How ncu is run; the defaults leave clocks alone and start every pass with cold caches."""

    executable: str = "ncu"
    clock_control: str = "none"
    cache_control: str = "all"
    case_timeout_s: float = 300.0  # one case, with all of ncu's replays of it
    on_case: Callable[[str], None] | None = None  # told the name of each case as it starts
    cancelled: Callable[[], bool] | None = None  # asked while ncu runs; True stops it (another GPU failed)


# --- the command -------------------------------------------------------------------------------------------


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
    output = [] if sections else ["--csv", "--page", "raw", "--print-units", "base"]
    if sections:
        collect = [argument for section in sections for argument in ("--section", section)]
    else:
        # ncu needs at least one metric, also when the claims read only buffers the kernel wrote.
        collect = ["--metrics", ",".join(sorted(set(metrics))) or "gpu__time_duration.sum"]
    keep = ["--export", str(report_file), "--force-overwrite"] if report_file is not None else []
    return [
        options.executable,
        *output,
        "--clock-control",
        options.clock_control,
        "--cache-control",
        options.cache_control,
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


# ncu appends .ncu-rep to the name given to --export.
REPORT_FILE = "profile.ncu-rep"

# How `import_report` asks ncu for each page of a saved report.
_IMPORT_PAGES = {
    "details": ["--page", "details", "--print-details", "all", "--print-units", "base"],
    "source": ["--page", "source", "--print-source", "cuda,sass"],
}
# Reading a saved report back takes seconds; an ncu that takes this long is stuck.
IMPORT_TIMEOUT_S = 300.0


def import_report(options: NcuOptions, report: Path, page: str) -> str:
    """One page of a saved report as CSV (`ncu --import`): needs ncu, not a GPU."""
    command = [options.executable, "--import", str(report), "--csv", *_IMPORT_PAGES[page]]
    try:
        completed = run_bounded(command, IMPORT_TIMEOUT_S, env={**os.environ, "LC_ALL": "C"})
    except (OSError, TimedOut) as error:
        raise EnvironmentProblem(f"ncu could not read its report {report}: {error}") from None
    if completed.returncode != 0:
        said = (completed.stderr or completed.stdout).strip().splitlines()
        raise EnvironmentProblem(
            f"ncu could not read its report {report} (exit {completed.returncode}): {shown_output(said[-1] if said else '')}"
        )
    return completed.stdout


def planned_case(name: str, case: CaseSpec, build: KernelBuild, cubin_path: Path) -> PlannedCase:
    return PlannedCase(
        name=name,
        cubin=str(cubin_path),
        symbol=build.symbol,
        grid=case.grid,
        block=case.block,
        shared_bytes=case.shared_bytes,
        args=[arg.model_dump(exclude_none=True) for arg in case.args],
        repeat=case.repeat,
    )


# --- running -----------------------------------------------------------------------------------------------

# What is read of the files an ncu process leaves: far more than any real run writes.
MAX_LOG_BYTES = 64 * 1024 * 1024
MAX_STATUS_BYTES = 16 * 1024 * 1024
MAX_OUTPUT_BYTES = 4 * 1024 * 1024  # of the runner's output, its end: where the errors are
# How often a running process is looked at.
_POLL_S = 0.2


@dataclass(frozen=True)
class ProfileRun:
    """What one ncu process left behind."""

    command: list[str]
    returncode: int
    report: str  # ncu's log: messages and the CSV
    output: str  # the runner's own stdout and stderr
    status: list[CaseStatus]  # the runner's outcome per case
    stopped: str | None = None  # why the process was stopped after the runner's last case, if it was


def run_ncu(
    work_dir: Path,
    cases: Sequence[PlannedCase],
    metrics: Iterable[str],
    options: NcuOptions,
    device: int | None = None,
    keep_report: bool = False,
    sections: Sequence[str] = (),
) -> ProfileRun:
    """Profile the cases in one ncu process on one GPU (device: its index; None: CUDA's default).
    With keep_report, ncu also saves its report as REPORT_FILE in work_dir; with sections, it collects
    them instead of metrics (see ncu_command).

    The process is stopped when it makes no progress for the case timeout: ncu not starting the
    runner, a case that never ends, ncu not ending after the runner's last case. The cases it kept
    from running get an error saying which. ncu and the runner get a process group of their own,
    killed whole on a stop, on Ctrl-C and after ncu ends, so that no process outlives the run or
    writes into work_dir after it.
    """
    work_dir.mkdir(parents=True, exist_ok=True)
    plan_file = work_dir / "plan.json"
    status_file = work_dir / "status.json"
    log_file = work_dir / "ncu.log"
    _clear_outcomes(work_dir)
    Plan(device=0, status_path=str(status_file), cases=list(cases)).write(plan_file)
    report_file = work_dir / REPORT_FILE.removesuffix(".ncu-rep") if keep_report else None
    symbols = [c.symbol for c in cases]
    command = ncu_command(options, metrics, symbols, log_file, plan_file, report_file, sections)
    names = [c.name for c in cases]
    try:
        process = _start(command, work_dir / "output.txt", device)
    except FileNotFoundError:
        raise EnvironmentProblem(
            f"ncu not found at {options.executable!r}: install Nsight Compute or pass --ncu"
        ) from None
    except OSError as error:
        raise EnvironmentProblem(f"ncu could not be started ({options.executable!r}): {error}") from None
    watched = _wait(process, work_dir / PROGRESS_FILE, names, options.case_timeout_s, options)
    report = _read_log(log_file)
    output = _read_end(work_dir / "output.txt", MAX_OUTPUT_BYTES)
    status = _read_status(status_file, names)
    if watched.stalled:
        status, stopped = _after_stall(status, watched.last, names, options.case_timeout_s)
        return ProfileRun(command, process.returncode, report, output, status, stopped)
    last = watched.last
    if last is not None and last.running and last.case not in {s.case for s in status}:
        # The process ended in the middle of a case (ncu ends an application whose kernel faults).
        status.append(_lost(str(last.case), _ending(report + "\n" + output, process.returncode), names))
    return ProfileRun(command, process.returncode, report, output, status)


def name_the_fault(
    work_dir: Path, case: PlannedCase, timeout_s: float, device: int | None = None
) -> str | None:
    """Run one case again without the profiler, to learn the CUDA error its kernel raises: under ncu
    a fault only ends the application ("LaunchFailed"). None where the run tells nothing (it was
    stopped, or left no readable status)."""
    work_dir.mkdir(parents=True, exist_ok=True)
    status_file = work_dir / "status.json"
    plan_file = work_dir / "plan.json"
    _clear_outcomes(work_dir)
    Plan(device=0, status_path=str(status_file), cases=[case]).write(plan_file)
    runner = [sys.executable, "-m", "ncuverify.runner", str(plan_file)]
    try:
        process = _start(runner, work_dir / "output.txt", device)
    except OSError:
        return None
    if _wait(process, work_dir / PROGRESS_FILE, [case.name], timeout_s).stalled:
        return None
    try:
        status = _read_status(status_file, [case.name])
    except EnvironmentProblem:
        return None
    return status[0].error if status and not status[0].ok else None


def _clear_outcomes(work_dir: Path) -> None:
    """Remove what an earlier run in this folder left of the runner's and ncu's outcome (the fault
    re-runs share one; a kept profile's folder may be used again), so that none of it is taken for
    this run's."""
    for name in ("status.json", PROGRESS_FILE, "ncu.log", REPORT_FILE):
        (work_dir / name).unlink(missing_ok=True)


def _lost(case: str, error: str, names: list[str]) -> CaseStatus:
    """A case that ended its process: the cases after it did not run there."""
    return CaseStatus(case, False, error, context_lost=True, not_run=tuple(names[names.index(case) + 1 :]))


def _after_stall(
    status: list[CaseStatus], last: Progress | None, names: list[str], timeout_s: float
) -> tuple[list[CaseStatus], str | None]:
    """The status of a process stopped for making no progress, from what the runner said last; and,
    where that was the end of its cases, why ncu was stopped after them."""
    reported = {s.case for s in status}
    if last is not None and last.done:
        return status, f"ncu did not end within {timeout_s:g} s after the runner's last case; stopped"
    if last is not None and last.running and last.case not in reported:
        error = f"did not finish within {timeout_s:g} s under the profiler; stopped"
        return [*status, _lost(str(last.case), error, names)], None
    if last is None:
        reason = f"ncu did not start the runner within {timeout_s:g} s; stopped"
    elif last.case is None:
        reason = f"the runner did not start its first case within {timeout_s:g} s (is CUDA stuck?); stopped"
    else:
        reason = f"ncu made no progress within {timeout_s:g} s after case {last.case} ended; stopped"
    return [*status, *(CaseStatus(name, False, reason) for name in names if name not in reported)], None


def _ending(text: str, returncode: int) -> str:
    """Why a process ended mid-case: the CUDA error it names, else ncu's own error lines."""
    cuda_errors = re.findall(r"CUDA_ERROR_[A-Z_]+|cudaError\w+", text)
    errors = [line.split("==ERROR==", 1)[1].strip() for line in text.splitlines() if "==ERROR==" in line]
    said = ", ".join(dict.fromkeys(cuda_errors)) or "; ".join(dict.fromkeys(errors)) or "no message"
    return f"the process ended while this case ran (exit {returncode}): {shown_output(said)}"


def _start(command: list[str], output_file: Path, device: int | None = None) -> subprocess.Popen[bytes]:
    """Start ncu or the runner in a process group of its own, its output in output_file, with this
    package importable, the C locale (ncu's number format) and, given a device, only that GPU visible
    (the runner then uses device 0, which is it)."""
    environment = {
        **os.environ,
        "LC_ALL": "C",
        "PYTHONPATH": _package_root() + os.pathsep + os.environ.get("PYTHONPATH", ""),
    }
    if device is not None:
        environment["CUDA_VISIBLE_DEVICES"] = _visible_device(device)
    with output_file.open("wb") as output:
        return start_group(command, output, subprocess.STDOUT, environment)


@dataclass(frozen=True)
class _Watched:
    """How a process ended: stopped for making no progress, or on its own; what the runner said last."""

    stalled: bool
    last: Progress | None


def _wait(
    process: subprocess.Popen[bytes],
    progress_file: Path,
    names: Sequence[str],
    timeout_s: float,
    options: NcuOptions | None = None,
) -> _Watched:
    """Wait for the process, telling options.on_case of each case as it starts; stop its whole group
    once the runner's progress file has not changed for timeout_s (before the first case, during one,
    between two, or after the last), or when options.cancelled says so (KeyboardInterrupt)."""
    on_case = options.on_case if options is not None else None
    cancelled = options.cancelled if options is not None else None
    seen, told = _progress_text(progress_file), None
    changed = time.monotonic()
    try:
        while process.poll() is None:
            time.sleep(_POLL_S)
            if cancelled is not None and cancelled():
                raise KeyboardInterrupt
            text = _progress_text(progress_file)
            if text != seen:
                seen, changed = text, time.monotonic()
            progress = _progress(seen, names)
            if on_case is not None and progress is not None and progress.running and progress.case != told:
                told = progress.case
                on_case(str(told))
            if time.monotonic() - changed > timeout_s:
                return _Watched(True, progress)
    finally:  # Ctrl-C included: nothing of the group may outlive the run
        kill_group(process)
    return _Watched(False, _progress(_progress_text(progress_file), names))


def _progress_text(path: Path) -> str | None:
    try:
        with path.open("rb") as file:
            return file.read(64 * 1024).decode(errors="replace")
    except OSError:
        return None


def _progress(text: str | None, names: Sequence[str]) -> Progress | None:
    """The runner's progress; None where there is none, or none about the plan's cases."""
    progress = Progress.from_json(text) if text is not None else None
    if progress is None or (progress.case is not None and progress.case not in names):
        return None
    return progress


def _read_log(path: Path) -> str:
    """ncu's log: its messages and CSV ("" if it wrote none)."""
    if not path.is_file():
        return ""
    if path.stat().st_size > MAX_LOG_BYTES:
        raise EnvironmentProblem(
            f"ncu's CSV could not be read (its log holds more than {MAX_LOG_BYTES} bytes)"
        )
    return path.read_bytes().decode(errors="replace")


def _read_end(path: Path, limit: int) -> str:
    """The last limit bytes of a file, as text; "" if there is none."""
    try:
        with path.open("rb") as file:
            file.seek(max(0, file.seek(0, os.SEEK_END) - limit))
            return file.read(limit).decode(errors="replace")
    except OSError:
        return ""


def _read_status(path: Path, names: Sequence[str]) -> list[CaseStatus]:
    """The runner's status ([] if it wrote none); EnvironmentProblem if it is not the runner's."""
    if not path.is_file():
        return []
    try:
        if path.stat().st_size > MAX_STATUS_BYTES:
            raise StatusError(f"larger than {MAX_STATUS_BYTES} bytes")
        status = read_statuses(path.read_bytes().decode(errors="replace"))
        strangers = [s.case for s in status if s.case not in names]
        if strangers:
            raise StatusError(f"case {_shown(strangers[0])} is not in its plan")
    except (OSError, StatusError) as error:
        raise EnvironmentProblem(f"the runner's status could not be read ({error})") from None
    return status


def _visible_device(index: int) -> str:
    """The CUDA_VISIBLE_DEVICES value for the index-th GPU of those this process sees: CUDA sees the
    listed devices up to the first entry that names none (an index, or a GPU- or MIG- UUID)."""
    listed = os.environ.get("CUDA_VISIBLE_DEVICES")
    if listed is None:
        return str(index)
    visible = []
    for entry in (part.strip() for part in listed.split(",")):
        if not (entry.isascii() and (entry.isdigit() or entry.startswith(("GPU-", "MIG-")))):
            break
        visible.append(entry)
    if index >= len(visible):
        raise EnvironmentProblem(
            f"no GPU {index} among those CUDA_VISIBLE_DEVICES makes visible ({shown_output(listed)})"
        )
    return visible[index]


def _package_root() -> str:
    return str(Path(__file__).resolve().parent.parent)


def _shown(name: str, limit: int = 80) -> str:
    """A name from ncu's or the runner's output, quoted for a message: escapes made visible, cut short."""
    return repr(name if len(name) <= limit else name[: limit - 3] + "...")


def shown_output(text: str, limit: int = 300) -> str:
    """Text from ncu's or the runner's output, made safe to show and cut to a line's length."""
    shown = one_line(text)
    return shown if len(shown) <= limit else shown[: limit - 3] + "..."


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


def diagnose(run: ProfileRun) -> None:
    """Raise EnvironmentProblem where ncu's output says this machine cannot measure, and InputError
    where it says the claims asked for something it does not know."""
    text = run.report + "\n" + run.output
    unknown = re.findall(r"Failed to find metric (\S+)", text)
    if unknown:
        names = ", ".join(shown_output(name, 120) for name in sorted(set(unknown))[:10])
        raise InputError(f"ncu knows no metric {names} on this GPU")
    if "No kernels were profiled" in text and any(s.ok for s in run.status):
        raise EnvironmentProblem(
            "ncu profiled no kernel although the runner launched its cases (No kernels were profiled): "
            "is the GPU supported by this ncu, or another profiler attached?"
        )
    for needle, message in _ENVIRONMENT_PROBLEMS:
        if needle in text:
            raise EnvironmentProblem(message)
    # Once the runner has reported on its cases, ncu's own errors belong to those cases (a kernel
    # that faulted under the profiler), not to the machine.
    if "==ERROR==" in text and not _has_csv(run.report) and not run.status:
        errors = [line for line in text.splitlines() if "==ERROR==" in line]
        raise EnvironmentProblem(f"ncu failed: {shown_output(errors[0].split('==ERROR==', 1)[1].strip())}")


def _has_csv(text: str) -> bool:
    return any(line.startswith('"ID"') for line in text.splitlines())


# --- parsing -----------------------------------------------------------------------------------------------

TIDY_COLUMNS = ["launch", "kernel", "metric", "value", "unit"]
# Far more than ncu prints (about 300 columns a launch on the raw page, device attributes included):
# bounds on what a broken or hostile report can make the parser hold.
MAX_CSV_COLUMNS = 10_000
MAX_CSV_CELLS = 4_000_000
_DETAILS_COLUMNS = ("Metric Name", "Metric Unit", "Metric Value")


def parse_csv(text: str) -> pd.DataFrame:
    """ncu CSV (raw or details page) -> one row per launch and metric: launch, kernel, metric, value, unit.

    Whatever the text, the result is a table or EnvironmentProblem("ncu's CSV could not be read (...)").
    """
    lines = text.splitlines()
    header_at = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), None)
    if header_at is None:
        return pd.DataFrame(columns=TIDY_COLUMNS)
    # Only CSV lines from the header on; ncu may interleave its own ==PROF== lines.
    body = [line for line in lines[header_at:] if line.startswith('"')]
    try:
        header = next(csv.reader(body[:1], strict=True))
        _check_size(header, len(body) - 1)
        records = list(csv.reader(body[1:], strict=True))
    except csv.Error as error:
        raise _unreadable(str(error)) from None
    _check_table(header, records)
    if "Metric Name" in header:
        return _parse_details(header, records)
    return _parse_raw(header, records)


def _unreadable(reason: str) -> EnvironmentProblem:
    return EnvironmentProblem(f"ncu's CSV could not be read ({reason})")


def _check_size(header: list[str], rows: int) -> None:
    """Refuse, before reading them, more columns or values than any report of ncu's holds."""
    if len(header) > MAX_CSV_COLUMNS:
        raise _unreadable(f"{len(header)} columns, more than {MAX_CSV_COLUMNS}")
    if len(header) * rows > MAX_CSV_CELLS:
        raise _unreadable(f"{rows} rows of {len(header)} columns, more than {MAX_CSV_CELLS} values")


def _check_table(header: list[str], records: list[list[str]]) -> None:
    seen: set[str] = set()
    for name in header:
        if name in seen:
            raise _unreadable(f"the column {_shown(name)} appears twice")
        seen.add(name)
    missing = [name for name in ("ID", "Kernel Name") if name not in seen]
    if missing:
        raise _unreadable(f"no {missing[0]!r} column")
    for number, record in enumerate(records, start=1):
        if len(record) != len(header):
            raise _unreadable(f"row {number} has {len(record)} fields, the header {len(header)}")


def _parse_raw(header: list[str], records: list[list[str]]) -> pd.DataFrame:
    """The raw page: one row per launch, one column per metric, the units in a row of their own."""
    id_at, kernel_at = header.index("ID"), header.index("Kernel Name")
    units = records[0] if records and records[0][id_at] == "" else None
    launches = records[1:] if units is not None else records
    ids = [_launch_id(record[id_at]) for record in launches]
    metric_columns = [i for i, name in enumerate(header) if name not in _NCU_COLUMNS]
    # Metric by metric, each over every launch (the order the table has always had).
    return pd.DataFrame(
        {
            "launch": np.array([launch for _ in metric_columns for launch in ids], dtype=np.int64),
            "kernel": [record[kernel_at] for _ in metric_columns for record in launches],
            "metric": [header[i] for i in metric_columns for _ in launches],
            "value": np.array(
                [parse_number(record[i]) for i in metric_columns for record in launches], dtype=np.float64
            ),
            "unit": [units[i] if units is not None else "" for i in metric_columns for _ in launches],
        },
        columns=TIDY_COLUMNS,
    )


def _parse_details(header: list[str], records: list[list[str]]) -> pd.DataFrame:
    """The details page: one row per launch and metric."""
    missing = [name for name in _DETAILS_COLUMNS if name not in header]
    if missing:
        raise _unreadable(f"no {missing[0]!r} column")
    at = {name: header.index(name) for name in ("ID", "Kernel Name", *_DETAILS_COLUMNS)}
    return pd.DataFrame(
        {
            "launch": np.array([_launch_id(r[at["ID"]]) for r in records], dtype=np.int64),
            "kernel": [r[at["Kernel Name"]] for r in records],
            "metric": [r[at["Metric Name"]] for r in records],
            "value": np.array([parse_number(r[at["Metric Value"]]) for r in records], dtype=np.float64),
            "unit": [r[at["Metric Unit"]] for r in records],
        },
        columns=TIDY_COLUMNS,
    )


def _launch_id(text: str) -> int:
    """A launch's ID: ncu numbers them 0, 1, 2, ..."""
    if not (text.isascii() and text.isdigit() and len(text) <= 9):
        raise _unreadable(f"the launch ID {_shown(text)} is not a number")
    return int(text)


# A number as ncu prints it in the C locale: digits in groups of three, a decimal point, an exponent.
_NUMBER = re.compile(r"-?(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]{1,3})?")
_MAX_NUMBER_TEXT = 64


def parse_number(text: str) -> float:
    """A value as ncu prints it, thousands separators included. What is no finite number is NaN: n/a,
    empty, the "nan" of a launch that faulted, text values (a device's name), and also text that only
    Python would read as one (inf, 1_000, non-ASCII digits, 1e999)."""
    cleaned = text.strip()
    if len(cleaned) > _MAX_NUMBER_TEXT or not _NUMBER.fullmatch(cleaned):
        return math.nan
    value = float(cleaned.replace(",", ""))
    return value if math.isfinite(value) else math.nan


def measurements(table: pd.DataFrame, status: Sequence[CaseStatus], symbols: dict[str, str]) -> Measurements:
    """Give each profiled launch its case: the cases that ran, in order, each as many times as it was
    launched; a case launched more than once gets the median of its launches.

    symbols maps case -> the mangled kernel name it launches. A launch is only ever given to a case
    of its own kernel: a row for a launch that failed is passed over, any other surprise is refused.
    Cases that ran but have no row (ncu stopped early) are listed as unmeasured.
    """
    expected = [(s.case, _symbol(s.case, symbols), s.launch_count) for s in status if s.ok]
    failed = {s.case: str(s.error) for s in status if not s.ok}
    failed_kernels = {symbols[case] for case in failed if case in symbols}
    case_of_launch: dict[int, str] = {}
    position, left = 0, expected[0][2] if expected else 0
    launches = table.drop_duplicates("launch").sort_values("launch")
    for launch, kernel in zip(launches["launch"], launches["kernel"], strict=True):
        if position < len(expected) and kernel == expected[position][1]:
            case_of_launch[launch] = expected[position][0]
            left -= 1
            if left == 0:
                position += 1
                left = expected[position][2] if position < len(expected) else 0
        elif kernel not in failed_kernels:  # the profiler's row for a launch that failed is passed over
            wanted = expected[position][1] if position < len(expected) else "no further launch"
            raise EnvironmentProblem(
                f"launch {launch} ran {shown_output(str(kernel), 200)}, expected {wanted}: is another profiler or kernel filter in the way?"
            )
    frame = table[table["launch"].isin(case_of_launch)]
    frame = frame.assign(case=frame["launch"].map(case_of_launch))
    medians = frame.groupby(["case", "kernel", "metric"], sort=False).agg(
        value=("value", "median"), unit=("unit", "first")
    )
    frame = pd.concat(
        [medians.reset_index()[MEASUREMENT_COLUMNS], _read_back(status, symbols)], ignore_index=True
    )
    unmeasured = tuple(dict.fromkeys(case for case, _, _ in expected[position:]))
    return Measurements(frame=frame, failed_cases=failed, unmeasured=unmeasured)


def _symbol(case: str, symbols: dict[str, str]) -> str:
    if case not in symbols:
        raise EnvironmentProblem(f"the runner reported case {_shown(case)}, whose kernel is not known")
    return symbols[case]


def _read_back(status: Sequence[CaseStatus], symbols: dict[str, str]) -> pd.DataFrame:
    """What the runner read back from named buffers, as rows like ncu's."""
    rows = [
        (s.case, symbols[s.case], metric, value, "")
        for s in status
        if s.ok
        for metric, value in (s.values or {}).items()
    ]
    return pd.DataFrame(rows, columns=MEASUREMENT_COLUMNS)


def is_ncu_metric(ref: MetricRef) -> bool:
    """Whether ncu measures this name (rather than the build, or the runner reading a buffer back)."""
    return not (is_static(ref) or ref.name.startswith(BUFFER_PREFIX))
