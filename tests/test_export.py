"""JSON, JUnit and Markdown outputs, from results of real recordings judged without a GPU."""

import json
import re
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest
from conftest import DATA, FIXTURES
from hypothesis import example, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from ncuverify import export
from ncuverify.cli import app
from ncuverify.environment import Environment
from ncuverify.errors import ExitCode
from ncuverify.explain import Explanation, RuleFinding, SourceLine
from ncuverify.options import CheckOptions
from ncuverify.pipeline import check_file
from ncuverify.results import ClaimResult, FileResult, Verdict
from ncuverify.spec import Claim
from ncuverify.text import printable

# A development dependency (the CI parser); machines with only the runtime packages skip these tests.
junitparser = pytest.importorskip("junitparser", reason="junitparser (a dev dependency) is not installed")
Error, Failure, JUnitXml, Skipped = (
    junitparser.Error,
    junitparser.Failure,
    junitparser.JUnitXml,
    junitparser.Skipped,
)

NO_GPU = Environment(gpu=None, ncu=None, problem="no NVIDIA GPU: test")


@pytest.fixture(scope="module")
def sample() -> FileResult:
    return check_file(DATA / "sample.yaml", CheckOptions(from_profile=FIXTURES), NO_GPU)


@pytest.fixture(scope="module")
def mixed(sample) -> list[FileResult]:
    """The sample's results with one claim failed, one erred and one skipped, and a wrong file."""
    claims = list(sample.claims)
    claims[0] = ClaimResult(claims[0].claim, Verdict.FAILED, 5.0, "measured 5, expected == 4")
    claims[1] = ClaimResult(
        claims[1].claim, Verdict.ERROR, reason="case stride32 did not run: CUDA_ERROR_ILLEGAL_ADDRESS"
    )
    claims[2] = ClaimResult(claims[2].claim, Verdict.SKIPPED, reason="no GPU")
    broken = FileResult(Path("broken.yaml"), [], input_error="broken.yaml:3: kernels: missing")
    return [
        FileResult(
            sample.path, claims, provenance=sample.provenance, replayed=True, measurements=sample.measurements
        ),
        broken,
    ]


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


def test_a_file_is_known_by_its_path_in_the_project_in_json_and_junit(sample):
    (record,) = json.loads(export.to_json([sample]))["files"]
    assert record["key"] == "tests/data/sample.yaml" and record["path"] == str(sample.path)
    assert [result.key for result in export.from_json(export.to_json([sample]))] == ["tests/data/sample.yaml"]
    assert 'classname="tests/data/sample.yaml"' in export.to_junit([sample])


def test_results_of_an_earlier_version_without_keys_are_known_by_their_paths(sample):
    document = json.loads(export.to_json([sample]))
    del document["files"][0]["key"]
    (result,) = export.from_json(json.dumps(document))
    assert result.key == "tests/data/sample.yaml"


def test_junit_is_read_by_a_ci_parser(mixed, tmp_path):
    path = tmp_path / "results.xml"
    path.write_text(export.to_junit(mixed))
    suites = list(JUnitXml.fromfile(str(path)))
    sample_suite, broken_suite = suites
    assert (sample_suite.tests, sample_suite.failures, sample_suite.errors, sample_suite.skipped) == (
        len(mixed[0].claims),
        1,
        1,
        1,
    )
    cases = {case.name: case for case in sample_suite}
    (failure,) = cases["contiguous_four_sectors"].result
    assert isinstance(failure, Failure) and "measured 5, expected == 4" in failure.message
    assert isinstance(cases["stride32_sectors"].result[0], Error)
    assert isinstance(cases["one_request_per_warp"].result[0], Skipped)
    assert cases["stride32_sector_ratio"].is_passed
    assert broken_suite.errors == 1 and "kernels: missing" in next(iter(broken_suite)).result[0].text


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


