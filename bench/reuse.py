"""Benchmark: what `check --reuse` saves a pull request that changes one kernel.

    python bench/reuse.py            # needs a GPU and ncu

In a copy of the expectation suite (expectations/ and kernels/): the suite profiled whole, its
profile saved; one kernel changed for real (vecAddKernel of kernels/vector_add.cu adds 0.0f, which
the compiler keeps: -0.0f + 0.0f is +0.0f); the suite again with `--reuse` against the whole run's
recording, saved too, and once more with --no-explain (a failed claim is not profiled again for its
explanation); and, to compare with, the changed suite profiled whole. Prints the wall times,
the cases each run profiled (from its ncu processes' plans), whether the reusing run's verdicts are
those of the whole run of the changed suite, and whether its own recording replays
(`--from-profile`) to the same verdicts. Not a test: timings belong here.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHANGED_KERNEL = "kernels/vector_add.cu"
BEFORE = "        C[i] = A[i] + B[i];\n"
AFTER = "        C[i] = A[i] + B[i] + 0.0f;\n"


def check(project: Path, *options: str) -> tuple[float, dict]:
    """`ncuverify check expectations/` in the project with the options: its wall time and its JSON."""
    output = project.parent / f"run-{time.monotonic_ns()}.json"
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    command = [sys.executable, "-m", "ncuverify", "check", "expectations/", "--json", str(output), *options]
    started = time.monotonic()
    completed = subprocess.run(command, cwd=project, env=environment, capture_output=True, text=True)
    seconds = time.monotonic() - started
    if completed.returncode not in (0, 1):
        sys.exit(f"{' '.join(command)} exited {completed.returncode}:\n{completed.stdout}{completed.stderr}")
    return seconds, json.loads(output.read_text())


def profiled_cases(recording: Path) -> int:
    """How many cases the run's ncu processes profiled (each repeated case once)."""
    names = set()
    for plan in (recording / "runs").rglob("plan.json"):
        names |= {case["name"].removesuffix(" (repeats)") for case in json.loads(plan.read_text())["cases"]}
    return len(names)


def verdicts(document: dict) -> dict[str, list[tuple[str, str]]]:
    return {f["key"]: [(c["id"], c["verdict"]) for c in f["claims"]] for f in document["files"]}


def reused(document: dict) -> tuple[int, int]:
    marks = [f["reused_from"] for f in document["files"] if f.get("reused_from")]
    return sum(len(m["cases"]) for m in marks), sum(m["of"] for m in marks)


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    with tempfile.TemporaryDirectory(prefix="ncuverify-bench-reuse-") as scratch:
        project = Path(scratch) / "project"
        project.mkdir()
        (project / ".ncuverify-root").write_text("")
        for folder in ("expectations", "kernels"):
            shutil.copytree(ROOT / folder, project / folder)
        full = Path(scratch) / "full"
        full_s, _ = check(project, "--save-profile", str(full))
        kernel = project / CHANGED_KERNEL
        source = kernel.read_text()
        if BEFORE not in source:
            sys.exit(f"{CHANGED_KERNEL} no longer holds {BEFORE.strip()!r}: pick another change")
        kernel.write_text(source.replace(BEFORE, AFTER, 1))
        reusing = Path(scratch) / "reusing"
        reuse_s, reuse_json = check(project, "--reuse", str(full), "--save-profile", str(reusing))
        # A failed claim's explanation profiles its kernel again with source counters: what a gate
        # that only needs the verdicts skips.
        quiet_s, quiet_json = check(project, "--reuse", str(full), "--no-explain")
        changed = Path(scratch) / "changed"
        changed_s, changed_json = check(project, "--save-profile", str(changed))
        _, replay_json = check(project, "--from-profile", str(reusing))
        taken, of = reused(reuse_json)
        print("| run | wall time (s) | cases profiled |")
        print("| --- | ---: | ---: |")
        print(f"| the suite, whole | {full_s:.1f} | {profiled_cases(full)} |")
        print(
            f"| {CHANGED_KERNEL} changed, --reuse the whole run's recording | {reuse_s:.1f} | {profiled_cases(reusing)} |"
        )
        print(f"| the same with --no-explain | {quiet_s:.1f} | {profiled_cases(reusing)} |")
        print(f"| {CHANGED_KERNEL} changed, whole | {changed_s:.1f} | {profiled_cases(changed)} |")
        print()
        print(f"reused {taken} of {of} cases")
        same = verdicts(reuse_json) == verdicts(changed_json) == verdicts(quiet_json)
        print(f"verdicts of the reusing runs and of the whole run of the changed suite identical: {same}")
        replays = verdicts(replay_json) == verdicts(reuse_json)
        print(f"the reusing run's recording replays (--from-profile) to the same verdicts: {replays}")


if __name__ == "__main__":
    main()
