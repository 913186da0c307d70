"""--shard auto: the share a parallel job's own variables name, for CI systems, Slurm job arrays and
Kubernetes Indexed Jobs. Each index and count is read exactly as its system defines it; anything else
is a usage error (exit 2) that says what was read.

Kubernetes gives an Indexed Job's pods their index (`JOB_COMPLETION_INDEX`, from 0) but not the Job's
`completions`: the count is written on the command line, `--shard auto/N`, beside the command it
splits, where the same manifest sets `completions: N` (a variable set in the pod's env would be one
more place to keep equal to it, and a missing one would not be seen). `auto/N` also checks the count
of any other system against N."""

from __future__ import annotations

from collections.abc import Mapping

import typer

from ncuverify.export.run_identity import MAX_SHARDS
from ncuverify.text import one_line

# The CI systems whose parallel jobs --shard auto reads: the index's and the count's variables, and
# whether the index counts from 0 or from 1.
CI_SHARD_VARIABLES = (
    ("GitLab", "CI_NODE_INDEX", "CI_NODE_TOTAL", 1),
    ("Buildkite", "BUILDKITE_PARALLEL_JOB", "BUILDKITE_PARALLEL_JOB_COUNT", 0),
    ("CircleCI", "CIRCLE_NODE_INDEX", "CIRCLE_NODE_TOTAL", 0),
)
# A Slurm job array (sbatch --array=MIN-MAX[:STEP]): this task's index, the array's first and last
# index, its step (1 where Slurm does not set it) and its number of tasks.
SLURM = ("SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_MAX")
SLURM_STEP, SLURM_COUNT = "SLURM_ARRAY_TASK_STEP", "SLURM_ARRAY_TASK_COUNT"
KUBERNETES = "JOB_COMPLETION_INDEX"  # an Indexed Job's pod: its index, from 0


def ci_shard(environment: Mapping[str, str], total: int | None = None) -> tuple[int, int]:
    """The share (K, N) the first parallel job's variables set name; total: N as `auto/N` gives it."""
    for system, index_name, total_name, first in CI_SHARD_VARIABLES:
        if index_name in environment and total_name in environment:
            index, count = _numbers(environment, system, (index_name, total_name))
            return _share(
                system, f"{index_name}={index} and {total_name}={count}", index + 1 - first, count, total
            )
    if SLURM[0] in environment:
        return _slurm(environment, total)
    if KUBERNETES in environment:
        (index,) = _numbers(environment, "Kubernetes", (KUBERNETES,))
        if total is None:
            raise _bad(
                f"auto: Kubernetes gives the Indexed Job's {KUBERNETES}={index} but not its completions:"
                " write --shard auto/N, N the Job's completions"
            )
        return _share("Kubernetes", f"{KUBERNETES}={index}", index + 1, total, total)
    known = "; ".join(f"{system}'s {index} and {count}" for system, index, count, _ in CI_SHARD_VARIABLES)
    raise _bad(
        f"auto: no parallel job's variables are set ({known}; Slurm's {SLURM[0]} with {SLURM[1]} and"
        f" {SLURM[2]}; Kubernetes' {KUBERNETES}, with auto/N); elsewhere write K/N, e.g. from a job matrix"
    )


def _slurm(environment: Mapping[str, str], total: int | None) -> tuple[int, int]:
    """A Slurm array's task as a share: the tasks are MIN, MIN+STEP, ... MAX, the K-th of them is K. An
    array of listed indices (--array=1,4,9) has no step that makes them a range: a usage error."""
    missing = [name for name in SLURM if name not in environment]
    if missing:
        raise _bad(f"auto: Slurm's {SLURM[0]} is set but not {missing[0]}: not a job array's task")
    names = SLURM + tuple(name for name in (SLURM_STEP, SLURM_COUNT) if name in environment)
    values = dict(zip(names, _numbers(environment, "Slurm", names), strict=True))
    index, low, high = (values[name] for name in SLURM)
    step = values.get(SLURM_STEP, 1)
    read = f"{SLURM[0]}={index}, {SLURM[1]}={low}, {SLURM[2]}={high}, {SLURM_STEP}={step}"
    count = (high - low) // step + 1 if step > 0 and high >= low else 0
    regular = count > 0 and (high - low) % step == 0 and (index - low) % step == 0 and low <= index <= high
    if not regular or values.get(SLURM_COUNT, count) != count:
        counted = f" and {SLURM_COUNT}={values[SLURM_COUNT]}" if SLURM_COUNT in values else ""
        raise _bad(
            f"auto: Slurm's {read}{counted} are not the tasks of one array MIN-MAX:STEP (listed indices"
            " such as --array=1,4,9 are not): write --shard K/N"
        )
    return _share("Slurm", read, (index - low) // step + 1, count, total)


def _numbers(environment: Mapping[str, str], system: str, names: tuple[str, ...]) -> tuple[int, ...]:
    """The variables' values as numbers: ASCII digits only (str.isdigit takes '²', which int() refuses)."""
    texts = [environment[name] for name in names]
    if not all(text.isascii() and text.isdigit() and len(text) <= 9 for text in texts):
        shown = " and ".join(
            f"{name}={one_line(repr(text))}" for name, text in zip(names, texts, strict=True)
        )
        raise _bad(f"auto: {system}'s {shown} are not numbers")
    return tuple(int(text) for text in texts)


def _share(system: str, read: str, k: int, n: int, total: int | None) -> tuple[int, int]:
    if total is not None and n != total:
        raise _bad(f"auto/{total}: {system}'s {read} make {n} shares, not {total}")
    if not 1 <= k <= n <= MAX_SHARDS:
        raise _bad(f"auto: {system}'s {read} make no share K/N with 1 <= K <= N <= {MAX_SHARDS}")
    return k, n


def _bad(message: str) -> typer.BadParameter:
    return typer.BadParameter(message, param_hint="--shard")
