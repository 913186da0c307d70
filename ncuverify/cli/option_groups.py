"""The options of the commands in groups: each a frozen value made from the parsed parameters, which
refuses what cannot be meant (typer.BadParameter, exit 2) as it is made."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import typer

from ncuverify.baseline import snapshot as baselines
from ncuverify.baseline.snapshot import Baseline
from ncuverify.cli.ci_shard import MAX_SHARDS, ci_shard
from ncuverify.cli.paths import check_input_files, check_outputs, check_profile_folders
from ncuverify.environment import gpu_count
from ncuverify.profile import PROCESSES_PER_GPU, NcuOptions
from ncuverify.spec import Tolerance
from ncuverify.text import one_line

# --shard K/N (or auto/N) and --gpus: small numbers in ASCII digits (str.isdigit takes '²', which int()
# refuses).
_SHARD = re.compile(r"([0-9]{1,5})/([0-9]{1,5})")
_AUTO = re.compile(r"auto/([0-9]{1,5})")
_GPU_INDEX = re.compile(r"[0-9]{1,3}")


@dataclass(frozen=True)
class Profiles:
    """--save-profile, --ncu-report, --from-profile, --reuse: record a run's profile, replay one, or take
    the figures of unchanged cases from one."""

    save: Path | None
    keep_report: bool
    replay: Path | None
    reuse: Path | None = None

    def __post_init__(self) -> None:
        if self.save is not None and self.replay is not None:
            raise typer.BadParameter(
                "record a new profile or replay an old one, not both", param_hint="--save-profile"
            )
        if self.reuse is not None and self.replay is not None:
            raise typer.BadParameter(
                "reuses a recording in a run that profiles: replay one with --from-profile, or reuse it",
                param_hint="--reuse",
            )
        if self.reuse is not None and self.save is not None and self.reuse.resolve() == self.save.resolve():
            raise typer.BadParameter(
                "record the run in a folder other than the recording it reuses", param_hint="--save-profile"
            )
        if self.keep_report and self.save is None:
            raise typer.BadParameter(
                "keeps reports in the --save-profile folder: give one", param_hint="--ncu-report"
            )

    def check_folders(self) -> None:
        check_profile_folders(self.save, self.replay, self.reuse)


@dataclass(frozen=True)
class Profiler:
    """--ncu, --clock-control, --cache-control, --case-timeout, --processes-per-gpu: how ncu is run."""

    executable: str
    clock_control: str
    cache_control: str
    case_timeout_s: float
    processes_per_gpu: int = PROCESSES_PER_GPU

    def __post_init__(self) -> None:
        if self.clock_control not in ("none", "base"):
            raise typer.BadParameter("none or base", param_hint="--clock-control")
        if self.cache_control not in ("all", "none"):
            raise typer.BadParameter("all or none", param_hint="--cache-control")

    def ncu(self) -> NcuOptions:
        return NcuOptions(
            executable=self.executable,
            clock_control=self.clock_control,
            cache_control=self.cache_control,
            case_timeout_s=self.case_timeout_s,
            processes_per_gpu=self.processes_per_gpu,
        )


@dataclass(frozen=True)
class Outputs:
    """--json, --junit-xml, --markdown, --html, --sarif: the files a run's results are written to."""

    json: Path | None
    junit_xml: Path | None
    markdown: Path | None
    html: Path | None = None
    sarif: Path | None = None

    def by_option(self) -> dict[str, Path | None]:
        return {
            "--json": self.json,
            "--junit-xml": self.junit_xml,
            "--markdown": self.markdown,
            "--html": self.html,
            "--sarif": self.sarif,
        }

    def check(self, inputs: Sequence[Path]) -> None:
        check_outputs(self.by_option(), inputs)


@dataclass(frozen=True)
class Comparison:
    """A baseline that was read, and how much worse than it each measure named may get."""

    before: Baseline
    tolerances: dict[str, Tolerance]


@dataclass(frozen=True)
class BaselineChoice:
    """--baseline and --tolerance: what a run is compared with."""

    path: Path | None
    tolerance_texts: tuple[str, ...]

    def inputs(self) -> list[Path]:
        return [self.path] if self.path is not None else []

    def check_file(self) -> None:
        check_input_files([("--baseline", self.path)] if self.path is not None else [])

    def load(self) -> Comparison | None:
        """The tolerances parsed, then the baseline read; None without --baseline."""
        tolerances = tolerances_of(self.tolerance_texts)
        return Comparison(baselines.load(self.path), tolerances) if self.path is not None else None


def tolerances_of(texts: Sequence[str]) -> dict[str, Tolerance]:
    return dict(baselines.parse_tolerance(text) for text in texts)


def shard_of(text: str | None, environment: Mapping[str, str] | None = None) -> tuple[int, int] | None:
    """--shard K/N: the K-th of N shares, or None for the whole run; --shard auto (or auto/N): the share
    the parallel job's own variables name (environment: os.environ unless given; see ci_shard)."""
    if text is None:
        return None
    stripped = text.strip()
    if stripped == "auto" or (stripped.startswith("auto/") and _AUTO.fullmatch(stripped)):
        total = int(stripped.removeprefix("auto/")) if stripped != "auto" else None
        if total is not None and not 1 <= total <= MAX_SHARDS:
            raise typer.BadParameter(f"{stripped}: N must be 1 to {MAX_SHARDS}", param_hint="--shard")
        return ci_shard(os.environ if environment is None else environment, total)
    matched = _SHARD.fullmatch(stripped)
    if matched is None or not 1 <= int(matched[1]) <= int(matched[2]) <= MAX_SHARDS:
        raise typer.BadParameter(
            f"{one_line(repr(text))}: write K/N with 1 <= K <= N <= {MAX_SHARDS}, e.g. 2/4",
            param_hint="--shard",
        )
    return int(matched[1]), int(matched[2])


def gpus_of(text: str | None) -> tuple[int, ...] | None:
    """--gpus: None for the default GPU; "all" for every GPU the driver reports; else a list of indices."""
    if text is None:
        return None
    if text.strip() == "all":
        count = gpu_count()
        if count == 0:
            raise typer.BadParameter("no GPU here", param_hint="--gpus")
        return tuple(range(count))
    parts = [part.strip() for part in text.split(",")]
    if not all(_GPU_INDEX.fullmatch(part) for part in parts) or len(set(parts)) != len(parts):
        raise typer.BadParameter(
            f"{one_line(repr(text))}: write all, or distinct GPU indices such as 0,1", param_hint="--gpus"
        )
    return tuple(int(part) for part in parts)
