"""The dry run's stage: where a run would profile, what it would do instead. The files are prepared as
for a run, narrowed to its share, and stop before the build (nothing is compiled: the plan needs no
cubin; a case whose kernel's SASS would say whether it reads the clock is planned as one that does,
which only keeps it out of a shared process); the cases their profiler claims read are placed by the
run's own scheduler (`profile.plan`, `profile.schedule`), with the GPUs and the remembered passes the
run would use."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ncuverify.names import QualifiedCase
from ncuverify.options import CheckOptions
from ncuverify.profile import plan, programs, schedule
from ncuverify.results import FileResult
from ncuverify.run_plan import PlannedBuild, PlannedCase, PlannedProcess, RunPlan
from ncuverify.stages.profiling import file_cases
from ncuverify.stages.values import Prepared


def planned_run(prepared: Sequence[Prepared | FileResult], options: CheckOptions) -> RunPlan:
    """What the run of these prepared files would build, reuse and profile."""
    ready = [p for p in prepared if isinstance(p, Prepared)]
    failed = tuple(p for p in prepared if isinstance(p, FileResult))
    files = tuple(p.key.name for p in ready)
    builds = tuple(_builds(p) for p in ready)
    waiting = [p for p in ready if p.waiting]
    cases = file_cases(waiting)
    wanted = plan.profiled_cases(cases)
    profiled = tuple(_profiled_cases(cases, wanted))
    shard = options.shard or (1, 1)
    claims = tuple((p.key.name, claim.id) for p in ready for claim in p.spec.content.claims)
    planned = RunPlan(shard, files, sum(builds, ()), (), profiled, (), claims, failed=failed)
    if options.from_profile is not None:
        return replace(planned, replayed=True)
    passes = options.passes or schedule.PassCounts()
    gpus = options.gpus or (0,)
    units = schedule.spread(schedule.groups(wanted, passes), wanted, gpus, passes)
    processes = [_process(unit, wanted, passes) for unit in units]
    processes += [_program_process(each, gpus[0], passes) for each in programs.planned_programs(cases)]
    return replace(planned, processes=tuple(processes))


def _builds(prepared: Prepared) -> tuple[PlannedBuild, ...]:
    """The file's kernel entries its share keeps, each as the run would build it."""
    kernels = prepared.spec.content.kernels
    return tuple(
        PlannedBuild(prepared.key.name, key, kernel.entry, kernel.arch or prepared.arch)
        for key, kernel in kernels.items()
    )


def _split(name: str) -> tuple[str, str]:
    """A qualified case name as (file key, case)."""
    identity = QualifiedCase.parse(name)
    return identity.file or "", str(identity.in_file(None))


def _profiled_cases(
    files: Sequence[plan.FileCases], wanted: list[schedule.ProfiledCase]
) -> list[PlannedCase]:
    """Each case profiled once (its repeats profiled apart or not), and each program case, in the run's
    order, with the launches it would profile."""
    specs = {file.key: file.spec for file in files}
    launches: dict[str, int] = {}
    metrics: dict[str, set[str]] = {}
    for each in wanted:
        for case in each.cases:
            name = str(QualifiedCase.parse(case).without_repeats())
            key, step = _split(name)
            alone = each.launches if len(each.cases) == 1 else specs[key].content.cases[step].repeat
            launches[name] = launches.get(name, 0) + alone
            metrics.setdefault(name, set()).update(each.metrics)
    planned = [PlannedCase(*_split(name), launches[name], len(metrics[name])) for name in launches]
    planned += [
        PlannedCase(*_split(program.name), program.case.launch_count, len(program.metrics))
        for program in programs.planned_programs(files)
    ]
    return planned


def _process(
    unit: schedule.Unit, wanted: list[schedule.ProfiledCase], passes: schedule.PassCounts
) -> PlannedProcess:
    """An ncu process of the schedule: its cases, and the launches and passes it would profile."""
    launches = sum(each.launches for each in wanted if set(each.cases) & set(unit.cases))
    return PlannedProcess(
        unit.gpu,
        tuple(_split(case) for case in unit.cases),
        len(unit.metrics),
        passes.passes(unit.metrics),
        launches,
        unit.alone,
    )


def _program_process(
    program: programs.PlannedProgram, gpu: int, passes: schedule.PassCounts
) -> PlannedProcess:
    """A program case's own ncu process, on the run's first GPU."""
    return PlannedProcess(
        gpu,
        (_split(program.name),),
        len(program.metrics),
        passes.passes(program.metrics),
        program.case.launch_count,
        program=True,
    )
