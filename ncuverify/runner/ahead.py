"""Each case's buffer contents, made one case ahead on a thread of their own.

Drawing a random fill of some hundred megabytes takes the runner's Python a few tenths of a second,
as long as ncu takes to profile a small kernel. So while one case launches and ncu replays it, the
next case's contents are made; the first case's are made while CUDA starts and the process waits
for its turn on the GPU. numpy draws and converts with the interpreter's lock released, and the launch
loop waits in CUDA, so the two rarely contend.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np

from ncuverify.npy_files import storage_dtype
from ncuverify.runner.fills import host_contents
from ncuverify.runner.plan import PlannedBuffer, PlannedCase

# The host memory one case's contents may take to be made ahead; a larger case makes them as it fills.
AHEAD_BYTES = 2**29

# A buffer's contents as the case's fill asks for them: None for zeros; what making them raised is
# raised again where the buffer is filled, so that the case fails as it would have without this.
Made = np.ndarray | None | BaseException
# Each buffer's contents of one case, by the argument's position.
Contents = Callable[[int, PlannedBuffer], np.ndarray | None]


def made_here(position: int, arg: PlannedBuffer) -> np.ndarray | None:
    """A buffer's contents made as it is filled, nothing ahead."""
    return host_contents(arg)


class ContentsAhead:
    """The contents of each case of a plan, one case ahead of the one being launched."""

    def __init__(self, cases: Sequence[PlannedCase], limit_bytes: int = AHEAD_BYTES) -> None:
        self._cases = cases
        self._limit = limit_bytes
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="contents")
        self._made: dict[int, Future[dict[int, Made]]] = {}
        self._ahead(0)

    def contents(self, index: int) -> Contents:
        """The contents of case index's buffers (made ahead where they were); makes the next case's."""
        future = self._made.pop(index, None)
        made = future.result() if future is not None else None
        self._ahead(index + 1)  # after: two cases' contents at most are held at once
        if made is None:
            return made_here
        return lambda position, arg: _given(made[position])  # every buffer argument is made ahead

    def close(self) -> None:
        """Stop making contents that no case will take (the plan ended early)."""
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _ahead(self, index: int) -> None:
        if index < len(self._cases) and _host_bytes(self._cases[index]) <= self._limit:
            self._made[index] = self._pool.submit(_make, self._cases[index])


def _make(case: PlannedCase) -> dict[int, Made]:
    made: dict[int, Made] = {}
    for position, arg in enumerate(case.args):
        if isinstance(arg, PlannedBuffer):
            try:
                made[position] = host_contents(arg)
            except Exception as error:  # raised again where the buffer is filled
                made[position] = error
    return made


def _given(made: Made) -> np.ndarray | None:
    if isinstance(made, BaseException):
        raise made
    return made


def _host_bytes(case: PlannedCase) -> float:
    """The host memory the case's contents take: its buffers that are not zeros. Infinite where a
    buffer is not one the runner can fill: the case says why as it fills it."""
    try:
        return sum(
            arg.count * storage_dtype(arg.buffer).itemsize
            for arg in case.args
            if isinstance(arg, PlannedBuffer) and arg.fill != "zeros"
        )
    except (TypeError, ValueError):
        return float("inf")
