"""What a run would do, as `check --dry-run` says it: the kernels it would build, the recorded figures it
would reuse, the cases it would profile and the ncu processes it would start, with the passes the
schedule predicts. Nothing is profiled to know it, and nothing compiled but with --reuse (whose
measurement keys hold the kernels' code). As JSON, a versioned document (DRY_RUN,
the `dry_run` field: a reader refuses a version it does not know); on a terminal, a few lines of at
most 80 columns."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ncuverify.names import QualifiedCase
from ncuverify.results import FileResult
from ncuverify.text import counted, one_line

DRY_RUN = 1  # the version of the JSON document; a change that drops or renames a field makes it 2


@dataclass(frozen=True)
class PlannedBuild:
    """A kernel entry of a file that the run would build: one kernel, or a set (`match:`)."""

    file: str  # the file's key
    kernel: str  # the kernel entry's key in the file
    entry: str | None  # what it instantiates; None for a set
    arch: str | None  # None: no architecture to build for (no GPU, no --arch, none in the file)


@dataclass(frozen=True)
class ReusedCase:
    """A case whose figures the run would take from --reuse's recording (its key unchanged)."""

    file: str
    case: str


@dataclass(frozen=True)
class PlannedCase:
    """A case the run would profile (a sequence's steps each, a program case once)."""

    file: str
    case: str
    launches: int  # launches profiled: its repeats, or a program case's launch_count
    metrics: int  # the ncu metrics its claims ask of it
    why: str | None = None  # with --reuse: why the recording does not give it


@dataclass(frozen=True)
class PlannedProcess:
    """A process the scheduler would start, on its GPU, with its cases in order: ncu's, or the runner's
    alone for cases that need no ncu (their launch facts from the driver; no replay pass)."""

    gpu: int
    cases: tuple[tuple[str, str], ...]  # (file key, case): a case's repeats as "<case> (repeats)"
    metrics: int
    passes: int  # predicted replay passes of each launch (remembered from ncu, else guessed)
    launches: int
    alone: bool = False  # times itself: runs with no other process on its GPU
    program: bool = False  # a program case's command under ncu, not the runner
    ncu: bool = True  # False: the runner alone, no ncu (passes 0)

    @property
    def launch_passes(self) -> int:
        """Every launch times the passes it takes: ncu asks each launch of a process for all its
        metrics (a case's timing repeats are a process of the time alone: one pass each)."""
        return self.launches * self.passes


@dataclass(frozen=True)
class RunPlan:
    """A dry run: what the run (its share, where sharded) would build, reuse and profile; and the files
    it could not plan, as check would report them."""

    shard: tuple[int, int]
    files: tuple[str, ...]
    build: tuple[PlannedBuild, ...] = ()
    reuse: tuple[ReusedCase, ...] = ()  # recorded figures the run would judge instead of profiling again
    profile: tuple[PlannedCase, ...] = ()
    processes: tuple[PlannedProcess, ...] = ()
    claims: tuple[tuple[str, str], ...] = ()  # (file key, claim id): every claim the run would judge
    replayed: bool = False  # --from-profile: judged from a recording, nothing profiled
    built: bool = False  # --reuse: the kernels were built (through the compile cache) for the keys
    notes: tuple[str, ...] = ()  # with --reuse: the GPU planned for where none is here; why nothing is reused
    failed: tuple[FileResult, ...] = field(default=(), compare=False)


def to_json(plan: RunPlan) -> str:
    """The plan as its JSON document (version DRY_RUN)."""
    document: dict[str, Any] = {
        "dry_run": DRY_RUN,
        "shard": list(plan.shard),
        "files": list(plan.files),
        "build": [{"file": b.file, "kernel": b.kernel, "entry": b.entry, "arch": b.arch} for b in plan.build],
        "reuse": [{"file": r.file, "case": r.case} for r in plan.reuse],
        "profile": [
            {"file": c.file, "case": c.case, "launches": c.launches, "metrics": c.metrics, "why": c.why}
            for c in plan.profile
        ],
        "processes": [_process_record(p) for p in plan.processes],
        "claims": [{"file": file, "claim": claim} for file, claim in plan.claims],
        "replayed": plan.replayed,
        "notes": list(plan.notes),
        "errors": [{"file": str(r.path), "error": r.input_error or r.internal_error} for r in plan.failed],
    }
    return json.dumps(document, indent=1) + "\n"


def _process_record(process: PlannedProcess) -> dict[str, Any]:
    return {
        "gpu": process.gpu,
        "cases": [{"file": file, "case": case} for file, case in process.cases],
        "metrics": process.metrics,
        "passes": process.passes,
        "launches": process.launches,
        "launch_passes": process.launch_passes,
        "alone": process.alone,
        "program": process.program,
        "ncu": process.ncu,
    }


def plan_lines(plan: RunPlan) -> list[str]:
    """The plan for a reader: what is built, reused and profiled, then each process with its first case
    (sentences: the console breaks them at spaces to its width, never cutting a name)."""
    k, n = plan.shard
    share = f"shard {k}/{n} of " if n > 1 else ""
    kernels = len(plan.build)
    files_built = len({b.file for b in plan.build})
    built = "nothing profiled" if plan.built else "nothing built or profiled"
    lines = [f"dry run: {share}{counted(len(plan.files), 'file')}, {built}", *plan.notes]
    lines.append(f"build: {counted(kernels, 'kernel')} of {counted(files_built, 'file')}")
    lines.append(f"reuse: {counted(len(plan.reuse), 'recorded case')}")
    if plan.replayed:
        lines.append(f"profile: nothing (judged from the recording), {len(plan.profile)} cases replayed")
        return [one_line(line) for line in lines]
    if plan.reuse and not plan.profile:
        lines.append("profile: nothing (every case reused), no ncu process")
        return [one_line(line) for line in lines]
    passes = sum(p.launch_passes for p in plan.processes)
    profiled = sum(p.ncu for p in plan.processes)
    without = len(plan.processes) - profiled
    lines.append(
        f"profile: {counted(len(plan.profile), 'case')} in"
        f" {counted(profiled, 'ncu process', 'ncu processes')}"
        f"{f' and {without} without ncu' if without else ''}, about {passes} replay passes"
    )
    for number, process in enumerate(plan.processes, 1):
        kind = "program" if process.program else ("alone" if process.alone else "")
        first = str(QualifiedCase.of(*process.cases[0])) if process.cases else ""
        more = f" and {len(process.cases) - 1} more" if len(process.cases) > 1 else ""
        passes_shown = counted(process.passes, "pass", "passes") if process.ncu else "no ncu"
        lines.append(
            f"  {number:>3}. GPU {process.gpu}: {passes_shown}"
            f" x {counted(process.launches, 'launch', 'launches')}"
            f"{f' ({kind})' if kind else ''}: {first}{more}"
        )
    return [one_line(line) for line in lines]
