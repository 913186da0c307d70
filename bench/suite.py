"""Benchmark: how long the expectation suite takes, ncuverify against the floor ncu itself sets.

    python bench/suite.py            # the parts that need no GPU: compile cold and warm, replay, plugin
    python bench/suite.py --gpu      # and, on a GPU machine: ncuverify cold and warm, the floor, naive

Prints a Markdown table (seconds of wall time). Beside the plugin, pytest itself over as many items
that do nothing: what any pytest plugin of that many items costs. On a GPU: ncuverify from a cold
cache (nothing compiled, ncu's passes guessed) and warm; warm again with one ncu process at a time,
its verdicts compared; the model floor, one process start plus every launch with the passes ncu took
for it (repeats, which only time, one pass each), from this run's own pass counts
(`profiler__replayer_passes`) and the measured costs: a start is what one ncu process around one
launch takes, a launch-pass what the one-at-a-time run's processes took beyond their starts, per
launch-pass; one ncu per case (a naive wrapper, timed on a sample and scaled); and the ratios; then each
process of the one-at-a-time run, its time beside its launch-passes as the pass model predicted them
and as ncu reported them. On a machine with two GPUs it also times `--gpus 0,1`. Last, on any machine:
the suite's processes as the scheduler groups them for an H200, with their predicted launch-passes. Not a test: timings belong here, not in the test
suite.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ncuverify.names import PASSES_METRIC, REPEATS
from ncuverify.profile.outcome import ELAPSED_FILE
from ncuverify.profile.work import is_driver_command

ROOT = Path(__file__).resolve().parent.parent
# The two rows the plugin's ratio is of.
REPLAY_ROW = "replay of recordings/h200, warm cache"
PLUGIN_ROW = "the pytest plugin over recordings/h200"
EXPECTATIONS = ROOT / "expectations"
# A pytest plugin of items that do nothing, as many as the plugin collects: what pytest itself costs.
EMPTY_ITEMS = """import os, pytest
class Items(pytest.File):
    def collect(self):
        for i in range(int(os.environ["BENCH_ITEMS"])):
            yield Item.from_parent(self, name=f"item{i}")
class Item(pytest.Item):
    def runtest(self):
        pass
def pytest_collect_file(file_path, parent):
    return Items.from_parent(parent, path=file_path) if file_path.suffix == ".items" else None
