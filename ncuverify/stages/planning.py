"""The dry run's stage: where a run would profile, what it would do instead. The files are prepared as
for a run, narrowed to its share, and stop before the build (nothing is compiled: the plan needs no
cubin; a case whose kernel's SASS would say whether it reads the clock is planned as one that does,
which only keeps it out of a shared process); the cases their profiler claims read are placed by the
run's own scheduler (`profile.plan`, `profile.schedule`), with the GPUs and the remembered passes the
run would use. With --reuse the files are built (through the compile cache), so that each case's
measurement key is computed as the run would, and the run's own decision (`stages.reuse`) says which
cases the recording gives: on this GPU, or where there is none, on the recording's."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ncuverify import __version__
from ncuverify.environment import Environment
from ncuverify.errors import InputError
from ncuverify.names import QualifiedCase
from ncuverify.options import CheckOptions
from ncuverify.profile import plan, programs, recording, schedule
from ncuverify.profile.measurement_keys import gpu_identity, measurement_keys
from ncuverify.provenance import Provenance
from ncuverify.results import FileKey, FileResult
from ncuverify.run_plan import PlannedBuild, PlannedCase, PlannedProcess, ReusedCase, RunPlan
from ncuverify.stages import reuse
from ncuverify.stages.live_provenance import live_provenance
from ncuverify.stages.profiling import file_cases, ncu_options
from ncuverify.stages.values import Prepared


def recorded_gpu(
    options: CheckOptions, environment: Environment, keys: Sequence[FileKey]
) -> tuple[CheckOptions, Provenance | None]:
    """With --reuse and no GPU here: the options that build for the recording's GPU (its architecture,
    unless --arch says otherwise), and the recording's provenance, which names that GPU; the options as
    they are otherwise, or where the recording cannot be read (the plan's reuse says why)."""
    if options.reuse is None or environment.gpu is not None or not keys:
        return options, None
    try:
        recorded = recording.load_provenance(options.reuse, keys[0])
    except InputError:
        return options, None
    return replace(options, arch=options.arch or recorded.arch), recorded


def planned_run(
    prepared: Sequence[Prepared | FileResult],
    options: CheckOptions,
    environment: Environment,
    recorded: Provenance | None = None,
) -> RunPlan:
    """What the run of these prepared files would build, reuse and profile; recorded: the provenance of
    --reuse's recording where no GPU is here (recorded_gpu)."""
    ready = [p for p in prepared if isinstance(p, Prepared)]
    failed = tuple(p for p in prepared if isinstance(p, FileResult))
    files = tuple(p.key.name for p in ready)
    builds = tuple(_builds(p) for p in ready)
    waiting = [p for p in ready if p.waiting]
    reused, notes = _reused(waiting, options, environment, recorded)
    cases = reused.files
    wanted = plan.profiled_cases(cases)
    profiled = tuple(replace(c, why=reused.why_not(c.file, c.case)) for c in _profiled_cases(cases, wanted))
    shard = options.shard or (1, 1)
    claims = tuple((p.key.name, claim.id) for p in ready for claim in p.spec.content.claims)
    taken = tuple(_reused_cases(cases))
    planned = RunPlan(
        shard,
        files,
        sum(builds, ()),
        taken,
        profiled,
        (),
        claims,
        built=options.reuse is not None,
        notes=notes,
        failed=failed,
    )
    if options.from_profile is not None:
        return replace(planned, replayed=True)
    passes = options.passes or schedule.PassCounts()
    gpus = options.gpus or (0,)
    units = schedule.units(wanted, gpus, passes, options.driver_facts)
    processes = [_process(unit, wanted, passes) for unit in units]
    processes += [_program_process(each, gpus[0], passes) for each in programs.planned_programs(cases)]
    return replace(planned, processes=tuple(processes))


def _reused(
    waiting: list[Prepared], options: CheckOptions, environment: Environment, recorded: Provenance | None
) -> tuple[reuse.Reused, tuple[str, ...]]:
    """The waiting files' cases, those --reuse's recording gives marked as the run marks them, and what
    the plan says of it: the GPU it planned for, why nothing is reused."""
    files = file_cases(waiting)
    if options.reuse is None:
        return reuse.Reused(files), ()
    keys, notes = _measurement_keys(files, options, environment, recorded)
    reused = reuse.reused(options.reuse, files, keys, [p.key for p in waiting])
    return reused, (*notes, *reused.warnings)


def _measurement_keys(
    files: list[plan.FileCases], options: CheckOptions, environment: Environment, recorded: Provenance | None
) -> tuple[dict[str, str], tuple[str, ...]]:
    """Each case's measurement key as the run would compute it: on this GPU, as the run does; with none
    here, on the recording's GPU, drivers and ncu, with this ncuverify and the ncu settings asked for."""
    if environment.gpu is not None:
        live = live_provenance(environment.gpu, ncu_options(options, environment), [], files)
        return live.measurement_keys, ()
    if recorded is None:  # the recording cannot be read: reuse says why
        return {}, ()
    assumed = replace(
        recorded,
        clock_control=options.ncu.clock_control,
        cache_control=options.ncu.cache_control,
        ncuverify_version=__version__,
    )
    note = f"no GPU here: planning for the recording's {recorded.machine()}"
    return measurement_keys(files, gpu_identity(assumed)), (note,)


def _reused_cases(files: Sequence[plan.FileCases]) -> list[ReusedCase]:
    """Each case whose recorded figures the run would take, in its file's order."""
    return [
        ReusedCase(file.key, name)
        for file in files
        for name in [*file.spec.content.cases, *file.spec.content.programs]
        if name in file.reused
    ]


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
    """A process of the schedule: its cases, and the launches and passes it would profile (none
    without ncu)."""
    launches = sum(each.launches for each in wanted if set(each.cases) & set(unit.cases))
    return PlannedProcess(
        unit.gpu,
        tuple(_split(case) for case in unit.cases),
        len(unit.metrics),
        passes.passes(unit.metrics) if unit.ncu else 0,
        launches,
        unit.alone,
        ncu=unit.ncu,
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
