from conftest import DATA, EXPECTATIONS, FIXTURES, RECORDINGS

import ncuverify
from ncuverify.errors import ExitCode


def test_check_returns_dataframes_of_a_recording():
    results = ncuverify.check(DATA / "sample.yaml", from_profile=FIXTURES, cache=False)
    assert results.exit_code == ExitCode.OK
    claims = results.claims.set_index("id")
    assert len(claims) == 8 and set(claims["verdict"]) == {"passed"}
    assert claims.loc["stride32_sector_ratio", "measured"] == 8
    assert claims.loc["stride32_sector_ratio", "document_holds"] == "no"
    assert claims.loc["contiguous_four_sectors", "control_measured"] == 32
    measurements = results.measurements
    stride1 = measurements[
        (measurements["case"] == "stride1")
        & (measurements["metric"] == "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum")
    ]
    assert stride1["value"].tolist() == [8192]
    assert "Results(1 files" in repr(results)


def test_check_takes_folders_and_tables_compose():
    results = ncuverify.check(EXPECTATIONS, from_profile=RECORDINGS, cache=False)
    claims = results.claims
    assert claims["file"].nunique() == len(list(EXPECTATIONS.glob("*.yaml")))
    wrong = claims[(claims["document_holds"] == "no") & (claims["verdict"] == "passed")]
    assert len(wrong) > 50  # the documents' figures the H200 refutes, each measured


def test_static_only_without_a_gpu():
    results = ncuverify.check(DATA / "static.yaml", static_only=True, cache=False)
    assert set(results.claims["verdict"]) == {"passed"} and len(results.claims) == 6
