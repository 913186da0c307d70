"""The plan the runner reads: its JSON round trip."""

from ncuverify.runner.plan import Plan, PlannedCase


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
