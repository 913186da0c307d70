"""References between kernels, cases and claims, and to the metrics ncu knows."""

from expectation_edits import CASE_IDS, SAMPLE, line_of, problems, write

from ncuverify.spec import load


def test_without_a_claim_case_the_minus_is_named(tmp_path):
    path = write(tmp_path, CASE_IDS.replace("    case: b\n", ""))
    line = line_of(CASE_IDS, "metric:") - 1
    assert problems(path) == (
        f"{path}:{line}: claims[0].metric: b names no case: set the claim's 'case' or write b@CASE"
    )


def test_misspelt_metrics_are_refused_before_anything_runs(tmp_path):
    from typer.testing import CliRunner

    from ncuverify.cli import app

    path = tmp_path / "typo.yaml"
    path.write_text(
        SAMPLE.replace(
            "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum\n",
            "l1tex__t_request_pipe_lsu_mem_global_op_ld.sum\n",
            1,
        )
    )
    result = CliRunner().invoke(app, ["check", "--static-only", str(path)])
    assert result.exit_code == 2
    assert (
        "claim contiguous_four_sectors: ncu knows no metric l1tex__t_request_pipe_lsu_mem_global_op_ld.sum on sm_90 "
        "(did you mean l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum?)"
    ) in result.stdout


def test_every_metric_of_the_expectation_files_is_known_to_ncu():
    from conftest import EXPECTATIONS

    from ncuverify.ncu.metrics import check_metric_names

    for path in sorted(EXPECTATIONS.glob("*.yaml")):
        check_metric_names(load(path), "sm_90")