def test_check_writes_all_three(tmp_path):
    result = CliRunner().invoke(
        app,
        [
            "check",
            str(DATA / "sample.yaml"),
            "--from-profile",
            str(FIXTURES),
            "--json",
            str(tmp_path / "r.json"),
            "--junit-xml",
            str(tmp_path / "r.xml"),
            "--markdown",
            str(tmp_path / "r.md"),
        ],
    )
    assert result.exit_code == ExitCode.OK, result.stdout
    assert json.loads((tmp_path / "r.json").read_text())["exit_code"] == 0
    assert JUnitXml.fromfile(str(tmp_path / "r.xml"))
    assert (tmp_path / "r.md").read_text().startswith("## ncuverify: every claim holds")


@pytest.fixture(scope="module")
def explained() -> FileResult:
    return check_file(DATA / "explain.yaml", CheckOptions(from_profile=FIXTURES), NO_GPU)


def test_explanations_travel_in_every_output(explained, tmp_path: Path):
    assert set(explained.explanations) == {"gather_is_coalesced", "tile_is_conflict_free"}
    document = json.loads(export.to_json([explained]))
    lines = document["files"][0]["explanations"]["tile_is_conflict_free"]["lines"]
    assert lines[0]["line"] == 14 and lines[0]["excess"] == 253952
    # A shard's JSON merges back with its explanations.
    assert export.from_json(export.to_json([explained]))[0].explanations == explained.explanations
    markdown = export.to_markdown([explained])
    assert "### What ncu says about them" in markdown
    assert "explain.cu:6  out\\[t\\] = in\\[t \\* 32\\];" in markdown
    junit = tmp_path / "junit.xml"
    junit.write_text(export.to_junit([explained]))
    failures = {
        case.name: result.text
        for suite in JUnitXml.fromfile(str(junit))
        for case in suite
        for result in case.result
        if isinstance(result, Failure)
    }
    assert "explain.cu:14  out[t] = tile[threadIdx.x][threadIdx.y];" in failures["tile_is_conflict_free"]


# --- what a file's text can hold ---------------------------------------------------------------------

ATTACKS = [
    "\x00\x01\x1b[2J\x1b]0;owned\x07",  # NUL, a control character, a screen clear, a terminal title
    "<script>alert(1)</script><img src=x onerror=alert(1)>",
    "a | b\n| --- |\n# heading\n> quote\n- item\n1. item",
    "`code` ``` ~~~ ***bold*** [link](https://evil.example) ![img](x) $x^2$ \\ &amp;",
    "\u202eevil\u2066 \ud800 \ufffe \r\n\t end",
]


def hostile(text: str) -> FileResult:
    """A result whose every free text (path, citation, note, reason, messages, warnings, what ncu said)
    is the given text."""
    claim = Claim.model_validate(
        {
            "id": "hostile",
            "case": "c",
            "metric": "a.sum",
            "expect": {"equals": 1},
            "cite": {"document": text, "section": text, "figure": text, "holds": "no"},
            "note": text or "-",
        }
    )
    explanation = Explanation(
        kernel=text,
        topic="global",
        rules=(RuleFinding(rule=text, section=text, severity="OPT", text=text, speedup_pct=None),),
        lines=(SourceLine(file=text, line=3, text=text, excess=1.0, share=1.0),),
    )
    claims = [
        ClaimResult(claim, Verdict.FAILED, 2.0, text),
        ClaimResult(claim.model_copy(update={"id": "erred"}), Verdict.ERROR, reason=text),
        ClaimResult(claim.model_copy(update={"id": "skipped"}), Verdict.SKIPPED, reason=text),
    ]
    return FileResult(
        Path(f"{text}.yaml"),
        claims,
        input_error=text,
        internal_error=text,
        not_run=text,
        warnings=[text],
        explanations={"hostile": explanation},
    )


