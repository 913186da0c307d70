"""The JSON results: everything a run found, and which run it was."""

import json

import pytest
from conftest import DATA
from exported_results import judged_sample, static_only

from ncuverify import export
from ncuverify.errors import ExitCode, InputError
from ncuverify.results import FileResult


@pytest.fixture(scope="module")
def sample() -> FileResult:
    return judged_sample()


def test_json_carries_claims_measurements_and_provenance(sample):
    document = json.loads(export.to_json([sample]))
    assert document["exit_code"] == 0 and document["counts"]["passed"] == len(sample.claims)
    (record,) = document["files"]
    assert record["replayed"] is True
    assert record["provenance"]["gpu"] == "NVIDIA H200" and record["provenance"]["arch"] == "sm_90"
    claim = next(c for c in record["claims"] if c["id"] == "stride32_sector_ratio")
    assert claim["measured"] == 8 and claim["expected"] == "== 8" and claim["cite"]["holds"] == "no"
    controlled = next(c for c in record["claims"] if c["id"] == "contiguous_four_sectors")
    assert controlled["control"] == "stride32" and controlled["control_measured"] == 32
    rows = {(m["case"], m["metric"]): m["value"] for m in record["measurements"]}
    assert rows[("stride1", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum")] == 8192
    assert rows[("stride1", "static__registers_per_thread")] > 0


def test_run_identity_in_the_json(sample):
    document = json.loads(export.to_json([sample], shard=export.ShardOf(2, 3, "f" * 64)))
    assert document["run"] == {"suite": "f" * 64, "shard": [2, 3]}
    whole = json.loads(export.to_json([sample]))
    assert whole["run"] == {"suite": export.suite_digest([sample.path]), "shard": [1, 1]}


def test_claims_set_aside_are_in_the_json_and_read_back():
    only_profiler, some_static = static_only(DATA / "sample.yaml"), static_only(DATA / "static.yaml")
    nothing = json.loads(export.to_json([only_profiler]))
    assert nothing["exit_code"] == ExitCode.NOT_MEASURABLE and nothing["set_aside"] == 8
    assert (
        nothing["problem"]
        == "nothing could be judged here: 8 claims need a GPU (--static-only set them aside)"
    )
    text = export.to_json([only_profiler, some_static])
    some = json.loads(text)
    assert some["exit_code"] == ExitCode.OK and some["set_aside"] == 9 and "problem" not in some
    assert [record["set_aside"] for record in some["files"]] == [8, 1]
    assert [result.set_aside for result in export.from_json(text)] == [8, 1]


def test_a_claim_of_a_sweep_carries_its_point_and_no_other_claim_does(sample):
    from dataclasses import replace

    swept = replace(sample, claims=[replace(sample.claims[0], point=(("n", 4096), ("k", -1)))])
    (record,) = json.loads(export.to_json([swept]))["files"]
    assert record["claims"][0]["point"] == {"n": 4096, "k": -1}
    (plain,) = json.loads(export.to_json([sample]))["files"]
    assert not any("point" in claim for claim in plain["claims"])
    [again] = export.from_json(export.to_json([swept]))
    assert again.claims[0].point == (("n", 4096), ("k", -1))


def test_a_point_that_is_not_whole_numbers_is_refused(sample):
    from dataclasses import replace

    swept = replace(sample, claims=[replace(sample.claims[0], point=(("n", 4096),))])
    document = json.loads(export.to_json([swept]))
    document["files"][0]["claims"][0]["point"] = {"n": "4096"}
    with pytest.raises(InputError, match=r"claims\[0\]\.point\.n: not a whole number"):
        export.from_json(json.dumps(document))
