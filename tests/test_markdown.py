"""The Markdown summary: what did not hold, and every text from a file or from ncu shown, never rendered."""

import re
from pathlib import Path

import pytest
from conftest import DATA
from exported_results import ATTACKS, PRINTED, hostile, judged_sample, mixed_results, static_only
from hypothesis import example, given, settings

from ncuverify import export
from ncuverify.results import FileResult


@pytest.fixture(scope="module")
def mixed() -> list[FileResult]:
    return mixed_results(judged_sample())


def test_markdown_summarises_what_did_not_hold(mixed):
    text = export.to_markdown(mixed)
    assert text.startswith("## ncuverify: an expectation file is wrong")
    assert "| `tests/data/sample.yaml` | 5 | 1 | 1 | 1 | 0 |" in str(text).replace(
        str(DATA.parent.parent) + "/", ""
    )
    assert (
        "| `sample.yaml` | `contiguous_four_sectors` | 5 | == 4 | failed | measured 5, expected == 4 |"
        in text
    )
    assert "replayed from a recording made on NVIDIA H200" in text
    assert "broken.yaml:3: kernels: missing" in text


def unescaped(line: str, char: str) -> int:
    """How many times char occurs in a Markdown line, not written as \\char."""
    count, escaped = 0, False
    for c in line:
        if escaped:
            escaped = False
        elif c == "\\":
            escaped = True
        elif c == char:
            count += 1
    return count


PIE = re.compile(r'```mermaid\npie showData title Claims by verdict\n(    "[a-z_]+" : [0-9]+\n)+```\n')


def assert_safe_markdown(text: str) -> None:
    assert "<" not in text and ">" not in text.replace("\n>", "")  # no HTML at all
    assert len(PIE.findall(text)) <= 1, "ncuverify's own chart, its words and numbers alone"
    lines = PIE.sub("", text).splitlines()
    for line in lines:
        if line.startswith("|"):
            assert unescaped(line, "|") == 7, line  # six cells, however many pipes the text held
        if line.startswith("#"):
            assert line.startswith("## ncuverify: ") or line.startswith("### What "), line
        # Code spans hold only plain names: backticks elsewhere are escaped.
        assert unescaped(re.sub(r"`[\w./:+-]+`", "", line), "`") == 0, line
        assert "\x1b" not in line and "\x00" not in line and "\u202e" not in line
        if line.startswith("- ") or line.startswith("  - "):
            assert not re.match(r"\s*- ([-+#>=]|\d+[.)]|    )", line), line


@pytest.mark.parametrize("text", ATTACKS)
def test_markdown_shows_the_text_and_renders_none_of_it(text):
    markdown = export.to_markdown([hostile(text)])
    assert_safe_markdown(markdown)


def test_the_verdicts_are_a_pie_chart_the_forge_draws():
    from ncuverify.results import ClaimResult, FileResult, Verdict

    first, second = hostile(ATTACKS[0]).claims[0].claim, hostile(ATTACKS[1]).claims[0].claim
    results = [
        FileResult(
            Path("a.yaml"),
            [ClaimResult(first, Verdict.PASSED, 4.0), ClaimResult(second, Verdict.FAILED, 5.0)],
        ),
        FileResult(Path("b.yaml"), [ClaimResult(first, Verdict.PASSED, 4.0)]),
    ]
    found = PIE.search(export.to_markdown(results))
    assert found is not None
    assert found.group() == (
        '```mermaid\npie showData title Claims by verdict\n    "passed" : 2\n    "failed" : 1\n```\n'
    )


def test_markdown_escapes_html_pipes_and_markup():
    markdown = export.to_markdown([hostile(ATTACKS[1]), hostile(ATTACKS[2]), hostile(ATTACKS[3])])
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;" in markdown
    assert "| failed | a \\| b \\| --- \\| # heading &gt; quote - item 1. item |" in markdown
    assert "- \\# heading" in markdown and "- \\- item" in markdown and "- 1\\. item" in markdown
    assert (
        "\\`code\\` \\`\\`\\` \\~\\~\\~ \\*\\*\\*bold\\*\\*\\* \\[link\\](https://evil.example)"
        " !\\[img\\](x) \\$x^2\\$ \\\\ &amp;amp;"
    ) in markdown


@settings(max_examples=100, deadline=None)
@given(PRINTED)
@example("\u2028")  # a line separator, which splits a line for some readers
def test_markdown_of_any_text_renders_no_markup_from_it(text):
    assert_safe_markdown(export.to_markdown([hostile(text)]))