"""


def timed(command: list[str], env: dict[str, str] | None = None) -> float:
    started = time.monotonic()
    completed = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    elapsed = time.monotonic() - started
    if completed.returncode not in (0, 1, 3):  # a failed claim still times the run (pytest: 1 too)
        sys.exit(
            f"{' '.join(command)} exited {completed.returncode}:\n{completed.stdout[-2000:]}{completed.stderr[-2000:]}"
        )
    return elapsed


def ncuverify(*args: str) -> list[str]:
    return [sys.executable, "-m", "ncuverify", *args]


def cpu_rows(cache: Path, repeat: int) -> list[tuple[str, float]]:
    # As an installed ncuverify runs: its modules compiled to bytecode once (pip does so at install).
    env = {**os.environ, "NCUVERIFY_CACHE_DIR": str(cache)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    # The plugin alone: other plugins installed with it (a development environment has pytest-xdist and
    # hypothesis) cost time of their own in every pytest run; the last row loads them too.
    alone = {**env, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    replay = ("--ncuverify-from-profile", "recordings/h200", "-p", "no:cacheprovider", "-q")
    plugin = [sys.executable, "-m", "pytest", "-p", "ncuverify.pytest_plugin", "expectations/", *replay]
    # pytest's own modules compiled to bytecode too (an installed pytest has them), before timing it.
    items = _collected([*plugin, "--collect-only", "-q"], alone)
    empty = cache.parent / "empty"
    empty.mkdir(parents=True, exist_ok=True)
    (empty / "empty_items.py").write_text(EMPTY_ITEMS)
    (empty / "claims.items").write_text("")
    bare = {
        **alone,
        "BENCH_ITEMS": str(items),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(empty), alone.get("PYTHONPATH")])),
    }
    bare_pytest = [sys.executable, "-m", "pytest", "-p", "empty_items", str(empty / "claims.items")]
    bare_pytest += ["-p", "no:cacheprovider", "-q", "--rootdir", str(empty)]
    cold = timed(ncuverify("check", "--static-only", "expectations/"), env)
    html = str(cache.parent / "report.html")
    warm = {
        "static claims, warm compile cache": (ncuverify("check", "--static-only", "expectations/"), env),
        REPLAY_ROW: (ncuverify("check", "--from-profile", "recordings/h200", "expectations/"), env),
        "the same replay writing --html": (
            ncuverify("check", "--from-profile", "recordings/h200", "expectations/", "--html", html),
            env,
        ),
        PLUGIN_ROW: (plugin, alone),
        "the same with -k s22_four_sectors (one claim)": ([*plugin, "-k", "s22_four_sectors"], alone),
        f"pytest itself: {items} items that do nothing, in one file": (bare_pytest, bare),
        "the plugin with every installed pytest plugin loaded": (
            [sys.executable, "-m", "pytest", *_plugin(), "expectations/", *replay],
            env,
        ),
    }
    # Each warm row is the median of its runs, taken in turns so that a slow spell of the machine
    # falls on every row alike.
    seconds: dict[str, list[float]] = {what: [] for what in warm}
    for _ in range(repeat):
        for what, (command, command_env) in warm.items():
            seconds[what].append(timed(command, command_env))
    medians = {what: statistics.median(times) for what, times in seconds.items()}
    ratio = medians[PLUGIN_ROW] / medians[REPLAY_ROW]
    return [
        ("static claims, cold compile cache", cold),
        *medians.items(),
        ("ratio: the plugin / the replay", ratio),
    ]


def _collected(command: list[str], env: dict[str, str]) -> int:
    """How many items pytest's --collect-only -q says it collected: its count per file, summed."""
    completed = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    found = sum(int(n) for n in re.findall(r"^\S+: ([0-9]+)$", completed.stdout, re.MULTILINE))
    if not found:
        sys.exit(
            f"{' '.join(command)} collected nothing:\n{completed.stdout[-2000:]}{completed.stderr[-2000:]}"
        )
    return found


def _plugin() -> list[str]:
    """The plugin by name where ncuverify is used from a checkout (an installed one registers it)."""
    from importlib.metadata import entry_points

    installed = any(e.value.startswith("ncuverify") for e in entry_points(group="pytest11"))
    return [] if installed else ["-p", "ncuverify.pytest_plugin"]


