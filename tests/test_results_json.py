"""The JSON results: everything a run found, and which run it was."""

import json

import pytest
from exported_results import judged_sample

from ncuverify import export
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