@pytest.mark.parametrize("text", ATTACKS)
def test_junit_is_well_formed_whatever_the_text(text, tmp_path: Path):
    xml = export.to_junit([hostile(text)])
    root = ElementTree.fromstring(xml)
    (suite,) = root
    assert suite.get("tests") == "6" and suite.get("errors") == "3" and suite.get("failures") == "1"
    path = tmp_path / "results.xml"
    path.write_text(xml)
    (parsed,) = JUnitXml.fromfile(str(path))
    cases = {case.name: case for case in parsed}
    assert set(cases) == {"input", "internal", "not run", "hostile", "erred", "skipped"}
    (internal,) = cases["internal"].result
    assert isinstance(internal, Error) and internal.message == "ncuverify failed on this file"
    assert internal.text == printable(text)
    assert isinstance(cases["not run"].result[0], Skipped)


def test_junit_writes_control_characters_as_visible_escapes():
    xml = export.to_junit([hostile(ATTACKS[0])])
    assert "\x1b" not in xml and "\x00" not in xml
    assert 'message="a.sum: measured 2, expected == 1 (\\x00\\x01\\x1b[2J\\x1b]0;owned\\x07)"' in xml


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


def assert_safe_markdown(text: str) -> None:
    assert "<" not in text and ">" not in text.replace("\n>", "")  # no HTML at all
    lines = text.splitlines()
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


def test_markdown_escapes_html_pipes_and_markup():
    markdown = export.to_markdown([hostile(ATTACKS[1]), hostile(ATTACKS[2]), hostile(ATTACKS[3])])
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;" in markdown
    assert "| failed | a \\| b \\| --- \\| # heading &gt; quote - item 1. item |" in markdown
    assert "- \\# heading" in markdown and "- \\- item" in markdown and "- 1\\. item" in markdown
    assert (
        "\\`code\\` \\`\\`\\` \\~\\~\\~ \\*\\*\\*bold\\*\\*\\* \\[link\\](https://evil.example)"
        " !\\[img\\](x) \\$x^2\\$ \\\\ &amp;amp;"
    ) in markdown


def test_results_that_ncuverify_failed_on_are_in_every_output(tmp_path: Path):
    failed = FileResult(Path("f.yaml"), [], internal_error="ncuverify failed on f.yaml: see /tmp/t.txt")
    document = json.loads(export.to_json([failed]))
    assert document["exit_code"] == ExitCode.INTERNAL_ERROR
    (back,) = export.from_json(json.dumps(document))
    assert back.internal_error == "ncuverify failed on f.yaml: see /tmp/t.txt"
    markdown = export.to_markdown([failed])
    assert markdown.startswith("## ncuverify: ncuverify failed on a file")
    assert "| `f.yaml` | internal error |  |  |  |  |" in markdown
    assert "`f.yaml`: internal error\n\n- ncuverify failed on f.yaml: see /tmp/t.txt" in markdown
    (case,) = ElementTree.fromstring(export.to_junit([failed]))[0]
    assert case.get("name") == "internal" and case[0].tag == "error"


PRINTED = st.text(alphabet=st.characters(exclude_categories=()), max_size=40)


@settings(max_examples=100, deadline=None)
@given(PRINTED)
def test_junit_of_any_text_is_xml(text):
    ElementTree.fromstring(export.to_junit([hostile(text)]))


@settings(max_examples=100, deadline=None)
@given(PRINTED)
@example("\u2028")  # a line separator, which splits a line for some readers
def test_markdown_of_any_text_renders_no_markup_from_it(text):
    assert_safe_markdown(export.to_markdown([hostile(text)]))


def test_run_identity_in_the_json(sample):
    document = json.loads(export.to_json([sample], shard=export.ShardOf(2, 3, "f" * 64)))
    assert document["run"] == {"suite": "f" * 64, "shard": [2, 3]}
    whole = json.loads(export.to_json([sample]))
    assert whole["run"] == {"suite": export.suite_digest([sample.path]), "shard": [1, 1]}
