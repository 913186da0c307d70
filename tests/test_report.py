from pathlib import Path

import pytest
from rich.console import Console

from ncuverify import report
from ncuverify.baseline.snapshot import Change
from ncuverify.errors import ExitCode
from ncuverify.results import ClaimResult, FileResult, Verdict
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


def rendered(*results: FileResult, verbose: bool = False, width: int = 220) -> str:
    console = Console(record=True, width=width)
    report.print_run(console, list(results), 1.5, verbose)
    return console.export_text()


def every_verdict() -> list[ClaimResult]:
    """A claim of each verdict, two skipped for one reason, the failed one with a control."""
    return [
        ClaimResult(claim("p"), Verdict.PASSED, 4.0),
        ClaimResult(claim("f"), Verdict.FAILED, 5.0, "measured 5, expected == 4", control_measured=1.0),
        ClaimResult(claim("e"), Verdict.ERROR, reason="case a did not run: CUDA_ERROR_ILLEGAL_ADDRESS"),
        ClaimResult(claim("s1"), Verdict.SKIPPED, reason="no GPU"),
        ClaimResult(claim("s2"), Verdict.SKIPPED, reason="no GPU"),
        ClaimResult(claim("x"), Verdict.XFAILED, 5.0, "expected to fail: volta"),
        ClaimResult(claim("xp"), Verdict.XPASSED, 4.0, "expected to fail (volta), but it holds"),
        ClaimResult(claim("o"), Verdict.OTHER_ARCH, reason="about sm_80; this run is for sm_90"),
    ]


def test_every_verdict_renders_with_its_reason():
    results = every_verdict()
    text = rendered(FileResult(Path("f.yaml"), results), verbose=True)
    for verdict in ("passed", "failed", "error", "skipped", "xfailed", "xpassed", "other_arch"):
        assert verdict in text
    assert "failed f: measured 5, expected == 4" in text
    assert "error e: case a did not run: CUDA_ERROR_ILLEGAL_ADDRESS" in text
    assert "skipped 2 claims: no GPU" in text  # one line for claims skipped for the same reason
    assert (
        "f.yaml: 1 passed, 1 failed, 1 errors, 2 skipped, 1 xfailed, 1 xpassed, 1 for other architectures in"
        in text
    )


def test_by_default_a_file_is_one_line_and_what_needs_a_look_is_shown_in_full():
    results = every_verdict()
    lines = rendered(FileResult(Path("f.yaml"), results)).splitlines()
    headings = [line for line in lines if not line.startswith(" ")]
    assert headings == [
        "failed f: measured 5, expected == 4",
        "error e: case a did not run: CUDA_ERROR_ILLEGAL_ADDRESS",
        "xpassed xp: expected to fail (volta), but it holds",
        "f.yaml: 1 passed, 1 failed, 1 errors, 2 skipped, 1 xfailed, 1 xpassed, 1 for other architectures in 0.0 s",
        "skipped 2 claims: no GPU",  # each cause once, for the run
    ]
    failed = lines[1 : lines.index(headings[1])]
    assert [line.split()[0] for line in failed] == [
        "case",
        "metric",
        "expected",
        "measured",
        "control",
        "source",
    ]
    assert "    measured  5" in failed and "    expected  == 4" in failed
    assert "┃" not in "\n".join(lines), "no table"


