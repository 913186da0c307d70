"""The program that Nsight Compute profiles: `python -m ncuverify.runner PLAN.json`.

It loads the cubins through cuda-python, allocates and fills each case's buffers, launches the case's
kernel once, synchronizes and checks every call. It prints nothing on stdout (ncu's report is read from
its own log file, but a quiet runner keeps any console clean) and records each case's outcome in the
plan's status file, rewritten after every case so that a crash loses nothing already launched.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

# Which case is running or has just ended: rewritten at each case's start and end, so that the caller
# can stop a case that never ends, and a process that makes no progress at all.
PROGRESS_FILE = "progress.json"
# Read back from a named buffer: buffer__<name>.<statistic>.
READBACK_PREFIX = "buffer__"
# Far above any case's repeat: a bound on what a damaged status can make its reader expect.
MAX_LAUNCHES = 10_000
# Random integer fills stay small so that index buffers and sums are well defined in any integer type.
RANDOM_INT_LIMIT = 2**15
# Launches may use this much dynamic shared memory without opting in.
DEFAULT_DYNAMIC_SHARED_LIMIT = 48 * 1024
# Every buffer starts on this boundary (cudaMalloc guarantees 256 B); `offset` moves the pointer from it.
BUFFER_ALIGNMENT = 512


@dataclass(frozen=True)
class PlannedCase:
    name: str
    cubin: str
    symbol: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared_bytes: int
    args: list[dict[str, Any]]
    repeat: int = 1


@dataclass
class Plan:
    """What the runner launches, written as JSON by the profile stage."""

    device: int
    status_path: str
    cases: list[PlannedCase] = field(default_factory=list)

    def write(self, path: Path) -> None:
        path.write_text(json.dumps(asdict(self), indent=1))

    @classmethod
    def read(cls, path: Path) -> Plan:
        data = json.loads(path.read_text())
        cases = [
            PlannedCase(**{**c, "grid": tuple(c["grid"]), "block": tuple(c["block"])}) for c in data["cases"]
        ]
        return cls(device=data["device"], status_path=data["status_path"], cases=cases)


class StatusError(ValueError):
    """A status that the runner cannot have written; the message names the entry and field."""


@dataclass(frozen=True)
class CaseStatus:
    """One case's outcome, as the runner writes it in the plan's status file (a JSON list of these).

    A case that ran has ok, its kernel, how many times it was launched and what its named buffers
    held afterwards. One that did not has its error; context_lost and not_run say that it ended its
    process, and which cases of the plan did not run there. Absent fields stay absent in the JSON, so
    that a status read and written again is the same text.
    """

    case: str
    ok: bool
    error: str | None = None
    kernel: str | None = None
    launches: int | None = None
    values: dict[str, float] | None = None  # buffer__<name>.<statistic> -> value
    context_lost: bool = False
    not_run: tuple[str, ...] | None = None

    @property
    def launch_count(self) -> int:
        """How many launches of the case ncu profiled (recordings of early versions omit it: one)."""
        return self.launches if self.launches is not None else 1

    def failed(self, error: str) -> CaseStatus:
        """This case, failed with error; its launches and values are dropped."""
        return CaseStatus(self.case, False, error, self.kernel, None, None, self.context_lost, self.not_run)

    def to_json(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"case": self.case}
        if self.kernel is not None:
            entry["kernel"] = self.kernel
        entry["ok"] = self.ok
        entry["error"] = self.error
        if self.launches is not None:
            entry["launches"] = self.launches
        if self.values is not None:
            entry["values"] = dict(self.values)
        if self.context_lost:
            entry["context_lost"] = True
        if self.not_run is not None:
            entry["not_run"] = list(self.not_run)
        return entry

    @classmethod
    def from_json(cls, data: object, where: str = "") -> CaseStatus:
        """The status of one case; StatusError naming the field (after where, e.g. "[3]") if data is
        not one the runner writes."""
        if not isinstance(data, dict):
            raise StatusError(f"{where or 'the entry'}: not an object")
        unknown = sorted(str(key) for key in data if key not in _STATUS_KEYS)
        if unknown:
            raise StatusError(f"{where}.{_shown(unknown[0])}: not a field of a runner status")
        case = _string(data, "case", where)
        ok = data.get("ok")
        if not isinstance(ok, bool):
            raise StatusError(f"{where}.ok: not true or false")
        error = _optional_string(data, "error", where)
        if not ok and error is None:
            raise StatusError(f"{where}.error: a case that did not run needs its error")
        launches = data.get("launches")
        if launches is not None and not (
            isinstance(launches, int) and not isinstance(launches, bool) and 1 <= launches <= MAX_LAUNCHES
        ):
            raise StatusError(f"{where}.launches: not a whole number from 1 to {MAX_LAUNCHES}")
        context_lost = data.get("context_lost", False)
        if not isinstance(context_lost, bool):
            raise StatusError(f"{where}.context_lost: not true or false")
        return cls(
            case=case,
            ok=ok,
            error=error,
            kernel=_optional_string(data, "kernel", where),
            launches=launches,
            values=_values(data.get("values"), f"{where}.values"),
            context_lost=context_lost,
            not_run=_names(data.get("not_run"), f"{where}.not_run"),
        )


_STATUS_KEYS = {"case", "ok", "error", "kernel", "launches", "values", "context_lost", "not_run"}
# Longer names or errors than these are no runner's: a bound on what a damaged status can make us hold.
_MAX_NAME = 4096
_MAX_ERROR = 64 * 1024


def read_statuses(text: str) -> list[CaseStatus]:
    """A status file's text as CaseStatus, in order; StatusError if it is not one the runner writes."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as error:
        raise StatusError(f"not JSON ({_json_problem(error)})") from None
    if not isinstance(data, list):
        raise StatusError("not a list of cases")
    statuses = [CaseStatus.from_json(entry, f"[{index}]") for index, entry in enumerate(data)]
    seen: set[str] = set()
    for index, status in enumerate(statuses):
        if status.case in seen:
            raise StatusError(f"[{index}].case: {_shown(status.case)} appears twice")
        seen.add(status.case)
    return statuses


