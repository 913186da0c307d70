"""What a run profiles: each file's cases that its claims read, with the ncu metrics each needs, planned
for the runner under qualified names (`<file key>::<case>`), their cubins written once per kernel.

A case that repeats (`repeat: N`) repeats for its time: its N launches are profiled as `<case>
(repeats)`, asking for the time alone (one pass each, no replay), and one launch more with its other
metrics, which need several passes (`per_file` gives the case both). A case whose kernel times itself,
and the steps of a sequence, keep their launches together."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ncuverify.build import KernelBuild
from ncuverify.names import QualifiedCase, is_ncu_metric, is_time
from ncuverify.profile import schedule
from ncuverify.profile.recording import write_file
from ncuverify.runner.plan import (
    BufferFill,
    NpyContents,
    PlannedArgument,
    PlannedBuffer,
    PlannedCase,
    PlannedScalar,
    PlannedStruct,
    PlannedUse,
)
from ncuverify.spec import CaseSpec, Claim, Spec
from ncuverify.spec.arguments import Argument, BufferArg, NpyFill, StructArg, UseArg, struct_layout
from ncuverify.spec.npy import npy_digest, npy_file


@dataclass(frozen=True)
class FileCases:
    """One file's part of a run: its key (a name unique in the run), spec, builds and profiler claims."""

    key: str
    spec: Spec
    builds: dict[str, KernelBuild]
    claims: list[Claim]
    # cases whose figures come from a recording (check --reuse): not profiled again
    reused: frozenset[str] = frozenset()


def case_metrics(spec: Spec, claims: Sequence[Claim]) -> dict[str, set[str]]:
    """The cases these claims read (in file order), each with the ncu metrics it needs. A control is
    judged by the claim's expression on the control case, so it needs what the claim's case needs."""
    needs = claim_needs(claims)
    return {name: needs[name] for name in spec.content.cases if name in needs}


def claim_needs(claims: Sequence[Claim]) -> dict[str, set[str]]:
    """Every case these claims read, each with the ncu metrics it needs (see case_metrics)."""
    needs: dict[str, set[str]] = {}
    for claim in claims:
        for ref in claim.metric_refs():
            wanted = {ref.name} if is_ncu_metric(ref.name) else set()
            needs.setdefault(ref.case, set()).update(wanted)
            if claim.control is not None and ref.case == claim.case:
                needs.setdefault(claim.control, set()).update(wanted)
    return needs


def plan_cases(
    files: Sequence[FileCases], work_dir: Path
) -> tuple[dict[str, PlannedCase], list[schedule.ProfiledCase]]:
    """Every case to profile, under its qualified name, with its cubin written once per kernel (over
    what an earlier run in a kept profile's folder left: never its kernels). A step of a launch
    sequence comes with the steps before it (their figures feed it), the sequence profiled as one."""
    cubins = work_dir / "cubins"
    cubins.mkdir(parents=True, exist_ok=True)
    planned: dict[str, PlannedCase] = {}
    written: set[Path] = set()
    for number, file in enumerate(files):
        runs = profiled_runs(file)
        split = {name: time for name in runs if (time := _repeated_for_time(file, name, runs[name]))}
        for name in runs:
            case = file.spec.content.cases[name]
            # numbered, not named: a file's key is a path, which may hold any character
            cubin = cubins / f"{number}.{case.kernel}.cubin"
            if cubin not in written:
                write_file(cubin, file.builds[case.kernel].cubin)
                written.add(cubin)
            identity = QualifiedCase.of(file.key, name)
            full = str(identity)
            sequence = file.spec.content.sequence_of(name)
            planned[full] = planned_case(
                full,
                case,
                file.builds[case.kernel],
                cubin,
                file.spec.path.parent,
                str(QualifiedCase.of(file.key, sequence)) if sequence is not None else "",
            )
            if name in split:
                repeats = str(replace(identity, repeats=True))
                planned[repeats] = replace(planned[full], name=repeats)
                planned[full] = replace(planned[full], repeat=1)
    return planned, profiled_cases(files)


def profiled_runs(file: FileCases) -> dict[str, set[str]]:
    """The file's cases to profile (those reused left out), each with the metrics its claims read and
    the steps before it in its sequence."""
    needs = case_metrics(file.spec, file.claims)
    return with_earlier_steps(file.spec, {name: m for name, m in needs.items() if name not in file.reused})