def test_claims_set_aside_are_said_and_a_run_that_judged_nothing_is_no_pass():
    only_profiler, some_static = static_only(DATA / "sample.yaml"), static_only(DATA / "static.yaml")
    nothing = export.to_markdown([only_profiler])
    assert nothing.startswith(
        "## ncuverify: nothing could be judged here: 8 claims need a GPU (--static-only set them aside)\n"
    )
    assert "- `sample.yaml`: 8 set aside (they need a GPU: --static-only)" in nothing
    some = export.to_markdown([only_profiler, some_static])
    assert some.startswith(
        "## ncuverify: every claim judged holds; 9 set aside (they need a GPU: --static-only)"
    )
    assert "every claim holds" not in some
    assert_safe_markdown(some)


# --- cut to a size -----------------------------------------------------------------------------------


def many_failing(sample: FileResult, files: int = 20) -> list[FileResult]:
    """The sample's results with every claim failed, as many files: a summary of many rows."""
    from ncuverify.results import ClaimResult, Verdict

    claims = [ClaimResult(c.claim, Verdict.FAILED, 5.0, "measured 5, expected == 4") for c in sample.claims]
    return [FileResult(Path(f"f{n}/sample.yaml"), claims) for n in range(files)]


PROBLEM_ROW = re.compile(r"^\| `sample\.yaml` \| `")


def test_a_cut_summary_keeps_whole_rows_and_says_how_many_claims_are_not_shown(mixed):
    results = many_failing(mixed[0])
    whole = export.to_markdown(results)
    rows = sum(1 for line in whole.splitlines() if PROBLEM_ROW.match(line))
    limit = len(whole.encode()) // 2
    cut = export.to_markdown(results, max_bytes=limit)
    assert len(cut.encode()) <= limit
    *kept, blank, last = cut.rstrip("\n").split("\n")
    assert kept == whole.split("\n")[: len(kept)], "whole lines of the summary, from its start"
    assert blank == "", "a blank line ends the table the last line would join"
    shown = sum(1 for line in kept if PROBLEM_ROW.match(line))
    assert 0 < shown < rows
    assert last == f"{rows - shown} more claims not shown: the summary is cut to fit in {limit} bytes"
    assert kept[-1].startswith("| ") and kept[-1].endswith(" |"), "the cut falls between rows"
    assert_safe_markdown(cut)


def test_a_summary_that_fits_is_not_cut_and_a_tiny_limit_leaves_the_last_line(mixed):
    whole = export.to_markdown(mixed)
    assert export.to_markdown(mixed, max_bytes=len(whole.encode())) == whole
    tiny = export.to_markdown(many_failing(mixed[0]), max_bytes=10)
    assert tiny.startswith("160 more claims not shown") and tiny.count("\n") == 1


def test_markdown_max_bytes_cuts_the_markdown_file_of_check(tmp_path):
    from cli_invoke import invoke
    from conftest import FIXTURES

    out = tmp_path / "r.md"
    args = ("--from-profile", str(FIXTURES), "--markdown", str(out), str(DATA / "explain.yaml"))
    assert invoke(*args).exit_code == 1
    whole = out.read_text()
    assert invoke(*args, "--markdown-max-bytes", "1024").exit_code == 1
    cut = out.read_text()
    assert len(cut.encode()) <= 1024 < len(whole.encode())
    assert cut.endswith(" bytes\n") and "not shown" in cut
    refused = invoke(*args, "--markdown-max-bytes", "100")
    assert refused.exit_code == 2 and "--markdown-max-bytes" in refused.output


def test_against_a_baseline_every_regression_is_listed_and_improvements_are_cut_short():
    from ncuverify.baseline.ratchet import Comparison, KernelMove
    from ncuverify.baseline.snapshot import Change
    from ncuverify.export import RunOutcome

    regressions = [Change("f.yaml", f"r{i}", "static__registers_per_thread", 8, 16, True) for i in range(25)]
    improvements = [
        Change("f.yaml", f"i{i}", "static__registers_per_thread", 16, 8, False) for i in range(30)
    ]
    moves = [KernelMove("f.yaml", "gemms[new<1>]", True)]
    outcome = RunOutcome([FileResult(Path("f.yaml"), [])], Comparison([*improvements, *regressions], moves))
    markdown = export.to_markdown(outcome)
    assert markdown.startswith("## ncuverify: 25 measures regressed against the baseline\n")
    assert "25 regressed, 30 improved, 0 grew as the allow-list accepts" in markdown
    assert markdown.count("| **regressed** |") == 25 and markdown.count("| improved |") == 20
    assert "and 10 more improvements" in markdown
    assert (
        "1 kernels added since the baseline (not a failure):\n\n- f.yaml: gemms\\[new&lt;1&gt;\\]" in markdown
    )
