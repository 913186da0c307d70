import pytest
from conftest import DATA, EXPECTATIONS, FIXTURES, RECORDINGS

import ncuverify
from ncuverify.errors import ExitCode


def test_check_returns_dataframes_of_a_recording():
    results = ncuverify.check(DATA / "sample.yaml", from_profile=FIXTURES)
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
    assert measurements["value"].dtype == "float64", "numbers, whatever the measurements' sources"
    assert measurements["value"].sum() > 0
    assert "Results(1 files" in repr(results)


@pytest.mark.slow
def test_check_takes_folders_and_tables_compose():
    results = ncuverify.check(EXPECTATIONS, from_profile=RECORDINGS)
    claims = results.claims
    assert claims["file"].nunique() == len(list(EXPECTATIONS.glob("*.yaml")))
    wrong = claims[(claims["document_holds"] == "no") & (claims["verdict"] == "passed")]
    assert len(wrong) > 50  # the documents' figures the H200 refutes, each measured


def test_static_only_without_a_gpu():
    results = ncuverify.check(DATA / "static.yaml", static_only=True)
    assert set(results.claims["verdict"]) == {"passed"} and len(results.claims) == 6


def test_a_path_that_names_no_expectation_file_is_an_input_error(tmp_path):
    import pytest

    from ncuverify.errors import InputError

    with pytest.raises(
        InputError, match=f"^{tmp_path}/: no expectation files \\(\\*.yaml, \\*.yml\\) in this folder$"
    ):
        ncuverify.check(tmp_path, cache=False)
    with pytest.raises(InputError, match=r"absent\.yaml: no such expectation file or folder$"):
        ncuverify.check([DATA / "static.yaml", tmp_path / "absent.yaml"], cache=False)


def test_folders_give_their_yml_files_too(tmp_path):
    (tmp_path / "static.yml").write_text((DATA / "static.yaml").read_text())
    results = ncuverify.check(tmp_path, static_only=True, cache=False)
    assert [f.path.name for f in results.files] == ["static.yml"]


def test_a_file_on_which_ncuverify_fails_is_its_own_and_the_others_are_checked(monkeypatch):
    from ncuverify.stages import prepare

    real_prepare = prepare.prepare_file

    def crashing_on_sample(path, key, options, environment):
        if path.name == "sample.yaml":
            raise RuntimeError("injected")
        return real_prepare(path, key, options, environment)

    monkeypatch.setattr(prepare, "prepare_file", crashing_on_sample)
    results = ncuverify.check([DATA / "sample.yaml", DATA / "static.yaml"], from_profile=FIXTURES)
    assert results.exit_code == ExitCode.INTERNAL_ERROR
    sample, _ = results.files
    assert sample.internal_error.startswith("internal error: RuntimeError: injected, please report it with ")
    assert set(results.claims["file"]) == {"tests/data/static.yaml"} and len(results.claims) == 7
