"""Benchmark: what ncu itself costs per process and per launch, by the kind of counter asked for.

    python bench/ncu_costs.py        # needs a GPU and ncu

Every row runs ncuverify's own ncu command line (kernel replay, `--clock-control none`,
`--cache-control all`) around ncuverify's runner, on one small kernel launched as separate cases.
For each metric set it times a process of one launch and one of many: the difference, per launch,
is a launch's cost; the process of one launch, less the runner alone, is what ncu adds to a process
(its own start and its set-up at the first profiled launch). Two processes started together show
how much of that set-up ncu lets overlap. Prints a Markdown table. Not a test: timings belong here.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from suite import launch_passes

from ncuverify.environment import detect_gpu
from ncuverify.names import PASSES_METRIC
from ncuverify.profile.command import NcuOptions, ncu_command

SOURCE = 'extern "C" __global__ void scale(const float* a, float* b, int n) {\n'
SOURCE += "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) b[i] = 2.0f * a[i];\n}\n"
SYMBOL = "scale"
ELEMENTS = 1 << 22  # 16 MB a buffer: each launch takes a few microseconds on the GPU
# The counter kinds the expectation files ask for, one set each; the last is a memory-and-instruction
# set of the kind one case asks for whole.
METRIC_SETS = {
    "kernel time only": ["gpu__time_duration.sum"],
    "a SASS instruction count": ["smsp__sass_inst_executed_op_global_ld.sum"],
    "warp instructions executed": ["smsp__inst_executed.sum"],
    "DRAM bytes read": ["dram__bytes_read.sum"],
    "L1 global-load sectors": ["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"],
    "nine memory and instruction counters": [
        "dram__bytes_read.sum",
        "dram__throughput.avg.pct_of_peak_sustained_elapsed",
        "gpu__time_duration.sum",
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
        "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
        "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
        "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
        "smsp__inst_executed.sum",
    ],
}


def compile_kernel(folder: Path) -> Path:
    from cuda.core import Program, ProgramOptions

    cubin = folder / "scale.cubin"
    program = Program(SOURCE, "c++", options=ProgramOptions(arch=detect_gpu().arch))
    cubin.write_bytes(program.compile("cubin").code)
    return cubin


def write_plan(folder: Path, cubin: Path, launches: int) -> Path:
    """A plan of `launches` cases, each one launch of the kernel on buffers of its own."""
    buffer = {"buffer": "float32", "count": ELEMENTS, "fill": "zeros", "seed": 0, "offset": 0, "passed": True}
    case = {
        "cubin": str(cubin),
        "symbol": SYMBOL,
        "grid": [ELEMENTS // 256, 1, 1],
        "block": [256, 1, 1],
        "shared_bytes": 0,
        "args": [buffer, buffer, {"int32": ELEMENTS}],
        "repeat": 1,
        "sequence": "",
    }
    cases = [{"name": f"bench::launch{i}", **case} for i in range(launches)]
    folder.mkdir(parents=True, exist_ok=True)
    plan = folder / "plan.json"
    plan.write_text(json.dumps({"device": 0, "status_path": str(folder / "status.json"), "cases": cases}))
    return plan


def command(folder: Path, cubin: Path, launches: int, metrics: list[str] | None) -> list[str]:
    """The runner over a plan of `launches` cases, under ncuverify's ncu command when metrics are given."""
    plan = write_plan(folder, cubin, launches)
    if metrics is None:
        return [sys.executable, "-m", "ncuverify.runner", str(plan)]
    ncu = shutil.which("ncu") or "ncu"
    return ncu_command(
        NcuOptions(executable=ncu), [*metrics, PASSES_METRIC], [SYMBOL], folder / "ncu.log", plan
    )


def run_all(commands: list[list[str]]) -> float:
    """Seconds of wall time for the commands started together, each checked to have succeeded."""
    started = time.monotonic()
    running = [subprocess.Popen(c, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for c in commands]
    for each, process in zip(commands, running, strict=True):
        _, error = process.communicate()
        if process.returncode != 0:
            raise SystemExit(f"{' '.join(each)} exited {process.returncode}: {error.decode()[-2000:]}")
    return time.monotonic() - started


def timed(
    scratch: Path, cubin: Path, launches: int, metrics: list[str] | None, repeat: int
) -> tuple[float, Path]:
    """The median wall time of `repeat` runs, each in a folder of its own, and the last run's folder."""
    runs = []
    for _ in range(repeat):
        folder = Path(tempfile.mkdtemp(dir=scratch))
        runs.append(run_all([command(folder, cubin, launches, metrics)]))
    return statistics.median(runs), folder


def rows(scratch: Path, launches: int, repeat: int) -> list[tuple[str, str]]:
    cubin = compile_kernel(scratch)
    alone, _ = timed(scratch, cubin, 1, None, repeat)
    table = [("the runner alone, one launch (Python, CUDA, the launch)", f"{alone:.2f} s")]
    added = []
    many_by_set = {}
    for what, metrics in METRIC_SETS.items():
        one, folder = timed(scratch, cubin, 1, metrics, repeat)
        many_by_set[what], _ = timed(scratch, cubin, launches, metrics, repeat)
        per_launch = (many_by_set[what] - one) / (launches - 1)
        passes = launch_passes(folder / "ncu.log")[0]  # ncu's own count, from a timed run's report
        added.append(one - alone)
        table.append(
            (
                f"{what}: a launch ({passes} pass{'es' if passes > 1 else ''})",
                f"{per_launch * 1000:.0f} ms ({per_launch / passes * 1000:.0f} ms a pass)",
            )
        )
    table.append(
        (
            "what ncu adds to a process of one launch (median over the sets)",
            f"{statistics.median(added):.2f} s",
        )
    )
    metrics = METRIC_SETS["DRAM bytes read"]
    folders = [Path(tempfile.mkdtemp(dir=scratch)) for _ in range(2)]
    pair = run_all([command(folder, cubin, launches, metrics) for folder in folders])
    table.append(
        (
            f"two processes of {launches} launches (DRAM bytes) started together, against one",
            f"{pair:.2f} s against {many_by_set['DRAM bytes read']:.2f} s",
        )
    )
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--launches", type=int, default=40, help="launches in the longer process of each set")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each process (their median is shown)")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ncuverify-bench-") as scratch:
        measured = rows(Path(scratch), arguments.launches, arguments.repeat)
    print(f"ncu's own costs, {time.strftime('%Y-%m-%d')}\n")
    print("| what | cost |\n| --- | --- |")
    for what, cost in measured:
        print(f"| {what} | {cost} |")


if __name__ == "__main__":
    main()