def profiled_cases(files: Sequence[FileCases]) -> list[schedule.ProfiledCase]:
    """What the schedule places for these files' cases, cubins aside: what `check --dry-run` plans
    before anything is built (a case whose kernel is not built yet counts as timing itself where it
    reads a buffer back, as one whose SASS is not known)."""
    wanted: list[schedule.ProfiledCase] = []
    for file in files:
        runs = profiled_runs(file)
        split = {name: time for name in runs if (time := _repeated_for_time(file, name, runs[name]))}
        wanted += _profiled(file, {name: runs[name] - split.get(name, set()) for name in runs}, split)
        wanted += [
            schedule.ProfiledCase(
                str(replace(QualifiedCase.of(file.key, name), repeats=True)),
                file.spec.content.cases[name].repeat,
                time,
            )
            for name, time in split.items()
        ]
    return wanted


def _repeated_for_time(file: FileCases, name: str, metrics: set[str]) -> frozenset[str]:
    """The time metrics a repeated case's repeats are profiled for on their own; none where its launches
    stay together: it needs no other metric, is a step of a sequence, or times itself."""
    case = file.spec.content.cases[name]
    time = frozenset(metric for metric in metrics if is_time(metric))
    if case.repeat == 1 or not time or time == metrics or file.spec.content.sequence_of(name) is not None:
        return frozenset()
    return frozenset() if _reads_timing_back(case, file.builds.get(case.kernel)) else time


def with_earlier_steps(spec: Spec, needs: dict[str, set[str]]) -> dict[str, set[str]]:
    """The cases to run for these needs, in file order: each step of a sequence with the steps before
    it (which need no metric of their own)."""
    runs = {step: set[str]() for name in needs for step in spec.content.sequence_steps(name)}
    return {name: needs.get(name, set()) for name in spec.content.cases if name in runs}


def _profiled(
    file: FileCases, runs: dict[str, set[str]], once: Collection[str] = ()
) -> list[schedule.ProfiledCase]:
    """What the schedule places: a case of its own, or a sequence's steps as one (one process, in
    order), needing what its steps need. A case in once launches once (its repeats are apart)."""
    content = file.spec.content
    by_sequence: dict[str, list[str]] = {}
    for name in runs:
        by_sequence.setdefault(content.sequence_steps(name)[0], []).append(name)
    profiled = []
    for first, steps in by_sequence.items():
        cases = [content.cases[step] for step in steps]
        profiled.append(
            schedule.ProfiledCase(
                str(QualifiedCase.of(file.key, first)),
                sum(1 if step in once else content.cases[step].repeat for step in steps),
                frozenset().union(*(runs[step] for step in steps)),
                any(_reads_timing_back(case, file.builds.get(case.kernel)) for case in cases),
                tuple(str(QualifiedCase.of(file.key, step)) for step in steps) if len(steps) > 1 else (),
            )
        )
    return profiled


def _reads_timing_back(case: CaseSpec, build: KernelBuild | None) -> bool:
    """Whether what the runner reads back may depend on how the launch was profiled: the case reads a
    buffer back and its kernel reads the clock (or its SASS is not known, or it is not built yet).
    Buffers of a kernel that does not read the clock hold the same values after any replay pass: ncu
    restores memory first."""
    return case.reads_back and (build is None or build.facts.reads_clock is not False)


def planned_case(
    name: str, case: CaseSpec, build: KernelBuild, cubin_path: Path, folder: Path = Path(), sequence: str = ""
) -> PlannedCase:
    return PlannedCase(
        name=name,
        cubin=str(cubin_path),
        symbol=build.symbol,
        grid=case.grid,
        block=case.block,
        shared_bytes=case.shared_bytes,
        args=planned_arguments(case.args, folder),  # a .npy fill by absolute path and digest
        repeat=case.repeat,
        sequence=sequence,
    )


def planned_arguments(args: Sequence[Argument], folder: Path) -> list[PlannedArgument]:
    """The arguments as the runner is given them, every field the model's (defaults included): a .npy
    fill by its absolute path and its digest, a struct by its layout."""
    return [planned_argument(arg, folder) for arg in args]


def planned_argument(arg: Argument, folder: Path) -> PlannedArgument:
    if isinstance(arg, BufferArg):
        fill: BufferFill | NpyContents
        if isinstance(arg.fill, NpyFill):
            fill = NpyContents(str(npy_file(folder, arg.fill)), npy_digest(folder, arg, arg.fill))
        else:
            fill = arg.fill
        return PlannedBuffer(
            arg.buffer, arg.count, fill, arg.value, arg.seed, arg.offset, arg.name, arg.passed
        )
    if isinstance(arg, UseArg):
        return PlannedUse(arg.use, arg.passed)
    if isinstance(arg, StructArg):
        return PlannedStruct(struct_layout(arg))
    return PlannedScalar(arg.kind, arg.value)
