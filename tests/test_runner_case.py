"""One case on a launcher that plays a GPU: its buffers placed and filled, its scalars typed, its kernel
given all of them, what its named buffers held, and its memory freed however it ends."""

import numpy as np
import pytest
from fake_launcher import ILLEGAL_ADDRESS, CUDAError, FakeKernel, FakeLauncher, case_number
from planned_arguments import planned_args, planned_buffer

from ncuverify.runner.case import BufferView, run_case
from ncuverify.runner.fills import host_contents
from ncuverify.runner.plan import PlannedCase


def planned(name: str, args: list[dict], repeat: int = 1, shared_bytes: int = 0) -> PlannedCase:
    return PlannedCase(name, "/k.cubin", "k", (2, 1, 1), (64, 1, 1), shared_bytes, planned_args(args), repeat)


class Recorded(FakeLauncher):
    """Keeps the arguments of each launch."""

    given: list[list] | None = None

    def launch(self, kernel, case, args) -> None:
        self.given = [*(self.given or []), list(args)]
        super().launch(kernel, case, args)


def test_the_kernel_gets_its_buffers_at_their_offsets_and_its_scalars_in_their_types():
    fake = Recorded(0)
    case = planned(
        "c",
        [
            {"buffer": "float32", "count": 4, "offset": 2, "fill": "constant", "value": 1.5, "name": "x"},
            {"int32": 3},
            {"buffer": "uint8", "count": 6},
            {"float64": 0.25},
        ],
        shared_bytes=64 * 1024,
    )
    values = run_case(fake, case)
    assert fake.kernels == [FakeKernel("/k.cubin", "k", 64 * 1024)]
    [[x, three, plain, quarter]] = fake.given or []
    [x_base, plain_base] = fake.memory
    assert x == BufferView(x_base + 2 * 4, 4 * 4) and plain == BufferView(plain_base, 6)
    assert type(three) is np.int32 and three == 3
    assert type(quarter) is np.float64 and quarter == 0.25
    # The bytes before the offset are zeroed, the contents start at it, the kernel added its number.
    assert fake.memory[x_base][:8].tolist() == [0] * 8
    assert fake.memory[x_base][8:24].view(np.float32).tolist() == [1.5 + case_number("c")] * 4
    assert values["buffer__x.max"] == 1.5 + case_number("c") and len(values) == 6
    assert sorted(fake.freed) == [x_base, plain_base]


def test_a_buffer_the_case_fills_with_random_values_is_given_them_before_the_launch():
    class Before(FakeLauncher):
        seen: np.ndarray | None = None

        def launch(self, kernel, case, args) -> None:
            [view] = args
            self.seen = self._view(view.address, 5, np.dtype("int64")).copy()
            super().launch(kernel, case, args)

    fake = Before(0)
    run_case(fake, planned("r", [{"buffer": "int64", "count": 5, "fill": "random", "seed": 3}]))
    expected = host_contents(planned_buffer({"buffer": "int64", "count": 5, "fill": "random", "seed": 3}))
    assert fake.seen is not None and fake.seen.tolist() == expected.tolist()


def test_the_statistics_of_each_launch_are_taken_and_their_median_kept():
    fake = FakeLauncher(0)
    values = run_case(fake, planned("m", [{"buffer": "int32", "count": 3, "name": "t"}], repeat=4))
    own = case_number("m")
    # Launch k leaves k * own in every element; the median of 1..4 is 2.5.
    assert values == {
        "buffer__t.first": 2.5 * own,
        "buffer__t.sum": 3 * 2.5 * own,
        "buffer__t.mean": 2.5 * own,
        "buffer__t.min": 2.5 * own,
        "buffer__t.max": 2.5 * own,
        "buffer__t.median": 2.5 * own,
    }
    assert fake.launches == ["m"] * 4


@pytest.mark.parametrize(
    ("fake", "error"),
    [
        (FakeLauncher(0, faults=frozenset({"f"})), ILLEGAL_ADDRESS),
        (FakeLauncher(0, refused=frozenset({"f"})), "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"),
        (FakeLauncher(0, unreadable=frozenset({"f"})), "CUDA_ERROR_INVALID_VALUE"),
    ],
    ids=["fault", "refused", "readback"],
)
def test_a_case_that_fails_frees_its_buffers_and_raises_the_error(fake: FakeLauncher, error: str):
    args = [{"buffer": "float32", "count": 8, "name": "a"}, {"buffer": "float32", "count": 8}]
    with pytest.raises(RuntimeError, match=error):
        run_case(fake, planned("f", args))
    assert sorted(fake.freed) == sorted(fake.memory) and len(fake.freed) == 2


def test_a_poisoned_context_fails_the_next_case_before_anything_is_placed():
    fake = FakeLauncher(0, faults=frozenset({"f"}))
    with pytest.raises(CUDAError):
        run_case(fake, planned("f", [{"buffer": "float32", "count": 8}]))
    with pytest.raises(CUDAError, match=ILLEGAL_ADDRESS):
        run_case(fake, planned("next", [{"buffer": "float32", "count": 8}]))
    assert not fake.usable() and len(fake.memory) == 1


def test_a_buffer_that_cannot_be_filled_is_freed_with_those_before_it():
    class FillFails(FakeLauncher):
        def fill(self, address, size, offset, contents) -> None:
            if len(self.memory) == 2:
                raise RuntimeError("CUDA_ERROR_OUT_OF_MEMORY: out of memory")
            super().fill(address, size, offset, contents)

    fake = FillFails(0)
    with pytest.raises(RuntimeError, match="OUT_OF_MEMORY"):
        run_case(fake, planned("f", [{"buffer": "float32", "count": 8}] * 3))
    assert fake.freed == list(fake.memory) and len(fake.freed) == 2 and fake.launches == []


def test_a_struct_is_given_as_its_bytes_with_a_later_buffer_s_address_in_its_pointer_field():
    from ncuverify.runner.case import ParameterBytes

    fake = Recorded(0)
    struct = {"struct": [{"float32": 2.0}, {"pointer": "out"}]}
    out = {"buffer": "int32", "count": 4, "name": "out", "passed": False}
    values = run_case(fake, planned("s", [struct, {"bfloat16": 1.5}, out]))
    [[packed, half]] = fake.given or []  # the pointed-to buffer is no parameter of its own
    [out_base] = fake.memory
    assert packed == ParameterBytes(np.float32(2.0).tobytes() + b"\0" * 4 + out_base.to_bytes(8, "little"))
    assert half == ParameterBytes(b"\xc0\x3f")
    assert values["buffer__out.max"] == 0  # read back though the kernel was not given it
