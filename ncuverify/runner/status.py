"""Each case's outcome as the runner writes it in the plan's status file, and the reading of such a
file back, refusing what the runner cannot have written."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ncuverify.names import BUFFER_PREFIX

# How a case's error begins where CUDA itself could not start (no driver, no device): not the case's fault.
CUDA_DID_NOT_START = "CUDA could not start"
# Why a step of a sequence did not run: one before it failed, and it would read what that one left.
AFTER_FAILED_STEP = "not run: an earlier step of its sequence failed"
# How the error begins of a case that the runner, run without ncu, would not measure (runner/facts.py):
# ncu profiles it instead.
NEEDS_NCU = "needs ncu"
# Far above any case's repeat: a bound on what a damaged status can make its reader expect.
MAX_LAUNCHES = 10_000


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
        if not (key.startswith(BUFFER_PREFIX) and len(key) <= _MAX_NAME):
            raise StatusError(
                f"{where}: {_shown(key)} is not a buffer read back ({BUFFER_PREFIX}NAME.STATISTIC)"
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
