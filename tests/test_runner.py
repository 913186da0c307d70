"""The runner's host side: buffer contents and the plan's round trip (launching needs a GPU: test_gpu)."""

import numpy as np

from ncuverify.runner import RANDOM_INT_LIMIT, Plan, PlannedCase, host_contents


def test_fills():
    assert host_contents({"buffer": "float32", "count": 4}) is None  # zeros: a memset on the device
    assert host_contents({"buffer": "int32", "count": 4, "fill": "iota"}).tolist() == [0, 1, 2, 3]
    constant = host_contents({"buffer": "float16", "count": 3, "fill": "constant", "value": 2.5})
    assert constant.dtype == np.float16 and constant.tolist() == [2.5, 2.5, 2.5]


def test_random_fills_are_seeded_and_bounded():
    first = host_contents({"buffer": "float32", "count": 1000, "fill": "random", "seed": 7})
    again = host_contents({"buffer": "float32", "count": 1000, "fill": "random", "seed": 7})
    other = host_contents({"buffer": "float32", "count": 1000, "fill": "random", "seed": 8})
    assert np.array_equal(first, again) and not np.array_equal(first, other)
    assert first.min() >= 0 and first.max() < 1
    integers = host_contents({"buffer": "uint8", "count": 10000, "fill": "random"})
    assert integers.dtype == np.uint8 and integers.max() < 256
    wide = host_contents({"buffer": "int64", "count": 10000, "fill": "random"})
    assert wide.min() >= 0 and wide.max() < RANDOM_INT_LIMIT


def test_the_plan_survives_its_round_trip(tmp_path):
    case = PlannedCase(
        "c",
        "/k.cubin",
        "_Z1kPf",
        (4, 2, 1),
        (32, 4, 1),
        1024,
        [{"buffer": "float32", "count": 8, "name": "out"}, {"int32": 3}],
        repeat=2,
    )
    plan = Plan(device=0, status_path=str(tmp_path / "status.json"), cases=[case])
    plan.write(tmp_path / "plan.json")
    assert Plan.read(tmp_path / "plan.json") == plan
