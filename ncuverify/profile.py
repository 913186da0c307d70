"""Stage 3: profile every case under Nsight Compute and turn its CSV into measurements.

An ncu process runs the runner (`python -m ncuverify.runner`), which launches each case of its plan
once; which cases share a process is `session`'s and `schedule`'s concern. ncu writes its report to a
log file of its own (`--log-file`), so nothing the runner prints can reach the parser. The parser accepts both CSV pages (raw: wide, with a units row; details: long) and
copes with the `==PROF==` preamble, thousands separators and `n/a`.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ncuverify.build import KernelBuild
from ncuverify.errors import EnvironmentProblem, InputError
from ncuverify.expression import SASS_PREFIX, MetricRef
from ncuverify.runner import PROGRESS_FILE, Plan, PlannedCase
from ncuverify.spec import BUFFER_PREFIX, CaseSpec
from ncuverify.static import STATIC_PREFIX, is_static

MEASUREMENT_COLUMNS = ["case", "kernel", "metric", "value", "unit"]

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


@dataclass(frozen=True)
class Measurements:
    """One tidy table of measured values: case, kernel, metric, value, unit; plus cases that failed."""

    frame: pd.DataFrame
    failed_cases: dict[str, str] = field(default_factory=dict)
    unmeasured: tuple[str, ...] = ()  # cases that ran but that ncu's report does not cover

    def value(self, case: str, metric: str) -> float:
        """The value of a metric for a case; KeyError with a reason if it is not there."""
        rows = self.frame[(self.frame["case"] == case) & (self.frame["metric"] == metric)]
        if not rows.empty and not pd.isna(rows["value"].iloc[0]):
            return float(rows["value"].iloc[0])
        if case in self.failed_cases:  # static facts of a case that did not launch are still known
            raise KeyError(f"case {case} did not run: {self.failed_cases[case]}")
        if case in self.unmeasured:
            raise KeyError(f"case {case} ran, but ncu's report ended before it")
        if not rows.empty:
            raise KeyError(f"ncu reported {metric} as n/a for case {case}")
        if not (self.frame["case"] == case).any():
            raise KeyError(f"case {case} was not measured")
        raise KeyError(f"no {_describe_metric(metric)} for case {case}")

    def of_prefix(self, prefix: str) -> Measurements:
        """The measurements of the cases named prefix + name, under their names without the prefix."""

        def strip(names: Iterable[str]) -> list[str]:
            return [name.removeprefix(prefix) for name in names if name.startswith(prefix)]

        rows = self.frame[self.frame["case"].map(lambda case: str(case).startswith(prefix))]
        return Measurements(
            frame=rows.assign(case=strip(rows["case"])).reset_index(drop=True),
            failed_cases={
                k.removeprefix(prefix): v for k, v in self.failed_cases.items() if k.startswith(prefix)
            },
            unmeasured=tuple(strip(self.unmeasured)),
        )

    def combined(self, other: Measurements) -> Measurements:
        frames = pd.concat([self.frame, other.frame], ignore_index=True)
        profiled = frames[~frames["metric"].map(lambda m: m.startswith((SASS_PREFIX, STATIC_PREFIX)))]
        measured = set(profiled["case"])
        return Measurements(
            frame=frames,
            failed_cases={**self.failed_cases, **other.failed_cases},
            unmeasured=tuple(c for c in (*self.unmeasured, *other.unmeasured) if c not in measured),
        )

    @classmethod
    def empty(cls) -> Measurements:
        return cls(frame=pd.DataFrame(columns=MEASUREMENT_COLUMNS))


def _describe_metric(metric: str) -> str:
    if metric.startswith(SASS_PREFIX):
        return f"SASS count of {metric.removeprefix(SASS_PREFIX)!r} (no disassembler: install nvdisasm)"
    if metric.startswith(BUFFER_PREFIX):
        return f"{metric} (the runner read no such buffer back)"
    if metric.startswith("static__"):
        return f"static fact {metric} (the build did not report it)"
    return f"value of {metric} from ncu"


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


def import_report(options: NcuOptions, report: Path, page: str) -> str:
    """One page of a saved report as CSV (`ncu --import`): needs ncu, not a GPU."""
    command = [options.executable, "--import", str(report), "--csv", *_IMPORT_PAGES[page]]
    try:
        completed = subprocess.run(
            command, capture_output=True, text=True, timeout=600, env={**os.environ, "LC_ALL": "C"}
        )
    except (OSError, subprocess.SubprocessError) as error:
        raise EnvironmentProblem(f"ncu could not read its report {report}: {error}") from None
    if completed.returncode != 0:
        said = (completed.stderr or completed.stdout).strip().splitlines()
        raise EnvironmentProblem(
            f"ncu could not read its report {report} (exit {completed.returncode}): {said[-1] if said else ''}"
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


@dataclass(frozen=True)
class ProfileRun:
    """What one ncu process left behind."""

    command: list[str]
    returncode: int
    report: str  # ncu's log: messages and the CSV
    output: str  # the runner's own stdout and stderr
    status: list[dict[str, object]]  # the runner's outcome per case


def run_ncu(
    work_dir: Path,
    cases: Sequence[PlannedCase],
    metrics: Iterable[str],
    options: NcuOptions,
    device: int | None = None,
    keep_report: bool = False,
    sections: Sequence[str] = (),
) -> ProfileRun:
    """Profile the cases in one ncu process on one GPU (device: its index; None: CUDA's default);
    stop it if a case runs longer than the case timeout. With keep_report, ncu also saves its report
    as REPORT_FILE in work_dir; with sections, it collects them instead of metrics (see ncu_command).

    ncu and the runner get a process group of their own, so that a stop (or Ctrl-C here) ends both
    and leaves no process behind.
    """
    work_dir.mkdir(parents=True, exist_ok=True)
    plan_file = work_dir / "plan.json"
    status_file = work_dir / "status.json"
    log_file = work_dir / "ncu.log"
    progress_file = work_dir / PROGRESS_FILE
    Plan(device=0, status_path=str(status_file), cases=list(cases)).write(plan_file)
    report_file = work_dir / REPORT_FILE.removesuffix(".ncu-rep") if keep_report else None
    symbols = [c.symbol for c in cases]
    command = ncu_command(options, metrics, symbols, log_file, plan_file, report_file, sections)
    output_file = work_dir / "output.txt"
    try:
        process = _start(command, output_file, device)
    except FileNotFoundError:
        raise EnvironmentProblem(
            f"ncu not found at {options.executable!r}: install Nsight Compute or pass --ncu"
        ) from None
    hung = _wait(process, progress_file, options.case_timeout_s, options.on_case, options.cancelled)
    report = log_file.read_text(errors="replace") if log_file.exists() else ""
    status = json.loads(status_file.read_text()) if status_file.exists() else []
    output = output_file.read_text(errors="replace")
    running = _running_case(progress_file)
    names = [c.name for c in cases]
    if hung is not None:
        error = f"did not finish within {options.case_timeout_s:g} s under the profiler; stopped"
        status.append(_lost(hung, error, names))
    elif running is not None and running[0] not in {s["case"] for s in status}:
        # The process ended in the middle of a case (ncu ends an application whose kernel faults).
        status.append(_lost(running[0], _ending(report + "\n" + output, process.returncode), names))
    return ProfileRun(command, process.returncode, report, output, status)


def name_the_fault(
    work_dir: Path, case: PlannedCase, timeout_s: float, device: int | None = None
) -> str | None:
    """Run one case again without the profiler, to learn the CUDA error its kernel raises: under ncu
    a fault only ends the application ("LaunchFailed")."""
    work_dir.mkdir(parents=True, exist_ok=True)
    status_file = work_dir / "status.json"
    plan_file = work_dir / "plan.json"
    Plan(device=0, status_path=str(status_file), cases=[case]).write(plan_file)
    runner = [sys.executable, "-m", "ncuverify.runner", str(plan_file)]
    process = _start(runner, work_dir / "output.txt", device)
    if _wait(process, work_dir / PROGRESS_FILE, timeout_s) is not None or not status_file.exists():
        return None
    status = json.loads(status_file.read_text())
    return str(status[0]["error"]) if status and not status[0]["ok"] else None


def _lost(case: str, error: str, names: list[str]) -> dict[str, object]:
    """A case that ended its process: the cases after it did not run there."""
    return {
        "case": case,
        "ok": False,
        "error": error,
        "context_lost": True,
        "not_run": names[names.index(case) + 1 :],
    }


def _ending(text: str, returncode: int) -> str:
    """Why a process ended mid-case: the CUDA error it names, else ncu's own error lines."""
    cuda_errors = re.findall(r"CUDA_ERROR_[A-Z_]+|cudaError\w+", text)
    errors = [line.split("==ERROR==", 1)[1].strip() for line in text.splitlines() if "==ERROR==" in line]
    said = ", ".join(dict.fromkeys(cuda_errors)) or "; ".join(errors) or "no message"
    return f"the process ended while this case ran (exit {returncode}): {said}"


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
    with output_file.open("w") as output:
        return subprocess.Popen(
            command,
            stdout=output,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=environment,
            start_new_session=True,
        )


def _wait(
    process: subprocess.Popen[bytes],
    progress_file: Path,
    case_timeout_s: float,
    on_case: Callable[[str], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> str | None:
    """Wait for the process; stop its whole group if one case overruns. The overrunning case, if any."""
    told = None
    try:
        while process.poll() is None:
            time.sleep(0.2)
            if cancelled is not None and cancelled():
                raise KeyboardInterrupt
            running = _running_case(progress_file)
            if on_case is not None and running is not None and running[0] != told:
                told = running[0]
                on_case(told)
            if running is not None and time.time() - running[1] > case_timeout_s:
                _stop(process)
                return running[0]
    except BaseException:  # Ctrl-C included: nothing may outlive the run
        _stop(process)
        raise
    return None


def _visible_device(index: int) -> str:
    """The CUDA_VISIBLE_DEVICES value for the index-th GPU of those this process sees."""
    visible = [d for d in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if d.strip()]
    return visible[index] if index < len(visible) else str(index)


def _running_case(progress_file: Path) -> tuple[str, float] | None:
    try:
        progress = json.loads(progress_file.read_text())
        return str(progress["case"]), float(progress["started"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _stop(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def _package_root() -> str:
    return str(Path(__file__).resolve().parent.parent)


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
        raise InputError(f"ncu knows no metric {', '.join(sorted(set(unknown)))} on this GPU")
    if "No kernels were profiled" in text and any(s.get("ok") for s in run.status):
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
        raise EnvironmentProblem(f"ncu failed: {errors[0].split('==ERROR==', 1)[1].strip()}")


def _has_csv(text: str) -> bool:
    return any(line.startswith('"ID"') for line in text.splitlines())


# --- parsing -----------------------------------------------------------------------------------------------


def parse_csv(text: str) -> pd.DataFrame:
    """ncu CSV (raw or details page) -> one row per launch and metric: launch, kernel, metric, value, unit."""
    lines = text.splitlines()
    header_at = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), None)
    if header_at is None:
        return pd.DataFrame(columns=["launch", "kernel", "metric", "value", "unit"])
    # Only CSV lines from the header on; ncu may interleave its own ==PROF== lines.
    body = [line for line in lines[header_at:] if line.startswith('"')]
    try:
        table = pd.read_csv(
            io.StringIO("\n".join(body)), dtype=str, keep_default_na=False, quoting=csv.QUOTE_ALL
        )
        if "Metric Name" in table.columns:
            return _parse_details(table)
        return _parse_raw(table)
    except (ValueError, KeyError, pd.errors.ParserError) as error:  # a truncated or garbled report
        raise EnvironmentProblem(f"ncu's CSV could not be read ({type(error).__name__}: {error})") from None


def _parse_raw(table: pd.DataFrame) -> pd.DataFrame:
    units = table.iloc[0] if not table.empty and table["ID"].iloc[0] == "" else None
    launches = table.iloc[1:] if units is not None else table
    metric_columns = [c for c in table.columns if c not in _NCU_COLUMNS]
    tidy = launches.melt(
        id_vars=["ID", "Kernel Name"], value_vars=metric_columns, var_name="metric", value_name="text"
    )
    unit_of = units.to_dict() if units is not None else {}
    tidy["unit"] = [unit_of.get(metric, "") for metric in tidy["metric"]]
    return _finish(tidy)


def _parse_details(table: pd.DataFrame) -> pd.DataFrame:
    tidy = table.rename(columns={"Metric Name": "metric", "Metric Unit": "unit", "Metric Value": "text"})
    return _finish(tidy[["ID", "Kernel Name", "metric", "unit", "text"]])


def _finish(tidy: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "launch": tidy["ID"].astype(int).to_numpy(),
            "kernel": tidy["Kernel Name"].to_numpy(),
            "metric": tidy["metric"].to_numpy(),
            "value": [parse_number(t) for t in tidy["text"]],
            "unit": tidy["unit"].to_numpy(),
        }
    )


def parse_number(text: str) -> float:
    """A value as ncu prints it: thousands separators, `n/a`, empty -> NaN; text values -> NaN."""
    cleaned = text.strip().replace(",", "")
    if cleaned in ("", "n/a", "N/A"):
        return float("nan")
    try:
        return float(cleaned)
    except ValueError:
        return float("nan")


def measurements(
    table: pd.DataFrame, status: Sequence[dict[str, object]], symbols: dict[str, str]
) -> Measurements:
    """Give each profiled launch its case: the cases that ran, in order, each as many times as it was
    launched; a case launched more than once gets the median of its launches.

    symbols maps case -> the mangled kernel name it launches. A launch is only ever given to a case
    of its own kernel: a row for a launch that failed is passed over, any other surprise is refused.
    Cases that ran but have no row (ncu stopped early) are listed as unmeasured.
    """
    expected = [
        (str(s["case"]), symbols[str(s["case"])])
        for s in status
        if s["ok"]
        for _ in range(int(s.get("launches", 1)))  # type: ignore[call-overload]
    ]
    failed = {str(s["case"]): str(s["error"]) for s in status if not s["ok"]}
    failed_kernels = {symbols[case] for case in failed if case in symbols}
    case_of_launch: dict[int, str] = {}
    position = 0
    launches = table.drop_duplicates("launch").sort_values("launch")
    for launch, kernel in zip(launches["launch"], launches["kernel"], strict=True):
        if position < len(expected) and kernel == expected[position][1]:
            case_of_launch[launch] = expected[position][0]
            position += 1
        elif kernel not in failed_kernels:  # the profiler's row for a launch that failed is passed over
            wanted = expected[position][1] if position < len(expected) else "no further launch"
            raise EnvironmentProblem(
                f"launch {launch} ran {kernel}, expected {wanted}: is another profiler or kernel filter in the way?"
            )
    frame = table[table["launch"].isin(case_of_launch)]
    frame = frame.assign(case=frame["launch"].map(case_of_launch))
    medians = frame.groupby(["case", "kernel", "metric"], sort=False).agg(
        value=("value", "median"), unit=("unit", "first")
    )
    frame = pd.concat(
        [medians.reset_index()[MEASUREMENT_COLUMNS], _read_back(status, symbols)], ignore_index=True
    )
    unmeasured = tuple(dict.fromkeys(case for case, _ in expected[position:]))
    return Measurements(frame=frame, failed_cases=failed, unmeasured=unmeasured)


def _read_back(status: Sequence[dict[str, object]], symbols: dict[str, str]) -> pd.DataFrame:
    """What the runner read back from named buffers, as rows like ncu's."""
    rows = [
        (s["case"], symbols[str(s["case"])], metric, float(value), "")
        for s in status
        if s["ok"]
        for metric, value in dict(s.get("values") or {}).items()  # type: ignore[call-overload]
    ]
    return pd.DataFrame(rows, columns=MEASUREMENT_COLUMNS)


def is_ncu_metric(ref: MetricRef) -> bool:
    """Whether ncu measures this name (rather than the build, or the runner reading a buffer back)."""
    return not (is_static(ref) or ref.name.startswith(BUFFER_PREFIX))
