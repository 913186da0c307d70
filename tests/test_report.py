from pathlib import Path

from rich.console import Console

from ncuverify import report
from ncuverify.baseline import Change
from ncuverify.judge import ClaimResult, Verdict
from ncuverify.pipeline import FileResult
from ncuverify.spec import Claim, Expectation


def claim(claim_id: str, holds: str = "yes", value: float | None = None) -> Claim:
    return Claim(
        id=claim_id,
        case="a",
        metric="m.sum",
        expect=Expectation(equals=4),
        cite={"document": "doc.txt", "section": "1", "figure": "f", "value": value, "holds": holds},
        note=None if holds == "yes" else "why it differs",
    )


def rendered(*results: FileResult, verbose: bool = False) -> str:
    console = Console(record=True, width=220)
    report.print_run(console, list(results), 1.5, verbose)
    return console.export_text()


def test_every_verdict_renders_with_its_reason():
    results = [
        ClaimResult(claim("p"), Verdict.PASSED, 4.0),
        ClaimResult(claim("f"), Verdict.FAILED, 5.0, "measured 5, expected == 4"),
        ClaimResult(claim("e"), Verdict.ERROR, reason="case a did not run: CUDA_ERROR_ILLEGAL_ADDRESS"),
        ClaimResult(claim("s1"), Verdict.SKIPPED, reason="no GPU"),
        ClaimResult(claim("s2"), Verdict.SKIPPED, reason="no GPU"),
        ClaimResult(claim("x"), Verdict.XFAILED, 5.0, "expected to fail: volta"),
        ClaimResult(claim("xp"), Verdict.XPASSED, 4.0, "expected to fail (volta), but it holds"),
        ClaimResult(claim("o"), Verdict.OTHER_ARCH, reason="about sm_80; this run is for sm_90"),
    ]
    text = rendered(FileResult(Path("f.yaml"), results))
    for verdict in ("passed", "failed", "error", "skipped", "xfailed", "xpassed", "other_arch"):
        assert verdict in text
    assert "failed f: measured 5, expected == 4" in text
    assert "error e: case a did not run: CUDA_ERROR_ILLEGAL_ADDRESS" in text
    assert "skipped 2 claims: no GPU" in text  # one line for claims skipped for the same reason
    assert (
        "f.yaml: 1 passed, 1 failed, 1 errors, 2 skipped, 1 xfailed, 1 xpassed, 1 for other architectures in"
        in text
    )


def test_the_document_column_says_by_how_much_a_figure_is_off():
    result = FileResult(
        Path("f.yaml"),
        [
            ClaimResult(claim("w", "no", 32), Verdict.PASSED, 8.0),
            ClaimResult(claim("a", "approximately"), Verdict.PASSED, 4.0),
        ],
    )
    text = rendered(result, verbose=True)
    assert "wrong: says 32, measured ×0.25 of it" in text
    assert "approximately" in text
    assert "note w: why it differs" in text


def test_input_errors_and_files_not_run_are_one_block_each():
    text = rendered(
        FileResult(Path("bad.yaml"), [], input_error="bad.yaml:3: kernels: missing"),
        FileResult(Path("later.yaml"), [], not_run="the run was interrupted before this file was checked"),
    )
    assert "bad.yaml: input error\nbad.yaml:3: kernels: missing" in text
    assert "later.yaml: not run: the run was interrupted before this file was checked" in text
    assert "1 file with input errors" in text


def test_changes_against_a_baseline():
    console = Console(record=True, width=200)
    report.print_changes(
        console,
        [
            Change("f", "a", "gpu__time_duration.sum", 100.0, 150.0, True),
            Change("f", "b", "static__registers_per_thread", 40.0, 32.0, False),
        ],
    )
    text = console.export_text()
    assert "×1.5" in text and "worse" in text and "better" in text
    assert "baseline: 1 regressed, 1 improved" in text


def test_a_failed_memory_claim_shows_what_ncu_says_and_where():
    """The H200 recording of tests/data/explain.yaml: two claims fail, each with ncu's rules and line."""
    from conftest import DATA, FIXTURES

    from ncuverify.pipeline import CheckOptions, Environment, check_file

    result = check_file(
        DATA / "explain.yaml", CheckOptions(from_profile=FIXTURES), Environment(None, None, "no GPU")
    )
    text = rendered(result)
    assert "gather_is_coalesced: what ncu says about gather_stride32" in text
    assert "ncu UncoalescedGlobalAccess: This kernel has uncoalesced global accesses" in text
    assert "explain.cu:6  out[t] = in[t * 32];" in text
    assert "tile_is_conflict_free: what ncu says about tile_columns" in text
    assert "explain.cu:14  out[t] = tile[threadIdx.x][threadIdx.y];" in text
    assert "excessive wavefronts" in text
    # The claim that held has nothing to explain.
    assert "gather_one_request_per_warp: what ncu says" not in text
