"""Benchmark: how long the expectation suite takes, ncuverify against the floor ncu itself sets.

    python bench/suite.py            # the parts that need no GPU: compile cold and warm, replay
    python bench/suite.py --gpu      # and, on a GPU machine: ncuverify, the raw-ncu floor, one ncu per case

Prints a Markdown table (seconds of wall time). The raw-ncu floor is one `ncu --csv` process over
ncuverify's own runner launching every case of the suite, asking for the union of the metrics: what
ncu needs for the same kernels and metrics, with nothing of ncuverify around it. "One ncu per case" is
what a naive wrapper does. Not a test: timings belong here, not in the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXPECTATIONS = ROOT / "expectations"


def timed(command: list[str], env: dict[str, str] | None = None) -> float:
    started = time.monotonic()
    completed = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    elapsed = time.monotonic() - started
    if completed.returncode not in (0, 3):
        sys.exit(
            f"{' '.join(command)} exited {completed.returncode}:\n{completed.stdout[-2000:]}{completed.stderr[-2000:]}"
        )
    return elapsed


def ncuverify(*args: str) -> list[str]:
    return [sys.executable, "-m", "ncuverify", *args]


def cpu_rows(cache: Path) -> list[tuple[str, float]]:
    env = {**os.environ, "NCUVERIFY_CACHE_DIR": str(cache)}
    return [
        (
            "static claims, cold compile cache",
            timed(ncuverify("check", "--static-only", "expectations/"), env),
        ),
        (
            "static claims, warm compile cache",
            timed(ncuverify("check", "--static-only", "expectations/"), env),
        ),
        (
            "replay of recordings/h200, warm cache",
            timed(ncuverify("check", "--from-profile", "recordings/h200", "expectations/"), env),
        ),
    ]


def gpu_rows(cache: Path, scratch: Path) -> list[tuple[str, float]]:
    env = {**os.environ, "NCUVERIFY_CACHE_DIR": str(cache)}
    saved = scratch / "saved"
    whole = timed(ncuverify("check", "expectations/", "--save-profile", str(saved)), env)
    plans = [json.loads(p.read_text()) for p in sorted(saved.glob("*/plan.json"))]
    commands = [
        json.loads((p.parent / "provenance.json").read_text())["ncu_command"]
        for p in sorted(saved.glob("*/plan.json"))
    ]
    metrics = sorted({m for c in commands for m in c[c.index("--metrics") + 1].split(",")})
    cases = [case for plan in plans for case in plan["cases"]]
    floor = timed(_ncu(scratch / "floor", cases, metrics), env)
    one_by_one = sum(timed(_ncu(scratch / f"case{i}", [case], metrics), env) for i, case in enumerate(cases))
    return [
        (f"ncuverify check expectations/ ({len(cases)} cases, warm cache)", whole),
        ("raw ncu: one process, every case, the same metrics (the floor)", floor),
        ("one ncu process per case (a naive wrapper)", one_by_one),
    ]


def _ncu(folder: Path, cases: list[dict], metrics: list[str]) -> list[str]:
    folder.mkdir(parents=True)
    plan = folder / "plan.json"
    plan.write_text(json.dumps({"device": 0, "status_path": str(folder / "status.json"), "cases": cases}))
    return [
        "ncu", "--csv", "--page", "raw", "--print-units", "base", "--clock-control", "none",
        "--metrics", ",".join(metrics), "--log-file", str(folder / "ncu.log"),
        sys.executable, "-m", "ncuverify.runner", str(plan),
    ]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpu", action="store_true", help="also time the profiling (needs a GPU and ncu)")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ncuverify-bench-") as scratch:
        cache = Path(scratch) / "cache"
        rows = cpu_rows(cache)
        if arguments.gpu:
            rows += gpu_rows(cache, Path(scratch))
    print(f"ncuverify suite benchmark, {time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores\n")
    print("| what | seconds |\n| --- | --- |")
    for what, seconds in rows:
        print(f"| {what} | {seconds:.1f} |")


if __name__ == "__main__":
    main()
