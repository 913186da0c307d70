"""Stage 3: profile every case under Nsight Compute and turn its CSV into measurements.

One ncu process per expectation file runs the runner (`python -m ncuverify.runner`), which launches each
case once. ncu writes its report to a log file of its own (`--log-file`), so nothing the runner prints can
reach the parser. The parser accepts both CSV pages (raw: wide, with a units row; details: long) and
copes with the `==PROF==` preamble, thousands separators and `n/a`.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ncuverify.build import KernelBuild
from ncuverify.errors import EnvironmentProblem
from ncuverify.expression import SASS_PREFIX, MetricRef
from ncuverify.runner import Plan, PlannedCase
from ncuverify.spec import BUFFER_PREFIX, BufferArg, CaseSpec
from ncuverify.static import is_static

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
    timeout_s: float = 1800.0


@dataclass(frozen=True)
class Measurements:
    """One tidy table of measured values: case, kernel, metric, value, unit; plus cases that failed."""

    frame: pd.DataFrame
    failed_cases: dict[str, str] = field(default_factory=dict)

    def value(self, case: str, metric: str) -> float:
        """The value of a metric for a case; KeyError with a reason if it is not there."""
        rows = self.frame[(self.frame["case"] == case) & (self.frame["metric"] == metric)]
        if not rows.empty and not pd.isna(rows["value"].iloc[0]):
            return float(rows["value"].iloc[0])
        if case in self.failed_cases:  # static facts of a case that did not launch are still known
            raise KeyError(f"case {case} did not run: {self.failed_cases[case]}")
        if not rows.empty:
            raise KeyError(f"ncu reported {metric} as n/a for case {case}")
        if not (self.frame["case"] == case).any():
            raise KeyError(f"case {case} was not measured")
        raise KeyError(f"no {_describe_metric(metric)} for case {case}")

    def combined(self, other: Measurements) -> Measurements:
        return Measurements(
            frame=pd.concat([self.frame, other.frame], ignore_index=True),
            failed_cases={**self.failed_cases, **other.failed_cases},
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
    options: NcuOptions, metrics: Iterable[str], symbols: Iterable[str], log_file: Path, plan_file: Path
) -> list[str]:
    """The ncu command line that profiles a plan: only the metrics and kernels the claims need."""
    kernel_filter = "|".join(sorted({re.escape(s) for s in symbols}))
    return [
        options.executable,
        "--csv",
        "--page",
        "raw",
        "--print-units",
        "base",
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
        "--metrics",
        # ncu needs at least one metric, also when the claims read only buffers the kernel wrote.
        ",".join(sorted(set(metrics))) or "gpu__time_duration.sum",
        "--log-file",
        str(log_file),
        sys.executable,
        "-m",
        "ncuverify.runner",
        str(plan_file),
    ]


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


def buffer_bytes(case: CaseSpec) -> int:
    """Device memory a case allocates, for messages about size."""
    return sum((a.count + a.offset) * _itemsize(a.buffer) for a in case.args if isinstance(a, BufferArg))


def _itemsize(dtype: str) -> int:
    return int(re.sub(r"\D", "", dtype)) // 8


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
    work_dir: Path, cases: Sequence[PlannedCase], metrics: Iterable[str], options: NcuOptions
) -> ProfileRun:
    """Profile the cases in one ncu process."""
    plan_file = work_dir / "plan.json"
    status_file = work_dir / "status.json"
    log_file = work_dir / "ncu.log"
    Plan(device=0, status_path=str(status_file), cases=list(cases)).write(plan_file)
    command = ncu_command(options, metrics, [c.symbol for c in cases], log_file, plan_file)
    environment = {
        **os.environ,
        "LC_ALL": "C",
        "PYTHONPATH": _package_root() + os.pathsep + os.environ.get("PYTHONPATH", ""),
    }
    try:
        completed = subprocess.run(
            command,
            capture_output=True,
            text=True,
            env=environment,
            timeout=options.timeout_s,
            stdin=subprocess.DEVNULL,
        )
    except FileNotFoundError:
        raise EnvironmentProblem(
            f"ncu not found at {options.executable!r}: install Nsight Compute or pass --ncu"
        ) from None
    except subprocess.TimeoutExpired:
        raise EnvironmentProblem(f"ncu did not finish within {options.timeout_s:.0f} s") from None
    report = log_file.read_text(errors="replace") if log_file.exists() else ""
    status = json.loads(status_file.read_text()) if status_file.exists() else []
    return ProfileRun(command, completed.returncode, report, completed.stdout + completed.stderr, status)


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
    """Raise EnvironmentProblem where ncu's output says this machine cannot measure."""
    text = run.report + "\n" + run.output
    for needle, message in _ENVIRONMENT_PROBLEMS:
        if needle in text:
            raise EnvironmentProblem(message)
    if "==ERROR==" in text and not _has_csv(run.report):
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
    table = pd.read_csv(io.StringIO("\n".join(body)), dtype=str, keep_default_na=False, quoting=csv.QUOTE_ALL)
    if "Metric Name" in table.columns:
        return _parse_details(table)
    return _parse_raw(table)


def _parse_raw(table: pd.DataFrame) -> pd.DataFrame:
    units = table.iloc[0] if not table.empty and table["ID"].iloc[0] == "" else None
    launches = table.iloc[1:] if units is not None else table
    metric_columns = [c for c in table.columns if c not in _NCU_COLUMNS]
    tidy = launches.melt(
        id_vars=["ID", "Kernel Name"], value_vars=metric_columns, var_name="metric", value_name="text"
    )
    tidy["unit"] = tidy["metric"].map(units.to_dict() if units is not None else {}).fillna("")
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
    """Give each profiled launch its case: launches are the cases that ran, in order, each as many times
    as it was launched; a case launched more than once gets the median of its launches.

    symbols maps case -> the mangled kernel name it launches; a launch whose kernel is not the one
    expected means the order is off, and is refused rather than mislabelled.
    """
    ran = [str(s["case"]) for s in status if s["ok"] for _ in range(int(s.get("launches", 1)))]  # type: ignore[call-overload]
    failed = {str(s["case"]): str(s["error"]) for s in status if not s["ok"]}
    launch_ids = sorted(table["launch"].unique())
    if len(launch_ids) != len(ran):
        raise EnvironmentProblem(
            f"ncu profiled {len(launch_ids)} launches but the runner launched {len(ran)}; "
            "is another profiler or kernel filter in the way?"
        )
    case_of_launch = dict(zip(launch_ids, ran, strict=True))
    frame = table.assign(case=table["launch"].map(case_of_launch))
    mismatched = frame[frame["kernel"] != frame["case"].map(symbols)]
    if not mismatched.empty:
        row = mismatched.iloc[0]
        raise EnvironmentProblem(
            f"launch {row['launch']} ran {row['kernel']}, expected {symbols[row['case']]}"
        )
    medians = frame.groupby(["case", "kernel", "metric"], sort=False).agg(
        value=("value", "median"), unit=("unit", "first")
    )
    frame = pd.concat(
        [medians.reset_index()[MEASUREMENT_COLUMNS], _read_back(status, symbols)], ignore_index=True
    )
    return Measurements(frame=frame, failed_cases=failed)


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
