"""Benchmark: program cases on one command, one ncu process for them all against one process each.

    python bench/programs.py                     # examples/programs/ranges.yaml (PyTorch), 3 runs each
    python bench/programs.py --repeat 5 examples/programs/ranges.yaml examples/programs/programs.yaml

Needs a GPU, ncu and the modules the programs import (ranges.yaml: torch); where there is no GPU it
says so and exits 3. Each file is checked with --allow-programs as ncuverify profiles programs now
(cases on one command share an ncu process) and as it did before (NCUVERIFY_PROGRAM_PROCESSES=each:
one process per case), in turns, so that a slow spell of the machine falls on both alike. Prints a
Markdown table: the ncu processes each way (from the saved profile's commands) and the median wall
time, and whether the two ways gave the same verdicts. Not a test: timings belong here.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ncuverify.environment import Environment
from ncuverify.errors import ExitCode
from ncuverify.profile.programs import PROCESSES_VARIABLE
from ncuverify.profile.recording import COMMANDS

ROOT = Path(__file__).resolve().parent.parent
RANGES = ROOT / "examples" / "programs" / "ranges.yaml"
WAYS = {"one process per command": "shared", "one process per case (before)": "each"}


def checked(path: Path, way: str, scratch: Path) -> tuple[float, int, list[str]]:
    """One check of the file the given way: its wall time, its ncu processes, its verdicts."""
    saved, results = scratch / "saved", scratch / "results.json"
    scratch.mkdir(parents=True, exist_ok=True)  # --json writes into a folder that exists
    env = {**os.environ, PROCESSES_VARIABLE: way}
    command = [sys.executable, "-m", "ncuverify", "check", "--allow-programs", str(path)]
    command += ["--save-profile", str(saved), "--json", str(results)]
    started = time.monotonic()
    completed = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    elapsed = time.monotonic() - started
    if completed.returncode not in (ExitCode.OK, ExitCode.CLAIM_FAILED):
        sys.exit(
            f"{' '.join(command)} exited {completed.returncode}:\n{completed.stdout[-2000:]}{completed.stderr[-2000:]}"
        )
    processes = len(json.loads((saved / COMMANDS).read_text()))
    files = json.loads(results.read_text())["files"]
    verdicts = [claim["verdict"] for file in files for claim in file["claims"]]
    return elapsed, processes, verdicts


def rows_of(path: Path, repeat: int, scratch: Path) -> list[tuple[str, int, float]]:
    seconds: dict[str, list[float]] = {what: [] for what in WAYS}
    processes: dict[str, int] = {}
    verdicts: dict[str, list[str]] = {}
    for turn in range(repeat):
        for what, way in WAYS.items():
            elapsed, processes[what], verdicts[what] = checked(path, way, scratch / f"{way}-{turn}")
            seconds[what].append(elapsed)
    same = len({json.dumps(v) for v in verdicts.values()}) == 1
    name = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    return [
        (f"{name}: {what} (verdicts alike: {same})", processes[what], statistics.median(seconds[what]))
        for what in WAYS
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "files", nargs="*", type=Path, default=[RANGES], help="expectation files of program cases"
    )
    parser.add_argument("--repeat", type=int, default=3, help="checks each way (their median is shown)")
    arguments = parser.parse_args()
    environment = Environment.probe("ncu")
    if environment.problem is not None:
        print(f"bench/programs.py needs a GPU and ncu: {environment.problem}", file=sys.stderr)
        sys.exit(ExitCode.NOT_MEASURABLE)
    rows = []
    with tempfile.TemporaryDirectory(prefix="ncuverify-bench-programs-") as scratch:
        for number, path in enumerate(arguments.files):
            rows += rows_of(path.resolve(), arguments.repeat, Path(scratch) / str(number))
    gpu = environment.gpu.name if environment.gpu is not None else "?"
    print(f"ncuverify program cases benchmark, {time.strftime('%Y-%m-%d')}, {gpu}\n")
    print("| what | ncu processes | seconds (median) |\n| --- | --- | --- |")
    for what, processes, seconds in rows:
        print(f"| {what} | {processes} | {seconds:.1f} |")


if __name__ == "__main__":
    main()
