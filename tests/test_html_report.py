"""The HTML report: built from the H200 recording and parsed back; every claim with its verdict and
numbers, every picture inline, nothing outside the page, and text from files shown as text."""

from html.parser import HTMLParser
from pathlib import Path

import pytest
from cli_invoke import invoke
from conftest import COMPILE_CACHE, DATA, EXPECTATIONS, FIXTURES, NO_GPU, RECORDINGS

from ncuverify import export
from ncuverify.baseline.ratchet import Comparison
from ncuverify.export import RunOutcome
from ncuverify.judge.claims import describe, format_number
from ncuverify.options import CheckOptions
from ncuverify.pipeline import check_file, check_files
from ncuverify.results import ClaimResult, FileResult, Verdict
from ncuverify.spec import Claim, Expectation
from ncuverify.text import one_line


class Page(HTMLParser):
    """What a browser would load and show: the claims' rows, the pictures, every reference out."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.rows: list[dict[str, str]] = []
        self.cells: list[list[str]] | None = None
        self.tags: list[str] = []
        self.references: list[str] = []
        self.svg_depth = 0
        self.svgs = 0
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        found = dict(attrs)
        self.tags.append(tag)
        for name in ("src", "href", "xlink:href", "action", "data"):
            if found.get(name) is not None:
                self.references.append(found[name])
        if tag == "svg":
            self.svgs += self.svg_depth == 0
            self.svg_depth += 1
        if tag == "tr" and found.get("class") == "claim":
            self.rows.append({"file": found["data-file"], "verdict": found["data-verdict"]})
            self.cells = []
        elif tag == "td" and self.cells is not None:
            self.cells.append([])

    def handle_endtag(self, tag):
        if tag == "svg":
            self.svg_depth -= 1
        if tag == "tr" and self.cells is not None:
            self.rows[-1]["cells"] = ["".join(cell).strip() for cell in self.cells]  # type: ignore[assignment]
            self.cells = None

    def handle_data(self, data):
        if self.cells:
            self.cells[-1].append(data)


@pytest.fixture(scope="module")
def suite() -> list[FileResult]:
    paths = sorted(EXPECTATIONS.glob("*.yaml"))
    return check_files(paths, CheckOptions(cache=COMPILE_CACHE, from_profile=RECORDINGS), NO_GPU)


@pytest.mark.slow
def test_every_claim_of_the_recording_appears_with_its_verdict_and_numbers(suite):
    page = Page(export.to_html(suite))
    claims = [(r, c) for r in suite for c in r.claims]
    assert len(page.rows) == len(claims) == 394
    for row, (result, claim_result) in zip(page.rows, claims, strict=True):
        claim_id, _, metric, expected, measured, verdict, _ = row["cells"]
        assert (claim_id, row["verdict"], verdict) == (
            claim_result.claim.id,
            claim_result.verdict.value,
            verdict,
        )
        assert row["file"] == str(result.path) and metric == one_line(claim_result.claim.metric)
        assert expected == describe(claim_result.claim.expect)
        if claim_result.measured is not None:
            assert measured.startswith(format_number(claim_result.measured))


@pytest.mark.slow
def test_every_picture_is_inline_and_the_page_references_nothing_outside_itself(suite):
    page = Page(export.to_html(suite))
    measured = sum(1 for r in suite for c in r.claims if c.measured is not None)
    assert page.svgs == measured + 2, "a picture per measured claim, the verdicts' and the audit's charts"
    assert "img" not in page.tags and "link" not in page.tags and "iframe" not in page.tags
    assert all(reference.startswith("#") for reference in page.references), set(page.references)
    assert "@import" not in export.to_html(suite) and "url(http" not in export.to_html(suite)


def test_the_summary_counts_by_verdict_and_says_where_the_figures_come_from(suite):
    text = export.to_html(suite)
    assert "392 passed, 2 other_arch" in text
    assert "replayed from a recording made on NVIDIA H200 (sm_90" in text


def test_a_failed_memory_claim_comes_first_with_what_ncu_says():
    result = check_file(
        DATA / "explain.yaml", CheckOptions(cache=COMPILE_CACHE, from_profile=FIXTURES), NO_GPU
    )
    text = export.to_html([result])
    failures = text[text.index('<section id="failures">') : text.index('<section id="claims">')]
    assert "gather_is_coalesced" in failures and "tile_is_conflict_free" in failures
    assert "UncoalescedGlobalAccess" in failures and "explain.cu:6  out[t] = in[t * 32];" in failures
    assert text.index('id="failures"') < text.index('id="claims"')


def test_text_from_a_file_is_shown_never_run():
    hostile = "<script>alert(1)</script> <img src=http://x.test/a.png> \x1b[2J"
    claim = Claim.model_construct(
        id=hostile, case=hostile, metric=hostile, expect=Expectation(equals=4), control=None, cite=None
    )
    text = export.to_html(
        [FileResult(Path(f"{hostile}.yaml"), [ClaimResult(claim, Verdict.FAILED, 5.0, hostile)])]
    )
    page = Page(text)
    assert "img" not in page.tags and page.tags.count("script") == 1, "only the page's own filter script"
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text and "\x1b" not in text and "\\x1b[2J" in text


@pytest.mark.slow
def test_check_and_merge_write_the_report(no_gpu, tmp_path):
    report = tmp_path / "r.html"
    shard = tmp_path / "s.json"
    result = invoke(
        "--from-profile",
        str(FIXTURES),
        str(DATA / "sample.yaml"),
        "--html",
        str(report),
        "--json",
        str(shard),
    )
    assert result.exit_code == 0 and len(Page(report.read_text()).rows) == 8
    from cli_invoke import invoke_command

    merged = tmp_path / "m.html"
    done = invoke_command("merge", str(shard), "--html", str(merged))
    assert done.exit_code == 0, done.output
    assert len(Page(merged.read_text()).rows) == 8


def test_a_swept_claim_is_drawn_against_its_size(tmp_path, monkeypatch):
    from conftest import fake_profiled

    monkeypatch.setenv("FAKE_NCU_NOTES", str(tmp_path / "notes.jsonl"))
    monkeypatch.setenv("FAKE_NCU_VALUES", "by_case")
    from ncuverify.export.html_report import sweep_series

    [result] = fake_profiled([DATA / "sweep.yaml"], tmp_path / "saved")
    claims = [(result, c) for c in result.claims]
    series = sweep_series(claims)
    assert [(claim, name, [n for n, _ in points]) for (_, claim, name), points in series.items()] == [
        ("time", "n", [1024, 2048, 4096]),
        ("same_time", "n", [1024, 2048, 4096]),
    ]
    text = export.to_html([result])
    sweeps = text[text.index('<section id="sweeps">') : text.index('<section id="claims">')]
    assert sweeps.count("<svg") == 2 and "time in " in sweeps and "against n" in sweeps
    # rendered again from the JSON results (as merge does), each claim keeps its point
    [again] = export.from_json(export.to_json([result]))
    assert sweep_series([(again, c) for c in again.claims]) == series


def _timed(claim_id: str, measured: float, point: tuple[tuple[str, int], ...] = ()) -> ClaimResult:
    claim = Claim(id=claim_id, case="c", metric="gpu__time_duration.sum", expect=Expectation(equals=1))
    return ClaimResult(claim, Verdict.PASSED, measured, point=point)


def test_a_claim_named_like_a_point_of_a_sweep_is_not_charted_as_one():
    from ncuverify.export.html_report import sweep_series

    result = FileResult(Path("f.yaml"), [_timed("time__n_4096", 2.0), _timed("time__n_8192", 3.0)])
    assert sweep_series([(result, c) for c in result.claims]) == {}
    assert '<section id="sweeps">' not in export.to_html([result])


def test_a_claim_of_a_sweep_is_charted_by_its_point_whatever_its_id():
    from ncuverify.export.html_report import sweep_series

    # a written id holding `__` (which an id's suffix could not tell from the point's)
    swept = [_timed(f"dram__bytes__n_{n}", float(n), (("n", n),)) for n in (4096, 1024)]
    result = FileResult(Path("f.yaml"), swept)
    assert sweep_series([(result, c) for c in result.claims]) == {
        ("f.yaml", "dram__bytes", "n"): [(1024, 1024.0), (4096, 4096.0)]
    }


def test_against_a_baseline_every_move_is_listed_and_drawn_regressions_first():
    from ncuverify.baseline.snapshot import Change

    moves = [
        Change("f.yaml", "b", "static__registers_per_thread", 40.0, 32.0, False),
        Change("f.yaml", "a", "gpu__time_duration.sum", 100.0, 150.0, True),
        Change("f.yaml", "c", "static__registers_per_thread", 32.0, 40.0, True, allowed="unrolled"),
    ]
    text = export.to_html(RunOutcome([FileResult(Path("f.yaml"), [])], Comparison(moves, [])))
    section = text[text.index('<section id="baseline">') : text.index('<section id="claims">')]
    assert section.count("<svg") == 1
    rows = [row for row in section.split("<tr")[1:] if "<td>" in row]
    assert [row.split('"')[1] for row in rows] == ["failed", "passed", "allowed"]
    assert "allowed: unrolled" in section and "150" in section


@pytest.mark.slow
def test_audit_writes_the_report_with_the_documents_against_the_hardware(tmp_path):
    from cli_invoke import invoke_command

    page = tmp_path / "audit.html"
    done = invoke_command(
        "audit", str(DATA / "sample.yaml"), "--from-profile", str(FIXTURES), "--html", str(page)
    )
    assert done.exit_code == 0, done.output
    text = page.read_text()
    assert "<title>ncuverify audit</title>" in text and '<section id="audit">' in text
    assert len(Page(text).rows) == 8


def test_chart_labels_from_files_are_text_not_formulas():
    from ncuverify.baseline.snapshot import Change

    hostile = r"$\frac{1}{$ <b>x</b> \x1b[2J"
    changes = [Change(hostile, hostile, hostile, 1.0, 2.0, True)]
    text = export.to_html(RunOutcome([FileResult(Path("f.yaml"), [])], Comparison(changes, [])))
    assert "<b>x</b>" not in text and "\x1b" not in text
    assert r"$\frac{1}{$" in text.replace("&lt;", "<")


@pytest.mark.slow
def test_long_ids_and_metric_names_may_break_after_underscores_and_dots_and_read_whole(suite):
    text = export.to_html(suite)
    # where a name may break, so that the claims table fits a window
    assert "<code>s61_<wbr>classic_<wbr>ldg_<wbr>then_<wbr>sts</code>" in text
    assert "smsp__<wbr>sass_<wbr>inst_<wbr>executed_<wbr>op_<wbr>ldgsts.<wbr>sum" in text
    cells = {row["cells"][0]: row["cells"][2] for row in Page(text).rows}
    assert cells["s61_ldgsts_executed"] == "smsp__sass_inst_executed_op_ldgsts.sum"


def test_the_summary_says_how_many_claims_were_set_aside(no_gpu):
    options = CheckOptions(cache=COMPILE_CACHE, static_only=True)
    nothing = export.to_html(check_files([DATA / "sample.yaml"], options))
    said = "nothing could be judged here: 8 claims need a GPU (--static-only set them aside)"
    assert f'<p class="problem" id="verdict">ncuverify: {said}</p>' in nothing
    assert "<td>8 set aside (they need a GPU: --static-only)</td>" in nothing
    some = export.to_html(check_files([DATA / "sample.yaml", DATA / "static.yaml"], options))
    assert "6 passed, 9 set aside (they need a GPU: --static-only)" in some
    assert 'class="problem"' not in some.split("<style>")[0] + some.split("</style>")[1]
