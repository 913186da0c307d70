"""The plan the runner reads: its JSON round trip, each argument typed, and a plan argument that is not
one the profile stage writes refused with the field it is wrong in."""

import json
from pathlib import Path

import pytest

from ncuverify.layout import PointerAt, ScalarAt, StructLayout
from ncuverify.runner.__main__ import main
from ncuverify.runner.plan import (
    NpyContents,
    Plan,
    PlanError,
    PlannedBuffer,
    PlannedCase,
    PlannedScalar,
    PlannedStruct,
    PlannedUse,
    argument_from_json,
)

OUT = PlannedBuffer("float32", 8, "zeros", None, 0, 0, "out", True)
EVERY_KIND = [
    OUT,
    PlannedBuffer("float16", 3, "constant", 2.5, 0, 2, None, True),
    PlannedBuffer("int32", 4, "random", None, 2**64 - 1, 0, "hidden", False),
    PlannedBuffer("float32", 6, NpyContents("/data/x.npy", "ab" * 32), None, 0, 0, None, True),
    PlannedUse("partial", True),
    PlannedScalar("int32", 3),
    PlannedScalar("uint64", 2**64 - 1),
    PlannedScalar("bfloat16", 1.5),
    PlannedScalar("bool", True),
    PlannedStruct(StructLayout(16, 8, (0, 8), (ScalarAt(0, "float32", 2.0), PointerAt(8, "hidden")))),
]


def case_with(args: list) -> PlannedCase:
    return PlannedCase("c", "/k.cubin", "_Z1kPf", (4, 2, 1), (32, 4, 1), 1024, args, repeat=2)


def test_the_plan_survives_its_round_trip(tmp_path):
    plan = Plan(device=0, status_path=str(tmp_path / "status.json"), cases=[case_with(EVERY_KIND)])
    plan.write(tmp_path / "plan.json")
    assert Plan.read(tmp_path / "plan.json") == plan


def test_each_argument_survives_its_round_trip_through_json_text():
    for arg in EVERY_KIND:
        assert argument_from_json(json.loads(json.dumps(arg.to_json())), "arg") == arg


def test_a_buffer_is_written_with_every_field_and_a_struct_as_its_layout():
    assert OUT.to_json() == {
        "buffer": "float32",
        "count": 8,
        "fill": "zeros",
        "seed": 0,
        "offset": 0,
        "name": "out",
        "passed": True,
    }
    assert EVERY_KIND[1].to_json()["value"] == 2.5  # a constant's value, there alone
    assert EVERY_KIND[3].to_json()["fill"] == {"npy": "/data/x.npy", "sha256": "ab" * 32}
    assert EVERY_KIND[-1].to_json() == {
        "struct": {
            "size": 16,
            "alignment": 8,
            "offsets": [0, 8],
            "leaves": [{"offset": 0, "kind": "float32", "value": 2.0}, {"offset": 8, "buffer": "hidden"}],
        }
    }
    assert [arg.passed for arg in EVERY_KIND[4:]] == [True] * 6  # a use as written; scalars, structs always


BUFFER = OUT.to_json()


@pytest.mark.parametrize(
    ("data", "error"),
    [
        ("out", r"arg: not an argument"),
        ({}, r"arg: not an argument"),
        ({k: v for k, v in BUFFER.items() if k != "seed"}, r"arg\.seed: not a whole number"),
        ({**BUFFER, "count": True}, r"arg\.count: not a whole number"),
        ({**BUFFER, "count": "8"}, r"arg\.count: not a whole number"),
        ({**BUFFER, "fill": "ones"}, r"arg\.fill: not a fill of the plan"),
        ({**BUFFER, "fill": {"npy": "/x.npy"}}, r"arg\.fill\.sha256: not a string"),
        ({**BUFFER, "fill": {"npy": "/x.npy", "sha256": "0", "more": 1}}, r"arg\.fill\.more: not a field"),
        ({**BUFFER, "fill": "constant"}, r"arg\.value: goes with a constant fill"),
        ({**BUFFER, "value": 1.0}, r"arg\.value: goes with a constant fill"),
        ({**BUFFER, "fill": "constant", "value": "1"}, r"arg\.value: not a number"),
        ({**BUFFER, "passed": 1}, r"arg\.passed: not true or false"),
        ({**BUFFER, "name": 5}, r"arg\.name: not a string"),
        ({**BUFFER, "align": 8}, r"arg\.align: not a field of a planned argument"),
        ({"use": "partial"}, r"arg\.passed: not true or false"),
        ({"int33": 3}, r"arg\.int33: not a kind of scalar"),
        ({"int32": "3"}, r"arg\.int32: not a number"),
        ({"int32": 3, "float32": 1.0}, r"arg: not a buffer, a use, a struct or one scalar"),
        ({"struct": [{"int32": 3}]}, r"arg\.struct: not a layout"),
        ({"struct": {"size": 4}}, r"arg\.struct: not a layout \(KeyError"),
    ],
)
def test_an_argument_the_profile_stage_does_not_write_is_refused_naming_its_field(data, error):
    with pytest.raises(PlanError, match=error):
        argument_from_json(data, "arg")


def test_a_plan_with_a_malformed_argument_is_not_run(tmp_path: Path, capsys):
    plan = Plan(device=0, status_path=str(tmp_path / "status.json"), cases=[case_with([OUT])])
    plan.write(tmp_path / "plan.json")
    data = json.loads((tmp_path / "plan.json").read_text())
    del data["cases"][0]["args"][0]["count"]
    (tmp_path / "plan.json").write_text(json.dumps(data))
    assert main([str(tmp_path / "plan.json")]) == 1
    assert "PlanError: case 'c': args[0].count: not a whole number" in capsys.readouterr().err
    assert not (tmp_path / "status.json").exists(), "no case launched"
