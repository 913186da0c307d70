"""What a run profiles: each file's cases that its claims read, with the ncu metrics each needs, planned
for the runner under qualified names (`<file key>::<case>`), their cubins written once per kernel."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ncuverify.build import KernelBuild, is_static
from ncuverify.expression import MetricRef
from ncuverify.profile import schedule
from ncuverify.profile.recording import SEP, write_file
from ncuverify.runner import PlannedCase
from ncuverify.spec import BUFFER_PREFIX, CaseSpec, Claim, Spec
from ncuverify.spec.npy import planned_arguments


def qualified(key: str, case: str) -> str:
    return f"{key}{SEP}{case}"


@dataclass(frozen=True)
class FileCases:
    """One file's part of a run: its key (a name unique in the run), spec, builds and profiler claims."""

    key: str
    spec: Spec
    builds: dict[str, KernelBuild]
    claims: list[Claim]


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
            wanted = {ref.name} if is_ncu_metric(ref) else set()
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
    wanted: list[schedule.ProfiledCase] = []
    written: set[Path] = set()
    for number, file in enumerate(files):
        runs = with_earlier_steps(file.spec, case_metrics(file.spec, file.claims))
        for name in runs:
            case = file.spec.content.cases[name]
            # numbered, not named: a file's key is a path, which may hold any character
            cubin = cubins / f"{number}.{case.kernel}.cubin"
            if cubin not in written:
                write_file(cubin, file.builds[case.kernel].cubin)
                written.add(cubin)
            full = qualified(file.key, name)
            sequence = file.spec.content.sequence_of(name)
            planned[full] = planned_case(
                full,
                case,
                file.builds[case.kernel],
                cubin,
                file.spec.path.parent,
                qualified(file.key, sequence) if sequence is not None else "",
            )
        wanted += _profiled(file, runs)
    return planned, wanted


def with_earlier_steps(spec: Spec, needs: dict[str, set[str]]) -> dict[str, set[str]]:
    """The cases to run for these needs, in file order: each step of a sequence with the steps before
    it (which need no metric of their own)."""
    runs = {step: set[str]() for name in needs for step in spec.content.sequence_steps(name)}
    return {name: needs.get(name, set()) for name in spec.content.cases if name in runs}


def _profiled(file: FileCases, runs: dict[str, set[str]]) -> list[schedule.ProfiledCase]:
    """What the schedule places: a case of its own, or a sequence's steps as one (one process, in
    order), needing what its steps need."""
    content = file.spec.content
    by_sequence: dict[str, list[str]] = {}
    for name in runs:
        by_sequence.setdefault(content.sequence_steps(name)[0], []).append(name)
    profiled = []
    for first, steps in by_sequence.items():
        cases = [content.cases[step] for step in steps]
        profiled.append(
            schedule.ProfiledCase(
                qualified(file.key, first),
                sum(case.repeat for case in cases),
                frozenset().union(*(runs[step] for step in steps)),
                any(getattr(arg, "name", None) for case in cases for arg in case.args),
                tuple(qualified(file.key, step) for step in steps) if len(steps) > 1 else (),
            )
        )
    return profiled


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


def is_ncu_metric(ref: MetricRef) -> bool:
    """Whether ncu measures this name (rather than the build, or the runner reading a buffer back)."""
    return not (is_static(ref) or ref.name.startswith(BUFFER_PREFIX))