def statuses_json(statuses: list[CaseStatus], indent: int | None = None) -> str:
    return json.dumps([status.to_json() for status in statuses], indent=indent)


def _json_problem(error: BaseException) -> str:
    return "nested too deeply" if isinstance(error, RecursionError) else str(error)


def _shown(text: str) -> str:
    """A name from a status, quoted and shortened for a message (escapes made visible by repr)."""
    return repr(text if len(text) <= 80 else text[:77] + "...")


def _string(data: Mapping[str, object], key: str, where: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value:
        raise StatusError(f"{where}.{key}: not a name")
    if len(value) > _MAX_NAME:
        raise StatusError(f"{where}.{key}: longer than {_MAX_NAME} characters")
    return value


def _optional_string(data: Mapping[str, object], key: str, where: str) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise StatusError(f"{where}.{key}: not a string or null")
    if len(value) > _MAX_ERROR:
        raise StatusError(f"{where}.{key}: longer than {_MAX_ERROR} characters")
    return value


def _values(data: object, where: str) -> dict[str, float] | None:
    if data is None:
        return None
    if not isinstance(data, dict):
        raise StatusError(f"{where}: not an object")
    values = {}
    for key, value in data.items():
        if not (key.startswith(READBACK_PREFIX) and len(key) <= _MAX_NAME):
            raise StatusError(
                f"{where}: {_shown(key)} is not a buffer read back ({READBACK_PREFIX}NAME.STATISTIC)"
            )
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise StatusError(f"{where}.{key}: not a number")
        values[key] = float(value)
    return values


def _names(data: object, where: str) -> tuple[str, ...] | None:
    if data is None:
        return None
    if not isinstance(data, list) or not all(isinstance(name, str) and name for name in data):
        raise StatusError(f"{where}: not a list of case names")
    return tuple(data)


@dataclass(frozen=True)
class Progress:
    """What the runner is doing: which case it started last, whether that case still runs, and
    whether every case has ended. step counts the writes, so that each differs from the last."""

    case: str | None
    running: bool
    done: bool
    step: int

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> Progress | None:
        """The progress in text; None where it is not the runner's."""
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):
            return None
        if not isinstance(data, dict):
            return None
        case, running, done, step = (data.get(key) for key in ("case", "running", "done", "step"))
        if not (case is None or isinstance(case, str)) or not isinstance(step, int):
            return None
        if not isinstance(running, bool) or not isinstance(done, bool):
            return None
        return cls(case, running, done, step)


