"""The dry run's plan as a versioned JSON document and as lines of at most 80 columns."""

import json
from dataclasses import replace

from ncuverify.run_plan import (
    DRY_RUN,
    PlannedBuild,
    PlannedCase,
    PlannedProcess,
    ReusedCase,
    RunPlan,
    plan_lines,
    to_json,
)

LONG = "expectations/" + "deeply/" * 20 + "nested.yaml"
PLAN = RunPlan(
    (2, 4),
    (LONG,),
    (PlannedBuild(LONG, "k", "k<1>", "sm_90"), PlannedBuild(LONG, "set", None, "sm_90")),
    (),
    (PlannedCase(LONG, "a", 3, 2),),
    (PlannedProcess(0, ((LONG, "a"),), 2, 4, 3),),
    ((LONG, "a_holds"),),
)


def test_the_document_names_its_version_and_every_field():
    document = json.loads(to_json(PLAN))
    assert document["dry_run"] == DRY_RUN == 1
    assert set(document) == {
        *("dry_run", "shard", "files", "build", "reuse", "profile", "processes", "claims", "replayed"),
        *("errors", "notes"),
    }
    assert document["build"][1] == {"file": LONG, "kernel": "set", "entry": None, "arch": "sm_90"}
    assert document["reuse"] == [] and document["notes"] == []
    assert document["profile"] == [{"file": LONG, "case": "a", "launches": 3, "metrics": 2, "why": None}]
    assert document["processes"][0]["cases"] == [{"file": LONG, "case": "a"}]
    assert document["processes"][0]["passes"] == 4 and document["processes"][0]["launches"] == 3
    assert document["processes"][0]["launch_passes"] == 12


def test_the_lines_say_the_share_and_never_cut_a_name():
    lines = plan_lines(PLAN)
    assert lines[0] == "dry run: shard 2/4 of 1 file, nothing built or profiled"
    assert lines[1] == "build: 2 kernels of 1 file"
    assert lines[3] == "profile: 1 case in 1 ncu process, about 12 replay passes"
    assert lines[4].startswith("    1. GPU 0: 4 passes x 3 launches: expectations/deeply/")
    assert lines[4].endswith(f"{LONG}::a") and "..." not in "".join(lines)


def test_a_plan_that_reuses_names_each_reused_case_and_says_what_it_planned_for():
    note = "no GPU here: planning for the recording's NVIDIA H200 (sm_90, driver 580.159.04, ncu 2025.3.1.0)"
    reusing = replace(PLAN, reuse=(ReusedCase(LONG, "b"), ReusedCase(LONG, "c")), built=True, notes=(note,))
    document = json.loads(to_json(reusing))
    assert document["reuse"] == [{"file": LONG, "case": "b"}, {"file": LONG, "case": "c"}]
    assert document["notes"] == [note]
    lines = plan_lines(reusing)
    assert lines[:2] == ["dry run: shard 2/4 of 1 file, nothing profiled", note]
    assert lines[3] == "reuse: 2 recorded cases"
    everything = replace(reusing, profile=(), processes=())
    assert plan_lines(everything)[4] == "profile: nothing (every case reused), no ncu process"


def test_a_process_without_ncu_says_so_with_no_pass():
    without = PlannedProcess(0, ((LONG, "b"),), 1, 0, 2, ncu=False)
    plan = replace(
        PLAN, profile=(*PLAN.profile, PlannedCase(LONG, "b", 2, 1)), processes=(*PLAN.processes, without)
    )
    records = json.loads(to_json(plan))["processes"]
    assert [(p["ncu"], p["passes"]) for p in records] == [(True, 4), (False, 0)]
    lines = plan_lines(plan)
    assert lines[3] == "profile: 2 cases in 1 ncu process and 1 without ncu, about 12 replay passes"
    assert lines[5].startswith("    2. GPU 0: no ncu x 2 launches: expectations/deeply/")