def gpu_rows(scratch: Path, naive_sample: int) -> list[tuple[str, float]]:
    env = {**os.environ, "NCUVERIFY_CACHE_DIR": str(scratch / "gpu-cache")}  # cold: a cache of its own
    saved = scratch / "saved"
    jsons = {name: scratch / f"{name}.json" for name in ("cold", "warm", "serial", "two")}
    # Cold: nothing compiled, ncu's passes per metric set unknown (guessed); warm: both known.
    cold = timed(ncuverify("check", "expectations/", "--json", str(jsons["cold"])), env)
    warm = timed(ncuverify("check", "expectations/", "--json", str(jsons["warm"])), env)
    # One process at a time: each process's wall time (seconds.txt) is its own, with no wait for the GPU.
    serial = timed(
        ncuverify(
            "check",
            "expectations/",
            "--processes-per-gpu",
            "1",
            "--save-profile",
            str(saved),
            "--json",
            str(jsons["serial"]),
        ),
        env,
    )
    plans = [json.loads(p.read_text()) for p in sorted(saved.glob("runs/*/0/plan.json"))]
    commands = json.loads((saved / "commands.json").read_text())
    profiled = [c for c in commands if not is_driver_command(c)]  # the runner alone takes no metric
    metrics = sorted({m for c in profiled for m in c[c.index("--metrics") + 1].split(",")})
    # The cases as the suite names them (a repeated case's repeats are its own entry in the plans).
    cases = [case for plan in plans for case in plan["cases"] if not case["name"].endswith(REPEATS)]
    # One ncu per case costs about the same for every case (ncu's start dominates): time a fixed sample
    # spread over the suite and scale it to every case.
    step = max(1, len(cases) // naive_sample)
    sample = cases[::step][:naive_sample]
    per_case = [timed(_ncu(scratch / f"case{i}", [case], metrics), env) for i, case in enumerate(sample)]
    naive = sum(per_case) * len(cases) / len(sample)
    start_s = sorted(per_case)[len(per_case) // 2]  # one process around one launch: mostly its start
    runs = [plan.parent for plan in sorted(saved.glob("runs/*/*/plan.json"))]
    seconds = [float((run / ELAPSED_FILE).read_text()) for run in runs]
    by_launch = {run: launch_passes(run / "ncu.log") for run in runs}  # each log parsed once
    passes = sum(sum(launches) for launches in by_launch.values())
    pass_s = max(0.0, sum(seconds) - len(runs) * start_s) / max(1, passes)
    own_passes = sum(_own_passes(run, launches) for run, launches in by_launch.items())
    floor = start_s + own_passes * pass_s
    same = {
        name: _verdicts(path) == _verdicts(jsons["warm"]) for name, path in jsons.items() if path.exists()
    }
    _differences(jsons)
    rows = [
        (
            f"ncuverify check expectations/ ({len(cases)} cases, one GPU), cold: nothing compiled, passes guessed",
            cold,
        ),
        ("ncuverify check expectations/, warm: compiled, passes known", warm),
        (
            f"the same, one ncu process at a time (verdicts identical: {same['serial']}; cold's: {same['cold']})",
            serial,
        ),
        (
            f"model floor: one start ({start_s:.2f} s) and {own_passes} launch-passes ({pass_s * 1000:.0f} ms each):"
            " each launch's own passes, repeats once",
            floor,
        ),
        (
            f"the one-at-a-time run's {len(runs)} ncu processes, {passes} launch-passes (a start each, then"
            f" {pass_s * 1000:.0f} ms a launch-pass)",
            sum(seconds),
        ),
        (
            f"one ncu process per case (a naive wrapper; {len(sample)} cases timed, scaled to {len(cases)})",
            naive,
        ),
        ("ratio: warm / model floor", warm / floor),
        ("ratio: one ncu per case / warm", naive / warm),
    ]
    rows += process_rows(saved, runs, seconds, by_launch)
    if _gpu_count() >= 2:
        two = timed(ncuverify("check", "expectations/", "--gpus", "0,1", "--json", str(jsons["two"])), env)
        same_two = _verdicts(jsons["two"]) == _verdicts(jsons["warm"])
        rows.append(
            (f"ncuverify check expectations/ on two GPUs (verdicts identical to one GPU: {same_two})", two)
        )
    return rows


def process_rows(
    saved: Path, runs: list[Path], seconds: list[float], by_launch: dict[Path, list[int]]
) -> list[tuple[str, float]]:
    """Each ncu process of the one-at-a-time run, its time beside its launch-passes: as the pass model
    predicted them (its launches times the passes of its metrics) and as ncu reported them."""
    from ncuverify.profile.passes import model_for

    commands = json.loads((saved / "commands.json").read_text())
    arch = json.loads((saved / "provenance.json").read_text())["arch"]
    model = model_for(arch)
    ordered = sorted(range(len(runs)), key=lambda i: tuple(int(part) for part in runs[i].parts[-2:]))
    rows = []
    for command, at in zip(commands, ordered, strict=False):  # the recording's runs are in this order
        run = runs[at]
        cases = json.loads((run / "plan.json").read_text())["cases"]
        launches = sum(case["repeat"] for case in cases)
        if is_driver_command(command):  # the runner alone: no ncu, no pass
            rows.append((f"process {'/'.join(run.parts[-2:])}: {len(cases)} cases without ncu", seconds[at]))
            continue
        metrics = command[command.index("--metrics") + 1].split(",")
        predicted = launches * model.passes(metrics)
        measured = sum(by_launch[run])
        rows.append(
            (
                f"process {'/'.join(run.parts[-2:])}: {len(cases)} cases, {launches} launches, launch-passes"
                f" predicted {predicted} ({model.source}), measured {measured}",
                seconds[at],
            )
        )
    return rows


def predicted_passes(cache: Path) -> list[str]:
    """The suite's ncu processes as the scheduler groups them for an H200 (sm_90) on one GPU: each
    one's launches and predicted launch-passes, and their total."""
    from ncuverify.build.cache import CompileCache
    from ncuverify.environment import Environment
    from ncuverify.options import CheckOptions
    from ncuverify.profile import NcuOptions, session
    from ncuverify.results import run_keys
    from ncuverify.stages import prepare
    from ncuverify.stages.profiling import file_cases
    from ncuverify.stages.values import Prepared

    paths = sorted(EXPECTATIONS.glob("*.yaml"))
    options = CheckOptions(arch="sm_90", cache=CompileCache(cache / "compile"))
    nowhere = Environment(gpu=None, ncu=None, problem="planned only")
    prepared = [
        prepare.prepare_file(p, k, options, nowhere) for p, k in zip(paths, run_keys(paths), strict=True)
    ]
    files = file_cases([p for p in prepared if isinstance(p, Prepared) and p.waiting])
    with tempfile.TemporaryDirectory(prefix="ncuverify-plan-") as work:
        scheduled = session.scheduled(files, Path(work), session.Settings(NcuOptions()))
    each = scheduled.launch_passes()
    return [
        f"- {len(scheduled.units)} processes, {sum(each)} launch-passes"
        f" ({', '.join(map(str, each))}; passes from {scheduled.passes.model.source})"
    ]


def _differences(jsons: dict[str, Path]) -> None:
    """Each claim whose verdict differs from the warm run's, on stderr: what a speed-up must not change."""
    warm = {(path, claim): verdict for path, claim, verdict in _verdicts(jsons["warm"])}
    for name, path in jsons.items():
        if path.exists() and name != "warm":
            for file, claim, verdict in _verdicts(path):
                if warm.get((file, claim)) != verdict:
                    print(
                        f"{name}: {file} {claim}: {verdict}, warm: {warm.get((file, claim))}", file=sys.stderr
                    )


def _keep(scratch: Path, folder: Path) -> None:
    """The runs' JSON results and the one-at-a-time run's saved profile, to study a verdict that differs."""
    folder.mkdir(parents=True, exist_ok=True)
    for result in scratch.glob("*.json"):
        shutil.copy(result, folder / result.name)
    if (scratch / "saved").is_dir():
        shutil.copytree(scratch / "saved", folder / "saved", dirs_exist_ok=True)


def launch_passes(log: Path) -> list[int]:
    """The replay passes of each launch in an ncu log, in launch order."""
    from ncuverify.profile.table import parse_csv

    table = parse_csv(log.read_text(errors="replace"))
    passes = table[table["metric"] == PASSES_METRIC].sort_values("launch")
    return [int(value) for value in passes["value"]]


def _own_passes(run: Path, by_launch: list[int]) -> int:
    """A process's launch-passes as the floor counts them: each case's first launch with the passes ncu
    took for it (by_launch, in launch order), its further launches (repeats, for time only) one
    pass each."""
    if not by_launch:  # the runner alone, without ncu
        return 0
    plan = json.loads((run / "plan.json").read_text())
    passes = iter(by_launch)
    total = 0
    for case in plan["cases"]:
        launches = [next(passes, 1) for _ in range(case["repeat"])]
        total += launches[0] + len(launches) - 1
    return total


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
    parser.add_argument(
        "--repeat", type=int, default=5, help="runs of each warm machine-only row (their median is shown)"
    )
    parser.add_argument(
        "--keep",
        type=Path,
        help="copy the runs' JSON results and the one-at-a-time run's profile into this folder",
    )
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ncuverify-bench-") as scratch:
        cache = Path(scratch) / "cache"
        rows = cpu_rows(cache, arguments.repeat)
        planned = predicted_passes(cache)
        if arguments.gpu:
            rows += gpu_rows(Path(scratch), arguments.naive_sample)
        if arguments.keep:
            _keep(Path(scratch), arguments.keep)
    print(f"ncuverify suite benchmark, {time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores\n")
    print("| what | seconds |\n| --- | --- |")
    for what, seconds in rows:
        print(f"| {what} | {seconds:.2f} |" if what.startswith("ratio") else f"| {what} | {seconds:.1f} |")
    print("\nThe suite's ncu processes as scheduled for an H200, predicted with no GPU:\n")
    print("\n".join(planned))


if __name__ == "__main__":
    main()
