"""Stage 3 for a whole run: every file's cases profiled together.

The cases of all files are profiled in as few ncu processes as the metrics allow (`schedule`), spread
over the GPUs given, each GPU's processes in a chain: the next one starts while the one before it
profiles, and launches once that one's cases have all run (`_gates`). A case is named `<file key>::<case>`
in the runner's plans and statuses, so that one process can hold the cases of many files and the
results split back per file (`per_file`). A case that faults or hangs ends its process; the cases
after it run again in a fresh one. Cases that need no ncu (their claims read only launch facts, or
buffers) run in a process of the runner alone, which follows the same chain and gates; a case that its
runner leaves to ncu runs in an ncu process after it, before the next process launches.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

from ncuverify.measurements import Measurements
from ncuverify.names import PASSES_METRIC, QualifiedCase
from ncuverify.profile import schedule
from ncuverify.profile.command import NcuOptions
from ncuverify.profile.diagnose import diagnose
from ncuverify.profile.faults import faults_named
from ncuverify.profile.passes import model_for
from ncuverify.profile.plan import FileCases, plan_cases
from ncuverify.profile.run import Gate, Run, run_ncu
from ncuverify.profile.shown import shown_output
from ncuverify.profile.work import DriverWork, KernelWork, run_measurements
from ncuverify.runner import AFTER_FAILED_STEP, NEEDS_NCU, CaseStatus, PlannedCase

_T = TypeVar("_T")
_R = TypeVar("_R")

RUNS = "runs"  # under the work folder: one folder per ncu process (plan, status, log, report)


@dataclass(frozen=True)
class Settings:
    """How the run profiles: ncu's options, the GPUs, what it knows of ncu's passes."""

    ncu: NcuOptions
    gpus: tuple[int, ...] = (0,)
    passes: schedule.PassCounts | None = None
    keep_report: bool = False  # also keep ncu's .ncu-rep of every process
    say: Callable[[str], None] | None = None
    driver_facts: bool = False  # True: cases that need no ncu run in a process of the runner alone


def profile_files(
    files: Sequence[FileCases], work_dir: Path, settings: Settings
) -> tuple[list[Run], Measurements]:
    """Profile every case the files' claims read: the runs of every ncu process, in a fixed order, and
    what they measured (cases under their qualified names)."""
    plan = scheduled(files, work_dir, settings)
    planned, units, passes = plan.planned, plan.units, plan.passes
    chains = {gpu: _chain([(i, u) for i, u in enumerate(units) if u.gpu == gpu]) for gpu in settings.gpus}
    stop = threading.Event()
    ncu = replace(settings.ncu, cancelled=stop.is_set)
    gates = _gates(chains, work_dir / RUNS, ncu.processes_per_gpu)

    def run(numbered: tuple[int, schedule.Unit]) -> tuple[int, list[_Measured]]:
        index, unit = numbered
        gate = gates.get(index)
        try:
            return index, _run_unit(unit, planned, work_dir / RUNS / f"{index}", ncu, settings, gate)
        finally:
            # Where the runner did not say so: the next process may launch, and this one's CUDA is done.
            for path in (gate.opens, gate.ready) if gate is not None else ():
                if path is not None:
                    path.touch()

    def run_gpu(gpu: int) -> list[tuple[int, list[_Measured]]]:
        """The GPU's units in their chain, several processes at once: the next one starts once one
        before it has ended or has run its cases (it has opened the gate after it)."""
        chain = chains[gpu]

        def released(at: int) -> bool:
            gate = gates.get(chain[at][0])
            return gate is not None and gate.opens is not None and gate.opens.exists()

        return _in_turn(run, chain, _starts_after(chain, ncu.processes_per_gpu), stop, released)

    done = _in_turn(run_gpu, list(chains), [0] * len(chains), stop)  # the GPUs at once
    measured_runs = [
        item
        for _, unit_runs in sorted((i for gpu in done for i in gpu), key=lambda item: item[0])
        for item in unit_runs
    ]
    measured = Measurements.empty()
    for _, part in measured_runs:
        measured = measured.combined(part)
    _learn_passes(passes, measured, units)
    return [run for run, _ in measured_runs], measured


@dataclass(frozen=True)
class Scheduled:
    """What a run will profile: every planned case (its cubins written), the cases the schedule placed,
    its units (one ncu process each), and the pass counts it weighed them by (with the pass model of
    the run's chip and ncu)."""

    planned: dict[str, PlannedCase]
    cases: list[schedule.ProfiledCase]
    units: list[schedule.Unit]
    passes: schedule.PassCounts

    def launch_passes(self) -> list[int]:
        """Each unit's predicted launch-passes: its launches times the passes of its metrics."""
        return [schedule.launch_passes(unit, self.cases, self.passes) for unit in self.units]


def scheduled(files: Sequence[FileCases], work_dir: Path, settings: Settings) -> Scheduled:
    """The run's schedule, its cubins written into work_dir."""
    planned, wanted = plan_cases(files, work_dir)
    passes = settings.passes or schedule.PassCounts()
    passes.model = model_for(_arch(files), settings.ncu.executable)
    units = schedule.units(wanted, settings.gpus, passes, settings.driver_facts)
    return Scheduled(planned, wanted, units, passes)


def _arch(files: Sequence[FileCases]) -> str | None:
    """The architecture the run's kernels are built for (one run profiles one GPU's)."""
    return next((build.arch for file in files for build in file.builds.values()), None)


def _chain(units: list[tuple[int, schedule.Unit]]) -> list[tuple[int, schedule.Unit]]:
    """The order in which a GPU's units run: a unit that must have the GPU to itself after the others,
    so that as few processes as may start early for it (their CUDA must have started before it
    launches)."""
    return [numbered for numbered in units if not numbered[1].alone] + [
        numbered for numbered in units if numbered[1].alone
    ]


def _starts_after(chain: Sequence[tuple[int, schedule.Unit]], processes_per_gpu: int) -> list[int]:
    """For each unit of a chain, how many units before it must have ended, or run their cases, before
    its process starts: processes_per_gpu at once (one: one after another, each once the one before
    has ended). With several, the units that must be alone all start with the last unit before them:
    their CUDA must have started before the first of them launches (its gate waits for them), and
    their starts (ncu, Python, CUDA: some seconds) hide behind the launches of the last two units
    before them, where behind the last one alone the GPU would wait for them. Until their turn their
    contexts stay idle, which is no work on the GPU."""
    if processes_per_gpu <= 1:
        return list(range(len(chain)))  # one after another: no gates
    first_alone = _first_alone(chain)
    alone_start = max(0, first_alone - processes_per_gpu)
    return [
        max(0, at - processes_per_gpu + 1) if at < first_alone else alone_start for at in range(len(chain))
    ]


def _first_alone(chain: Sequence[tuple[int, schedule.Unit]]) -> int:
    """Where the chain's units that must be alone begin (they come last); its length if none must."""
    return next((at for at, (_, unit) in enumerate(chain) if unit.alone), len(chain))


def _gates(
    chains: dict[int, list[tuple[int, schedule.Unit]]], folder: Path, processes_per_gpu: int
) -> dict[int, Gate]:
    """With several processes at once on a GPU, each unit's gate, and the next one's that it opens:
    the next process starts (ncu, the runner's Python, CUDA) while one profiles, but fills and launches
    only once that one's cases have all run, so that no two processes' fills or launches ever share
    the GPU. A unit that must be alone (its kernels time themselves) also waits for the CUDA of every
    unit after it to have started (their ready files): no context starts while it launches. The first
    gate is open; gates left by an earlier run in a kept profile's folder are removed."""
    if processes_per_gpu <= 1:
        return {}
    folder.mkdir(parents=True, exist_ok=True)
    gates: dict[int, Gate] = {}
    for chain in chains.values():
        paths = [folder / f"{index}.gate" for index, _ in chain]
        ready = [folder / f"{index}.ready" for index, _ in chain]
        for path in (*paths, *ready):
            path.unlink(missing_ok=True)
        if paths:
            paths[0].touch()
        first_alone = _first_alone(chain)
        for at, (index, unit) in enumerate(chain):
            following = paths[at + 1] if at + 1 < len(paths) else None
            waited = ready[at] if at > first_alone else None  # a unit before it that must be alone waits
            after = tuple(ready[at + 1 :]) if unit.alone else ()
            gates[index] = Gate(paths[at], opens=following, ready=waited, after_ready=after)
    return gates


def _in_turn(
    call: Callable[[_T], _R],
    items: Sequence[_T],
    starts_after: Sequence[int],
    stop: threading.Event,
    released: Callable[[int], bool] = lambda at: False,
) -> list[_R]:
    """call on each item, the results in the items' order; item i once each of the first
    starts_after[i] items has ended or is released (an ncu process whose cases have all run: what is
    left of it is its end, which holds no GPU work back). On Ctrl-C or a failure, stop is set: the ncu
    processes still running are stopped too, and items not yet begun are not begun."""
    ended: set[int] = set()
    turn = threading.Condition()

    def due(at: int) -> bool:
        return all(before in ended or released(before) for before in range(starts_after[at]))

    def when_due(at: int) -> _R:
        with turn:
            while not stop.is_set() and not due(at):
                turn.wait(timeout=_RELEASE_POLL_S)
            if stop.is_set():  # also where the item before ended as it failed: it set stop first
                raise _NotBegun
        try:
            return call(items[at])
        except BaseException:
            stop.set()  # at once: the items not begun wait for nothing more
            raise
        finally:
            with turn:
                ended.add(at)
                turn.notify_all()

    if not items:
        return []
    with ThreadPoolExecutor(max_workers=len(items)) as pool:
        return _gathered([pool.submit(when_due, at) for at in range(len(items))], stop)


# How often a waiting item looks again whether the items before it are released.
_RELEASE_POLL_S = 0.02


class _NotBegun(Exception):
    """An item that was not begun because the run stopped."""


def _gathered(futures: Sequence[Future[_R]], stop: threading.Event) -> list[_R]:
    """The futures' results in order. On the first failure (or Ctrl-C), stop is set, and the failure
    raised is the one that stopped the run, not an item that was then not begun."""
    try:
        return [future.result() for future in futures]
    except BaseException as error:
        stop.set()
        if isinstance(error, _NotBegun):
            for future in futures:
                cause = future.exception()
                if cause is not None and not isinstance(cause, _NotBegun):
                    raise cause from None
        raise


# A run and its measurements: parsed once, to find the cases to run again and to judge.
_Measured = tuple[Run, Measurements]


def _run_unit(
    unit: schedule.Unit,
    planned: dict[str, PlannedCase],
    folder: Path,
    ncu: NcuOptions,
    settings: Settings,
    gate: Gate | None = None,
) -> list[_Measured]:
    """One unit's ncu process, and one more for the cases after each case that faulted or hung; each
    launches once the gate is open. A unit without ncu: the runner's processes, then an ncu process for
    the cases it left to ncu (its runner kept the next gate shut for them)."""
    runs: list[_Measured] = []
    remaining = list(unit.cases)
    if settings.say is not None:
        say = settings.say
        ncu = replace(ncu, on_case=lambda case: say(f"profiling {_shown(case)}"))
    while remaining:
        cases = [planned[name] for name in remaining]
        run_dir = folder / str(len(runs))
        run = run_ncu(
            run_dir,
            cases,
            unit.metrics,
            ncu,
            device=unit.gpu,
            keep_report=settings.keep_report,
            gate=gate,
            driver=not unit.ncu,
        )
        diagnose(run)
        status = faults_named(list(run.cases), cases, run_dir, ncu, unit.gpu) or _runner_failure(
            run, remaining
        )
        work = _work(unit, cases, run_dir / "plan.json")
        recorded = replace(run, cases=tuple(status))
        measured = work.measurements(recorded)
        if run.stopped is not None and measured.unmeasured:
            recorded = replace(recorded, cases=_stopped(recorded.cases, measured.unmeasured, run.stopped))
            measured = work.measurements(recorded)
        remaining, held = _whole_sequences(_to_run_again(status, measured), recorded.cases, cases)
        if held:
            recorded = replace(recorded, cases=(*recorded.cases, *held))
            measured = work.measurements(recorded)
        runs.append((recorded, measured))
    if unit.ncu:
        return runs
    runs, left = _left_to_ncu(runs, planned)
    if not left:
        return runs
    under_ncu = replace(unit, cases=tuple(left), ncu=True)
    return runs + _run_unit(under_ncu, planned, folder / "ncu", ncu, settings)


def _work(unit: schedule.Unit, cases: Sequence[PlannedCase], plan_file: Path) -> KernelWork | DriverWork:
    if unit.ncu:
        return KernelWork.of(cases, unit.metrics, plan_file)
    return DriverWork.of(cases, unit.metrics, plan_file)


def _left_to_ncu(runs: list[_Measured], planned: dict[str, PlannedCase]) -> tuple[list[_Measured], list[str]]:
    """The runs of a process without ncu less the cases its runner left to ncu (they launched nothing
    there, and ncu's process records them), and those cases, in order."""
    kept: list[_Measured] = []
    left: list[str] = []
    for run, measured in runs:
        ours = [s for s in run.cases if not str(s.error).startswith(NEEDS_NCU)]
        left += [s.case for s in run.cases if str(s.error).startswith(NEEDS_NCU)]
        if len(ours) < len(run.cases):
            run = replace(run, cases=tuple(ours))
            measured = run_measurements(
                run, {s.case: planned[s.case].symbol for s in ours if s.case in planned}
            )
        kept.append((run, measured))
    return kept, left


def _shown(case: str) -> str:
    """A planned case as progress names it: `expectations/x.yaml: add`."""
    try:
        identity = QualifiedCase.parse(case)
    except ValueError:  # the runner's progress names only planned cases; any other as it is
        return case
    return f"{identity.file}: {identity.in_file(None)}" if identity.file is not None else case


def _whole_sequences(
    again: list[str], status: Sequence[CaseStatus], cases: Sequence[PlannedCase]
) -> tuple[list[str], list[CaseStatus]]:
    """The cases to run again, less the steps of a sequence whose earlier steps do not run again with
    them (a step reads what those left): where one of those failed, such a step fails with why."""
    reported = {s.case for s in status}
    earlier: dict[str, list[str]] = {}  # per sequence, its steps so far
    keep, held = [], []
    for case in cases:
        steps = earlier.setdefault(case.sequence, []) if case.sequence else []
        whole = all(step in again for step in steps)
        if case.name in again and whole:
            keep.append(case.name)
        elif case.name in again and case.name not in reported:  # a step after the one that ended it
            held.append(CaseStatus(case.name, False, AFTER_FAILED_STEP, kernel=case.symbol))
        steps.append(case.name)
    return keep, held


def _stopped(status: Sequence[CaseStatus], unmeasured: Sequence[str], reason: str) -> tuple[CaseStatus, ...]:
    """After ncu was stopped past the runner's last case: the cases its report lacks fail with why."""
    return tuple(s.failed(reason) if s.case in unmeasured else s for s in status)


def _to_run_again(status: list[CaseStatus], measured: Measurements) -> list[str]:
    """After a case poisoned or ended the process: the cases it kept from running or from being reported."""
    if not any(s.context_lost for s in status):
        return []
    done = {s.case for s in status}
    not_run = [case for s in status for case in s.not_run or ()]
    return [*measured.unmeasured, *(case for case in not_run if case not in done)]


def _runner_failure(run: Run, cases: list[str]) -> list[CaseStatus]:
    """The runner left no status: it never started. Every case fails with what it printed last, or
    where it printed nothing, with what ncu logged last (ncu's own last words say less of why)."""
    said = "no output"
    for text in (run.report, run.output):  # the runner's own output last: it wins where it said anything
        lines = [line for line in text.splitlines() if line.strip()]
        said = shown_output(lines[-1]) if lines else said
    reason = f"the runner did not start (exit {run.returncode}): {said}"
    return [CaseStatus(name, False, reason) for name in cases]


def _learn_passes(passes: schedule.PassCounts, measured: Measurements, units: list[schedule.Unit]) -> None:
    """Remember how many replay passes ncu needed for each unit's metrics, for the next run's grouping.
    Read from the rows: a table of the whole run's values would cost more than this whole step."""
    most: dict[str, int] = {}
    for case, _, metric, value, _ in measured.rows:
        if metric == PASSES_METRIC and not math.isnan(value):
            most[case] = max(most.get(case, 0), int(value))
    for unit in units:
        reported = [most[case] for case in unit.cases if case in most]
        if reported:
            passes.remember(unit.metrics, max(reported))
