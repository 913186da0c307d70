"""Benchmark: how long the expectation suite takes, ncuverify against the floor ncu itself sets.

    python bench/suite.py            # the parts that need no GPU: compile cold and warm, replay
    python bench/suite.py --gpu      # and, on a GPU machine: ncuverify, the raw-ncu floor, one ncu per case

Prints a Markdown table (seconds of wall time). The raw-ncu floor is one `ncu --csv` process over
ncuverify's own runner launching every case of the suite, asking for the union of the metrics: what
ncu needs for the same kernels and metrics, with nothing of ncuverify around it. "One ncu per case" is
what a naive wrapper does (timed on a sample of the cases and scaled). On a machine with two GPUs it
also times `--gpus 0,1` and says whether its verdicts equal the one-GPU run's. Not a test: timings
belong here, not in the test suite.
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
    if completed.returncode not in (0, 1, 3):  # a failed claim still times the run
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


def gpu_rows(cache: Path, scratch: Path, naive_sample: int) -> list[tuple[str, float]]:
    env = {**os.environ, "NCUVERIFY_CACHE_DIR": str(cache)}
    saved = scratch / "saved"
    one_json, two_json = scratch / "one.json", scratch / "two.json"
    # The first run guesses ncu's passes per metric set (the cache is new); the second knows them.
    first = timed(ncuverify("check", "expectations/", "--save-profile", str(scratch / "first")), env)
    whole = timed(
        ncuverify("check", "expectations/", "--save-profile", str(saved), "--json", str(one_json)), env
    )
    plans = [json.loads(p.read_text()) for p in sorted(saved.glob("runs/*/0/plan.json"))]
    commands = json.loads((saved / "commands.json").read_text())
    metrics = sorted({m for c in commands for m in c[c.index("--metrics") + 1].split(",")})
    cases = [case for plan in plans for case in plan["cases"]]
    floor = timed(_ncu(scratch / "floor", cases, metrics), env)
    # One ncu per case costs about the same for every case (ncu's start dominates): time a fixed sample
    # spread over the suite and scale it to every case.
    step = max(1, len(cases) // naive_sample)
    sample = cases[::step][:naive_sample]
    naive = sum(timed(_ncu(scratch / f"case{i}", [case], metrics), env) for i, case in enumerate(sample))
    rows = [
        (f"ncuverify check expectations/ ({len(cases)} cases, one GPU), first run: passes guessed", first),
        ("ncuverify check expectations/, again: passes known from the first run", whole),
        ("raw ncu: one process, every case, the union of the metrics (the floor)", floor),
        (
            f"one ncu process per case (a naive wrapper; {len(sample)} cases timed, scaled to {len(cases)})",
            naive * len(cases) / len(sample),
        ),
    ]
    if _gpu_count() >= 2:
        two = timed(ncuverify("check", "expectations/", "--gpus", "0,1", "--json", str(two_json)), env)
        same = _verdicts(one_json) == _verdicts(two_json)
        rows.append(
            (f"ncuverify check expectations/ on two GPUs (verdicts identical to one GPU: {same})", two)
        )
    return rows


def _verdicts(path: Path) -> list[tuple[str, str, str]]:
    document = json.loads(path.read_text())
    return [(f["path"], c["id"], c["verdict"]) for f in document["files"] for c in f["claims"]]


def _gpu_count() -> int:
    listed = subprocess.run(["nvidia-smi", "--list-gpus"], capture_output=True, text=True)
    return len([line for line in listed.stdout.splitlines() if line.startswith("GPU ")])


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
    parser.add_argument(
        "--naive-sample", type=int, default=24, help="cases timed one ncu each (scaled to the whole suite)"
    )
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ncuverify-bench-") as scratch:
        cache = Path(scratch) / "cache"
        rows = cpu_rows(cache)
        if arguments.gpu:
            rows += gpu_rows(cache, Path(scratch), arguments.naive_sample)
    print(f"ncuverify suite benchmark, {time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores\n")
    print("| what | seconds |\n| --- | --- |")
    for what, seconds in rows:
        print(f"| {what} | {seconds:.1f} |")


if __name__ == "__main__":
    main()