def host_contents(arg: dict[str, Any]) -> np.ndarray | None:
    """The initial contents of a buffer as the kernel sees them; None for zeros (memset on the device)."""
    dtype = np.dtype(arg["buffer"])
    count = arg["count"]
    fill = arg.get("fill", "zeros")
    if fill == "zeros":
        return None
    if fill == "constant":
        return np.full(count, arg["value"], dtype=dtype)
    if fill == "iota":
        return np.arange(count, dtype=np.int64).astype(dtype)
    generator = np.random.default_rng(arg.get("seed", 0))
    if dtype.kind == "f":
        values = generator.random(count, dtype=np.float32 if dtype.itemsize <= 4 else np.float64)
        return np.asarray(values).astype(dtype)
    high = min(RANDOM_INT_LIMIT, int(np.iinfo(dtype).max) + 1)
    return generator.integers(0, high, size=count, dtype=np.int64).astype(dtype)


SCALAR_DTYPES = {
    "int32": np.int32,
    "uint32": np.uint32,
    "int64": np.int64,
    "uint64": np.uint64,
    "float32": np.float32,
    "float64": np.float64,
}


class _Launcher:
    """Holds the CUDA context, stream and loaded modules for one run."""

    def __init__(self, device_index: int) -> None:
        from cuda.core import Device

        self.device = Device(device_index)
        self.device.set_current()
        self.stream = self.device.create_stream()
        self.modules: dict[str, Any] = {}

    def usable(self) -> bool:
        """Whether the context survived the last error (an illegal address or a trap poisons it)."""
        from cuda.bindings import driver

        try:
            (result,) = driver.cuCtxSynchronize()
        except Exception:
            return False
        return result == driver.CUresult.CUDA_SUCCESS

    def kernel(self, cubin: str, symbol: str) -> Any:
        from cuda.core import ObjectCode

        if cubin not in self.modules:
            self.modules[cubin] = ObjectCode.from_cubin(Path(cubin).read_bytes())
        return self.modules[cubin].get_kernel(symbol)

    def run(self, case: PlannedCase) -> dict[str, float]:
        """Launch the case; return what its named buffers held afterwards (median over launches)."""
        from cuda.core import LaunchConfig, launch

        kernel = self.kernel(case.cubin, case.symbol)
        if case.shared_bytes > DEFAULT_DYNAMIC_SHARED_LIMIT:
            self._allow_dynamic_shared(kernel, case.shared_bytes)
        allocations: list[Any] = []
        readbacks: list[_Readback] = []
        try:
            args = [self._argument(arg, allocations, readbacks) for arg in case.args]
            self.stream.sync()  # fills are complete before the profiled launches
            config = LaunchConfig(grid=case.grid, block=case.block, shmem_size=case.shared_bytes)
            per_launch: list[dict[str, float]] = []
            for _ in range(case.repeat):
                launch(self.stream, config, kernel, *args)
                self.stream.sync()
                per_launch.append({k: v for r in readbacks for k, v in r.statistics().items()})
        finally:
            for buffer in allocations:
                buffer.close(self.stream)
        return {key: float(np.median([values[key] for values in per_launch])) for key in per_launch[0]}

    def _allow_dynamic_shared(self, kernel: Any, size: int) -> None:
        """Above 48 KB a kernel must opt in to dynamic shared memory."""
        from cuda.bindings import driver

        attribute = driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
        device = _value(driver.cuDeviceGet(self.device.device_id))
        _checked(driver.cuKernelSetAttribute(attribute, size, kernel.handle, device))

    def _argument(self, arg: dict[str, Any], allocations: list[Any], readbacks: list[_Readback]) -> Any:
        if "buffer" not in arg:
            (kind, value), *_ = arg.items()
            return SCALAR_DTYPES[kind](value)
        from cuda.bindings import driver
        from cuda.core import Buffer

        dtype = np.dtype(arg["buffer"])
        offset_bytes = arg.get("offset", 0) * dtype.itemsize
        size = offset_bytes + arg["count"] * dtype.itemsize
        owner = self.device.allocate(size + BUFFER_ALIGNMENT, stream=self.stream)
        allocations.append(owner)
        # Sector counts depend on where a buffer starts: align it ourselves, whatever the allocator gives.
        base = -(-int(owner.handle) // BUFFER_ALIGNMENT) * BUFFER_ALIGNMENT
        _checked(driver.cuMemsetD8Async(base, 0, size, self.stream.handle))
        contents = host_contents(arg)
        if contents is not None:
            self.stream.sync()
            _checked(driver.cuMemcpyHtoD(base + offset_bytes, contents.ctypes.data, contents.nbytes))
        if "name" in arg:
            readbacks.append(_Readback(arg["name"], base + offset_bytes, arg["count"], dtype))
        return Buffer.from_handle(base + offset_bytes, size - offset_bytes)


@dataclass(frozen=True)
class _Readback:
    """A named buffer, copied back to the host after each launch."""

    name: str
    address: int
    count: int
    dtype: np.dtype

    def statistics(self) -> dict[str, float]:
        from cuda.bindings import driver

        values = np.empty(self.count, dtype=self.dtype)
        _checked(driver.cuMemcpyDtoH(values.ctypes.data, self.address, values.nbytes))
        values = values.astype(np.float64)
        prefix = f"{READBACK_PREFIX}{self.name}."
        return {
            prefix + "first": values[0],
            prefix + "sum": values.sum(),
            prefix + "mean": values.mean(),
            prefix + "min": values.min(),
            prefix + "max": values.max(),
            prefix + "median": float(np.median(values)),
        }


def _value(result: Any) -> Any:
    """The value of a (error, value) result, raising on the error."""
    _checked(result)
    return result[1]


def _checked(result: Any) -> None:
    from cuda.bindings import driver

    error = result[0] if isinstance(result, tuple) else result
    if error != driver.CUresult.CUDA_SUCCESS:
        _, name = driver.cuGetErrorName(error)
        _, text = driver.cuGetErrorString(error)
        raise RuntimeError(f"{name.decode()}: {text.decode()}")


def run_plan(plan: Plan) -> list[CaseStatus]:
    """Launch every case in order; record each outcome as it ends, and the progress: the runner's
    start, each case's start and end, and the end of the plan.

    A fault that leaves the CUDA context unusable (an illegal address, a trap) ends the run after
    recording it: the cases after it are not tried here, and the caller runs them again in a fresh
    process.
    """
    status: list[CaseStatus] = []
    status_path = Path(plan.status_path)
    progress = _ProgressWriter(status_path.with_name(PROGRESS_FILE))
    progress.write(None, running=False)  # started: what follows is CUDA's start, then the cases
    try:
        launcher = _Launcher(plan.device)
    except Exception as error:
        status = [
            CaseStatus(c.name, False, f"CUDA could not start: {error}", kernel=c.symbol) for c in plan.cases
        ]
        _write_atomically(status_path, statuses_json(status))
        progress.write(None, running=False, done=True)
        return status
    for case in plan.cases:
        progress.write(case.name, running=True)
        try:
            values = launcher.run(case)
            status.append(CaseStatus(case.name, True, None, case.symbol, case.repeat, values))
        except Exception as error:
            status.append(CaseStatus(case.name, False, _one_line(error), kernel=case.symbol))
            if not launcher.usable():
                later = plan.cases[plan.cases.index(case) + 1 :]
                status[-1] = replace(status[-1], context_lost=True, not_run=tuple(c.name for c in later))
                _write_atomically(status_path, statuses_json(status))
                break
        _write_atomically(status_path, statuses_json(status))
        progress.write(case.name, running=False)
    progress.write(status[-1].case if status else None, running=False, done=True)
    return status


class _ProgressWriter:
    """Writes the runner's Progress, each write counted."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.step = 0

    def write(self, case: str | None, running: bool, done: bool = False) -> None:
        self.step += 1
        _write_atomically(self.path, Progress(case, running, done, self.step).to_json())


def _write_atomically(path: Path, text: str) -> None:
    """Write text to path so that a reader (or a kill) never meets half of it."""
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text)
    os.replace(partial, path)


def _one_line(error: Exception) -> str:
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m ncuverify.runner PLAN.json", file=sys.stderr)
        return 2
    try:
        run_plan(Plan.read(Path(argv[0])))
    except Exception:
        traceback.print_exc(file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
