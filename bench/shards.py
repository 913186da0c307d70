"""Benchmark: how --shard K/N splits the expectation suite, from each shard's dry run (no GPU needed).

    python bench/shards.py                  # expectations/, N = 2, 4, 8, 32
    python bench/shards.py --shards 2 16 FILE_OR_FOLDER...

For each N it plans every shard (`check --dry-run --shard K/N`: nothing built or profiled) and prints
a Markdown table: the cases profiled over all N shards against one run's (1.00: each case once), the
largest shard's share of the profiling cost (launches times replay passes, as the shards are balanced;
1/N is even), and the kernels each shard builds (the mean and the largest) against the suite's. Beside
them, the same figures for a split of the claims alone (each claim by a hash of its file and id, as
--shard split before groups of cases): its shards profile a case once for each shard whose claims read
it, and build every kernel.
"""

from __future__ import annotations

import argparse
import sys
import zlib
from pathlib import Path

from ncuverify.environment import Environment
from ncuverify.options import CheckOptions
from ncuverify.pipeline import plan_files
from ncuverify.profile.plan import FileCases, profiled_cases
from ncuverify.profile.shares import placed
from ncuverify.results import run_keys
from ncuverify.run_plan import RunPlan
from ncuverify.spec import Spec, expand_paths, load
from ncuverify.spec.shares import with_claims
from ncuverify.stages.prepare import split_claims

NO_GPU = Environment(gpu=None, ncu=None, problem="the benchmark plans without a GPU")
ROOT = Path(__file__).resolve().parent.parent


def plans(paths: list[Path], n: int, arch: str) -> list[RunPlan]:
    """Each shard's dry run."""
    return [plan_files(paths, CheckOptions(arch=arch, shard=(k, n)), NO_GPU) for k in range(1, n + 1)]


def cases_of(plan: RunPlan) -> list[tuple[str, str]]:
    return [(case.file, case.case) for case in plan.profile]


def by_claims(specs: list[tuple[str, Spec]], n: int) -> tuple[int, int]:
    """A split of the claims alone: the cases its N shards profile together, and the kernels each builds."""
    profiled = 0
    for k in range(n):
        files = []
        for key, spec in specs:
            ids = [
                c.id for c in spec.content.claims if zlib.crc32(f"{spec.path.stem}:{c.id}".encode()) % n == k
            ]
            share = with_claims(spec, ids)
            files.append(FileCases(key, share, {}, split_claims(share.content.claims)[1]))
        profiled += len({name for case in profiled_cases(files) for name in case.cases})
    return profiled, sum(len(spec.content.kernels) for _, spec in specs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path, default=[ROOT / "expectations"])
    parser.add_argument("--shards", nargs="+", type=int, default=[2, 4, 8, 32])
    parser.add_argument("--arch", default="sm_90", help="the architecture planned for (default sm_90)")
    arguments = parser.parse_args()
    paths = expand_paths(arguments.paths)
    specs = [(key.name, load(path)) for key, path in zip(run_keys(paths), paths, strict=True)]
    (whole,) = plans(paths, 1, arguments.arch)
    one_run = len(cases_of(whole))
    kernels = len(whole.build)
    print(f"{len(paths)} files, {one_run} cases profiled and {kernels} kernels built in one run\n")
    print(
        "| N | cases profiled, all shards / one run | largest shard's cost | kernels built per shard (mean, largest) / all | by claims: cases / one run | by claims: kernels per shard |"
    )
    print("| --- | --- | --- | --- | --- | --- |")
    for n in arguments.shards:
        shards = plans(paths, n, arguments.arch)
        profiled = sum(len(cases_of(plan)) for plan in shards)
        costs = [0.0] * n
        for each in placed(specs, n):
            costs[each.share - 1] += each.cost
        built = [len(plan.build) for plan in shards]
        claims_profiled, claims_built = by_claims(specs, n)
        print(
            f"| {n} | {profiled / one_run:.2f} | {max(costs) / sum(costs):.1%} (even: {1 / n:.1%})"
            f" | {sum(built) / n:.1f}, {max(built)} / {kernels} | {claims_profiled / one_run:.2f}"
            f" | {claims_built} / {kernels} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
