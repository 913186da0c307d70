"""The stages in order: spec -> build -> profile -> judge. Each file is loaded, built and judged on its
static facts; then the profiler claims of all files are profiled in one go (`session`) and judged;
then failed claims on memory are explained. A bug that strikes while one file is handled is that
file's internal error: the other files are still judged."""

from __future__ import annotations

import concurrent.futures
import os
from collections.abc import Iterable
from dataclasses import replace
from functools import partial
from pathlib import Path

from ncuverify.environment import Environment
from ncuverify.internal import isolated
from ncuverify.options import CheckOptions
from ncuverify.results import FileKey, FileResult, run_keys
from ncuverify.run_plan import RunPlan
from ncuverify.stages import explaining, finish, planning, prepare, profiling, sharding
from ncuverify.stages.values import Prepared, Profiled
from ncuverify.stages.work_folder import work_folder


class Interrupted(Exception):
    """The run was interrupted (Ctrl-C); results holds every file, judged as far as it got."""

    def __init__(self, results: list[FileResult]) -> None:
        super().__init__("interrupted")
        self.results = results


def check_files(
    paths: Iterable[Path], options: CheckOptions, environment: Environment | None = None
) -> list[FileResult]:
    """Every file's result. Static claims are judged as each file is built; the profiler claims of all
    files are then profiled together. An unexpected exception while one file is prepared, split out of
    the profile or judged is that file's internal error; the others are still judged. On Ctrl-C,
    Interrupted with every file judged as far as it got. The environment is probed unless given."""
    paths = list(paths)
    keys = run_keys(paths)
    options = sharding.with_parts(paths, keys, options)
    prepared: list[Prepared | FileResult] = []
    try:
        environment = environment or Environment.probe(options.ncu.executable)
        _prepare_all(paths, keys, options, environment, prepared)
        waiting = [p for p in prepared if isinstance(p, Prepared) and p.waiting]
        with work_folder(options.save_profile) as work_dir:
            profiled = isolated(
                partial(profiling.profile_waiting, waiting, options, environment, work_dir),
                profiling.not_profiled,
            )
            results = [_finished(p, profiled) for p in prepared]
            return isolated(
                partial(
                    explaining.explain_failures, results, waiting, profiled, options, environment, work_dir
                ),
                partial(explaining.not_explained, results, waiting),
            )
    except KeyboardInterrupt:
        reason = "the run was interrupted before this file was checked"
        interrupted = Profiled(problem="the run was interrupted before these claims were profiled")
        finished = [_finished(p, interrupted) for p in prepared]
        later = zip(paths[len(prepared) :], keys[len(prepared) :], strict=True)
        finished += [FileResult(path, [], not_run=reason, key=key.name) for path, key in later]
        raise Interrupted(finished) from None


def plan_files(
    paths: Iterable[Path], options: CheckOptions, environment: Environment | None = None
) -> RunPlan:
    """What check_files would build, reuse and profile (its share, where sharded): every file read and
    prepared up to its build (built, with --reuse, for the measurement keys), and the profile stage's
    plan of its cases; nothing profiled."""
    paths = list(paths)
    keys = run_keys(paths)
    options = replace(sharding.with_parts(paths, keys, options), dry_run=True)
    environment = environment or Environment.probe(options.ncu.executable)
    options, recorded = planning.recorded_gpu(options, environment, keys)
    prepared: list[Prepared | FileResult] = []
    _prepare_all(paths, keys, options, environment, prepared)
    return planning.planned_run(prepared, options, environment, recorded)


def check_file(path: Path, options: CheckOptions, environment: Environment | None = None) -> FileResult:
    """One file's result: a run of one file."""
    return check_files([path], options, environment)[0]


def _prepare_all(
    paths: list[Path],
    keys: list[FileKey],
    options: CheckOptions,
    environment: Environment,
    prepared: list[Prepared | FileResult],
) -> None:
    """Every file prepared, appended to prepared in order. Files are built side by side: a build waits
    on its compiler and disassembler processes, so threads keep every core busy. On Ctrl-C, prepared
    holds the files before the first unfinished one; those still compiling stop within their limit."""
    workers = max(1, min(len(paths), os.cpu_count() or 1))
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ncuverify-build")
    try:
        futures = [
            pool.submit(
                isolated,
                partial(prepare.prepare_file, path, key, options, environment),
                partial(prepare.not_prepared, path, key),
            )
            for path, key in zip(paths, keys, strict=True)
        ]
        for future in futures:
            prepared.append(future.result())
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


def _finished(prepared: Prepared | FileResult, profiled: Profiled) -> FileResult:
    """The file's result: its profiler claims judged; one that ended while it was prepared, as it ended."""
    if isinstance(prepared, FileResult):
        return prepared
    return isolated(partial(finish.finish_file, prepared, profiled), partial(finish.not_finished, prepared))
