"""The profile stage, for the whole run: the profile of every file whose claims wait for one, replayed
from a recording or measured by ncu (`session`), split back per file."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path

from ncuverify.environment import Environment, Gpu
from ncuverify.errors import EnvironmentProblem, InputError
from ncuverify.internal import isolated
from ncuverify.measurements import Measurements
from ncuverify.options import CheckOptions
from ncuverify.profile import kinds, per_file, plan, recording, session
from ncuverify.profile.command import NcuOptions
from ncuverify.profile.run import Run
from ncuverify.profile.schedule import PassCounts
from ncuverify.profile.work import is_driver_command
from ncuverify.stages import reuse
from ncuverify.stages.live_provenance import live_provenance
from ncuverify.stages.values import Prepared, Profiled


def not_profiled(internal_error: str) -> Profiled:
    """A bug while profiling: every waiting file's, their static verdicts kept."""
    return Profiled(internal_error=internal_error)


def profile_waiting(
    waiting: list[Prepared], options: CheckOptions, environment: Environment, work_dir: Path
) -> Profiled:
    """The profile of every waiting file: replayed from a recording, or from one run of ncu per group."""
    if not waiting:
        return Profiled()
    files = file_cases(waiting)
    keys = [p.key.name for p in waiting]
    try:
        if options.from_profile is not None:
            recorded = recording.load(options.from_profile, [p.key for p in waiting])
            measured, failed = _per_file(kinds.replayed(recorded.runs, files), keys)
            return Profiled(measured, recorded.provenance, replayed=True, internal_errors=failed)
        gpu = _usable_gpu(environment)
        settings = profile_settings(options, environment)
        # asked before the run: the measurement keys hold the GPU and ncu's version
        provenance = live_provenance(gpu, settings.ncu, [], files)
        reused = reuse.reused(options.reuse, files, provenance.measurement_keys, [p.key for p in waiting])
        runs, everything = _profiled(reused.files, work_dir, settings, options.allow_programs)
        warnings = _remember_passes(options.passes) + reused.warnings
        # ncu's command as its first process ran it (a process without ncu is the runner's alone)
        first = [run for run in [*runs, *reused.runs] if not is_driver_command(run.command)][:1]
        provenance = replace(provenance, ncu_command=first[0].command if first else [])
        if options.save_profile is not None:
            recording.save(work_dir, [*reused.runs, *runs], provenance)
        measured, failed = _per_file(lambda some: per_file.by_file(everything, some), keys)
        return Profiled(
            reused.merged(measured),
            provenance,
            internal_errors=failed,
            warnings=warnings,
            reused=reused.marks,
        )
    except EnvironmentProblem as problem:
        return Profiled(problem=str(problem))
    except InputError as error:
        return Profiled(input_error=str(error))


def _profiled(
    files: list[plan.FileCases], work_dir: Path, settings: session.Settings, allow_programs: bool
) -> tuple[list[Run], Measurements]:
    """Every case of the files profiled (those reused left out): their runs and measurements. Where
    every case is reused, no ncu process starts."""
    if any(file.reused for file in files) and not reuse.anything_to_profile(files):
        return [], Measurements.empty()
    return kinds.profiled(files, work_dir, settings, allow_programs)


def _per_file(
    split: Callable[[list[str]], dict[str, Measurements]], keys: list[str]
) -> tuple[dict[str, Measurements], dict[str, str]]:
    """split(keys) in one go; where that fails unexpectedly, each key alone, so that one file's failure
    is that file's internal error (key -> its line) and the other files keep their measurements."""
    try:
        return split(keys), {}
    except (EnvironmentProblem, InputError):
        raise
    except Exception:
        pass  # found again below, file by file
    measured: dict[str, Measurements] = {}
    failed: dict[str, str] = {}
    for key in keys:
        alone, line = isolated(
            partial(_split_alone, split, key), _not_split, (EnvironmentProblem, InputError)
        )
        measured.update(alone)
        if line is not None:
            failed[key] = line
    return measured, failed


def _split_alone(
    split: Callable[[list[str]], dict[str, Measurements]], key: str
) -> tuple[dict[str, Measurements], str | None]:
    return split([key]), None


def _not_split(internal_error: str) -> tuple[dict[str, Measurements], str | None]:
    return {}, internal_error


def _remember_passes(passes: PassCounts | None) -> tuple[str, ...]:
    """Save ncu's passes per metric set for the next run; a cache folder that cannot take them costs
    the next run a guess, not this run's measurements."""
    if passes is None:
        return ()
    try:
        passes.save()
    except OSError as error:
        return (f"ncu's passes per metric set could not be remembered ({error.strerror or error})",)
    return ()


def file_cases(waiting: list[Prepared]) -> list[plan.FileCases]:
    return [plan.FileCases(p.key.name, p.spec, p.builds or {}, p.waiting) for p in waiting]


def _usable_gpu(environment: Environment) -> Gpu:
    if environment.problem is not None or environment.ncu is None or environment.gpu is None:
        raise EnvironmentProblem(environment.problem or "ncu is not available")
    return environment.gpu


def profile_settings(options: CheckOptions, environment: Environment) -> session.Settings:
    gpus = options.gpus or (environment.gpu.index if environment.gpu else 0,)
    missing = [g for g in gpus if g >= max(environment.gpu_count, 1)]
    if missing:
        raise InputError(f"--gpus: no GPU {missing[0]} here (the driver reports {environment.gpu_count})")
    return session.Settings(
        ncu=ncu_options(options, environment),
        gpus=tuple(gpus),
        passes=options.passes,
        keep_report=options.keep_report,
        driver_facts=options.driver_facts,
        say=options.on_progress,
    )


def ncu_options(options: CheckOptions, environment: Environment) -> NcuOptions:
    """ncu's options as the run profiles with them: the ncu the machine offers, else the one asked for."""
    return replace(options.ncu, executable=environment.ncu or options.ncu.executable)