def test_a_cause_shared_by_files_is_said_once():
    skipped = [ClaimResult(claim(f"s{i}"), Verdict.SKIPPED, reason="no GPU") for i in range(3)]
    failed = ClaimResult(claim("f"), Verdict.FAILED, 5.0, "measured 5, expected == 4")
    held = ClaimResult(claim("p"), Verdict.PASSED, 4.0)
    text = rendered(
        FileResult(Path("a.yaml"), [*skipped[:2], failed]), FileResult(Path("b.yaml"), [*skipped[2:], held])
    )
    assert text.count("no GPU") == 1 and "skipped 3 claims: no GPU" in text


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
    from conftest import COMPILE_CACHE, DATA, FIXTURES, NO_GPU

    from ncuverify.options import CheckOptions
    from ncuverify.pipeline import check_file

    result = check_file(
        DATA / "explain.yaml",
        CheckOptions(cache=COMPILE_CACHE, from_profile=FIXTURES),
        NO_GPU,
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


HOSTILE = {
    "markup": "[bold red]x[/]",
    "index": "a[i]",
    "link": "[link=https://example.com/x]click[/link]",
    "clear": "\x1b[2J",
    "title": "\x1b]0;owned\x07",
    "bidi": "\u202eevil",
}
SHOWN = {
    "markup": "[bold red]x[/]",
    "index": "a[i]",
    "link": "[link=https://example.com/x]click[/link]",
    "clear": "\\x1b[2J",
    "title": "\\x1b]0;owned\\x07",
    "bidi": "\\u202eevil",
}


def hostile_result() -> FileResult:
    """Every string a file or a tool gives, each carrying markup or an escape sequence."""
    from ncuverify.explain import Explanation, RuleFinding, SourceLine

    text = " ".join(HOSTILE.values())
    hostile = Claim.model_construct(
        id=f"id {text}",
        case=f"case {text}",
        metric=f"metric {text}",
        expect=Expectation(equals=4),
        control=f"control {text}",
        cite=claim("c").cite.model_copy(update={"document": text, "section": text, "figure": text}),
        note=f"note {text}",
    )
    results = [
        ClaimResult(hostile, Verdict.FAILED, 5.0, f"reason {text}", control_measured=1.0),
        ClaimResult(claim("s"), Verdict.SKIPPED, reason=f"skipped {text}"),
    ]
    ncu_says = Explanation(
        kernel=f"kernel {text}",
        topic="global",
        rules=(RuleFinding("Uncoalesced", "SourceCounters", "OPT", f"rule {text}", None),),
        lines=(SourceLine(f"src {text}.cu", 3, f"line {text}", 10.0, 1.0),),
    )
    return FileResult(
        Path(f"file {text}.yaml"),
        results,
        warnings=[f"warning {text}"],
        explanations={f"id {text}": ncu_says},
    )


@pytest.mark.parametrize("width", [80, 1000], ids=["blocks", "table"])
def test_untrusted_text_is_shown_as_text(width):
    console = Console(record=True, width=width)
    assert report.print_run(console, [hostile_result()], 1.0, verbose=True) == 0
    text = console.export_text()
    assert ("┃" in text) is (width == 1000)
    assert "\x1b" not in text and "\u202e" not in text and "\x07" not in text
    for where in (
        "file",
        "id",
        "case",
        "metric",
        "control",
        "reason",
        "skipped",
        "note",
        "warning",
        "kernel",
        "rule",
        "line",
    ):
        for kind, shown in SHOWN.items():
            assert f"{where} " in text and shown in text, (where, kind)
    joined = " ".join(SHOWN.values())
    assert f"file {joined}.yaml".replace("//", "/") in text  # the table's title (a path: // is /)
    assert f"failed id {joined}: reason {joined}" in text
    if width == 1000:
        assert f"note id {joined}: note {joined}" in text
    assert f"warning: warning {joined}" in " ".join(line.strip() for line in text.splitlines())
    assert f"skipped s: skipped {joined}" in text
    assert f"what ncu says about kernel {joined}" in text
    if width == 1000:
        assert f"rule {joined}" in text


def test_baseline_changes_from_a_hostile_baseline_are_text():
    console = Console(record=True, width=1000)
    text = " ".join(HOSTILE.values())
    report.print_changes(console, [Change(f"f {text}", f"c {text}", f"m {text}", 1.0, 2.0, True)])
    shown = console.export_text()
    assert "\x1b" not in shown
    for where in "fcm":
        assert f"{where} {' '.join(SHOWN.values())}" in shown


def test_an_internal_error_is_one_line_and_the_files_claims_are_still_shown():
    result = FileResult(
        Path("f.yaml"),
        [ClaimResult(claim("p"), Verdict.PASSED, 4.0)],
        internal_error="internal error: ValueError: x, please report it with /tmp/t.txt",
    )
    text = rendered(result, FileResult(Path("g.yaml"), [], internal_error="internal error: KeyError: y"))
    assert "f.yaml: internal error: ValueError: x, please report it with /tmp/t.txt\n" in text
    assert "g.yaml: internal error: KeyError: y\n" in text
    assert "f.yaml: 1 passed, 0 failed, 0 errors, 0 skipped, 1 file with internal errors in" in text
    assert "ncuverify: 1 passed, 0 failed, 0 errors, 0 skipped, 2 files with internal errors in" in text


def test_a_file_that_cannot_be_rendered_shows_its_internal_error_and_the_others_are_shown(monkeypatch):
    import re

    real_table = report.claims_table

    def broken_on_b(result):
        if result.path.name == "b.yaml":
            raise TypeError("cannot render \x1b[2J")
        return real_table(result)

    monkeypatch.setattr(report.files, "claims_table", broken_on_b)
    console = Console(record=True, width=220)
    files = [
        FileResult(Path(f"{name}.yaml"), [ClaimResult(claim("p"), Verdict.PASSED, 4.0)]) for name in "abc"
    ]
    assert report.print_run(console, files, 1.0, verbose=True) == ExitCode.INTERNAL_ERROR
    text = console.export_text()
    assert "a.yaml: 1 passed" in text and "c.yaml: 1 passed" in text and "b.yaml: 1 passed" not in text
    line = next(line for line in text.splitlines() if line.startswith("b.yaml: internal error"))
    found = re.fullmatch(
        r"b\.yaml: internal error: TypeError: cannot render \\x1b\[2J, please report it with (\S+)", line
    )
    assert found and "TypeError: cannot render" in Path(found[1]).read_text()
    assert "ncuverify: 3 passed" in text  # the run's summary still counts every file


def own_claim(claim_id: str, why: str | None = None) -> Claim:
    """A claim of one's own: no document, perhaps a why."""
    return Claim(id=claim_id, case="a", metric="m.sum", expect=Expectation(equals=4), why=why)


def header(text: str) -> list[str]:
    line = next(line for line in text.splitlines() if "claim" in line and "verdict" in line)
    return [cell.strip() for cell in line.strip("┃│ ").split("┃")]


def test_a_file_of_claims_of_ones_own_shows_no_document_columns():
    results = [
        ClaimResult(own_claim("regs", "keeps two blocks per SM resident"), Verdict.PASSED, 4.0),
        ClaimResult(own_claim("bare"), Verdict.FAILED, 5.0, "measured 5, expected == 4"),
    ]
    text = rendered(FileResult(Path("mine.yaml"), results), verbose=True)
    assert header(text) == ["claim", "case", "metric", "expected", "measured", "verdict", "why"]
    assert "keeps two blocks per SM resident" in text and "holds" not in text
    plain = rendered(FileResult(Path("mine.yaml"), results[1:]), verbose=True)
    assert header(plain) == ["claim", "case", "metric", "expected", "measured", "verdict"]


def test_a_failed_claim_never_says_its_document_holds():
    results = [
        ClaimResult(claim("ok"), Verdict.PASSED, 4.0),
        ClaimResult(claim("bad"), Verdict.FAILED, 5.0, "measured 5, expected == 4"),
        ClaimResult(own_claim("mine", "my reason"), Verdict.PASSED, 4.0),
    ]
    text = rendered(FileResult(Path("f.yaml"), results), verbose=True)
    rows = {line.split("│")[1].strip(): line for line in text.splitlines() if line.startswith("│")}
    assert "holds" in rows["ok"] and "holds" not in rows["bad"]
    assert header(text)[-2:] == ["document", "source"] and "my reason" in rows["mine"]
    blocks = rendered(FileResult(Path("f.yaml"), results), verbose=True, width=50)
    assert "┃" not in blocks and blocks.count("    document  holds") == 1, "only the claim that passed"


def test_at_80_columns_every_claim_is_a_block_that_cuts_no_name():
    metric = (
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum / l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
    )
    long_id = "a_claim_id_of_sixty_characters_that_no_column_should_fold_ok"
    named = Claim(id=long_id, case="a_case_with_a_long_name", metric=metric, expect=Expectation(equals=4))
    results = [ClaimResult(named, Verdict.PASSED, 4.0), ClaimResult(claim("short"), Verdict.PASSED, 4.0)]
    narrow = rendered(FileResult(Path("f.yaml"), results), verbose=True, width=80)
    assert "┃" not in narrow and f"passed {long_id}\n" in narrow
    assert "    metric    l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum /\n" in narrow
    assert "              l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum\n" in narrow
    assert all(len(line) <= 80 for line in narrow.splitlines())
    one_name = metric.split(" / ")[0]
    results[0] = ClaimResult(named.model_copy(update={"metric": one_name}), Verdict.PASSED, 4.0)
    wide = rendered(FileResult(Path("f.yaml"), results), verbose=True, width=200)
    assert "┃" in wide and f"│ {long_id} │" in wide and f"│ {one_name} │" in wide, "a table, whole"


def test_a_word_longer_than_the_line_is_kept_whole():
    from ncuverify.report.claims import field_lines
    from ncuverify.report.text import wrapped

    assert wrapped("ab  cd ef", 5) == ["ab", "cd ef"]
    assert wrapped("a " + "x" * 30 + " b", 10) == ["a", "x" * 30, "b"]
    assert field_lines("metric", "a b", 40) == ["    metric    a b"]
    assert field_lines("metric", "m" * 30 + " / b", 40) == ["    metric", "      " + "m" * 30 + " / b"]
    assert field_lines("metric", "m" * 100, 40) == ["    metric", "      " + "m" * 100]


def test_changes_that_do_not_fit_are_a_line_each_naming_the_measure_whole():
    console = Console(record=True, width=60)
    long_path = "/a/folder/with/a/long/name/of/sixty/characters/regression.yaml"
    report.print_changes(console, [Change(long_path, "read", "gpu__time_duration.sum", 100.0, 150.0, True)])
    text = console.export_text()
    assert "┃" not in text
    assert f"worse {long_path} read gpu__time_duration.sum: 100 -> 150 (×1.5)" in text


@pytest.mark.parametrize("quiet", [False, True])
def test_claims_set_aside_are_counted_and_a_run_that_judged_nothing_says_so(quiet):
    judged = FileResult(Path("static.yaml"), [ClaimResult(claim("p"), Verdict.PASSED, 4.0)], set_aside=1)
    aside = FileResult(Path("programs.yaml"), [], set_aside=9)
    console = Console(record=True, width=220)
    report.print_run(console, [aside, FileResult(Path("none.yaml"), [], set_aside=1)], 1.5, False, quiet)
    nothing = console.export_text()
    if not quiet:
        assert "programs.yaml: nothing could be judged here: 9 claims need a GPU" in nothing
        assert "none.yaml: nothing could be judged here: 1 claim needs a GPU" in nothing
        assert "no claims to check" not in nothing
    assert (
        "ncuverify: nothing could be judged here: 10 claims need a GPU (--static-only set them aside)"
        in nothing
    )
    assert "0 passed, 0 failed, 0 errors, 0 skipped, 10 set aside (they need a GPU: --static-only)" in nothing
    console = Console(record=True, width=220)
    report.print_run(console, [judged, aside], 1.5, False, quiet)
    some = console.export_text()
    assert "ncuverify: 1 passed, 0 failed, 0 errors, 0 skipped, 10 set aside" in some
    assert "ncuverify: nothing could be judged" not in some
