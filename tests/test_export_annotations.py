"""GitHub workflow commands: one per finding at its line, a notice at the kernel source line, at most
ten of each level then a notice counting the rest, and no text of a file ever a command of its own."""

import re
from dataclasses import replace

import pytest
from exported_results import ATTACKS, hostile, judged_explained, judged_sample

from ncuverify.baseline.snapshot import Change
from ncuverify.export.annotations import MAX_SHOWN, command, github_actions, to_annotations
from ncuverify.export.findings import Place
from ncuverify.results import ClaimResult, FileResult, Verdict

# How a runner splits its log into lines, and the commands ncuverify writes.
LINE_BREAKS = re.compile("\r\n|[\r\n\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")
OURS = re.compile(r"::(error|warning|notice) (file=[^,:\r\n]*,line=[0-9]+,)?title=[^:]*::[^\r\n]*")


def all_failed(sample: FileResult, copies: int = 1) -> list[FileResult]:
    claims = [ClaimResult(c.claim, Verdict.FAILED, 5.0, "measured 5, expected == 4") for c in sample.claims]
    return [replace(sample, claims=claims)] * copies


def test_each_failing_claim_is_an_error_at_its_line_and_ncus_source_line_a_notice():
    explained = judged_explained()
    lines = to_annotations([explained])
    assert explained.spec is not None
    line = explained.spec.lines.claim("gather_is_coalesced")
    assert lines[0].startswith(
        f"::error file=tests/data/explain.yaml,line={line},title=ncuverify%3A claim failed%3A gather_is_coalesced::"
    )
    assert "measured 32, expected == 4%0Asource: explain.txt" in lines[0]
    assert lines[1].startswith(
        "::notice file=tests/data/explain.cu,line=6,title=ncuverify%3A claim failed%3A "
    )
    assert [a.split(" ", 1)[0] for a in lines] == ["::error", "::notice", "::error", "::notice"]


def test_set_aside_claims_and_warnings_are_warnings():
    sample = judged_sample()
    lines = to_annotations([replace(sample, set_aside=3, warnings=["old 100%"])])
    assert lines == [
        "::warning file=tests/data/sample.yaml,line=1,title=ncuverify%3A claims set aside::"
        "3 set aside (they need a GPU: --static-only): not judged, so not shown as passing",
        "::warning file=tests/data/sample.yaml,line=1,title=ncuverify%3A warning::old 100%25",
    ]


def test_at_most_ten_of_each_level_then_one_notice_counts_the_rest():
    sample = judged_sample()
    results = all_failed(sample, copies=3)  # 24 failing claims
    results += [replace(sample, claims=[], warnings=[f"w{n}" for n in range(12)])]
    regressed = Change(sample.key, "stride32", "gpu__time_duration.sum", 2.0, 4.0, worse=True)
    lines = to_annotations(results, [regressed])
    levels = [line.split(" ", 1)[0] for line in lines]
    assert levels.count("::error") == MAX_SHOWN and levels.count("::warning") == MAX_SHOWN
    assert lines[-1] == (
        "::notice title=ncuverify::15 more failing claims, errors and regressions; 2 more warnings:"
        " see the job summary"
    )
    assert len(lines) == 2 * MAX_SHOWN + 1


def test_a_run_without_findings_writes_nothing():
    sample = judged_sample()
    assert sample.claims and to_annotations([sample]) == []


@pytest.mark.parametrize("text", [*ATTACKS, "x\n::error::forged%0A\r\n::warning file=a,line=1::b %25 ,:"])
def test_no_text_of_a_file_starts_a_command_of_its_own(text):
    lines = to_annotations([hostile(text)])
    assert lines
    for written in lines:
        assert len(LINE_BREAKS.split(written)) == 1, written
        assert OURS.fullmatch(written), written
    if "::error::forged" in text:
        assert "x%0A::error::forged%250A\\x0d%0A::warning file=a,line=1::b %2525 ,:" in lines[0]


def test_properties_escape_what_would_end_them():
    place = Place("a,b:c%d\ne.yaml", 3)
    assert command("error", place, "t:1,2", "m") == (
        "::error file=a%2Cb%3Ac%25d%0Ae.yaml,line=3,title=ncuverify%3A t%3A1%2C2::m"
    )


def test_github_actions_is_the_runners_variable():
    assert github_actions({"GITHUB_ACTIONS": "true"})
    assert not github_actions({}) and not github_actions({"GITHUB_ACTIONS": "false"})
