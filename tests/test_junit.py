"""The JUnit XML: read by a CI system's parser, and well-formed whatever the texts hold."""

import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest
from conftest import DATA
from exported_results import ATTACKS, PRINTED, hostile, judged_sample, mixed_results, static_only
from hypothesis import given, settings

from ncuverify import export
from ncuverify.results import FileResult
from ncuverify.text import printable

# A development dependency (the CI parser); machines with only the runtime packages skip these tests.
junitparser = pytest.importorskip("junitparser", reason="junitparser (a dev dependency) is not installed")
Error, Failure, JUnitXml, Skipped = (
    junitparser.Error,
    junitparser.Failure,
    junitparser.JUnitXml,
    junitparser.Skipped,
)


@pytest.fixture(scope="module")
def mixed() -> list[FileResult]:
    return mixed_results(judged_sample())


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


@settings(max_examples=100, deadline=None)
@given(PRINTED)
def test_junit_of_any_text_is_xml(text):
    ElementTree.fromstring(export.to_junit([hostile(text)]))


def test_claims_set_aside_are_a_skipped_case_of_their_file(tmp_path):
    # a CI system must not show a file whose claims were set aside (--static-only) all green
    path = tmp_path / "results.xml"
    path.write_text(export.to_junit([static_only(DATA / "sample.yaml"), static_only(DATA / "static.yaml")]))
    aside, judged = list(JUnitXml.fromfile(str(path)))
    assert (aside.tests, aside.skipped, aside.failures, aside.errors) == (1, 1, 0, 0)
    (case,) = list(aside)
    assert case.name == "set aside"
    assert (
        case.result[0].message
        == "nothing could be judged here: 8 claims need a GPU (--static-only set them aside)"
    )
    (skipped,) = [case for case in judged if case.result and isinstance(case.result[0], Skipped)]
    assert (
        skipped.name == "set aside"
        and skipped.result[0].message == "1 set aside (they need a GPU: --static-only)"
    )
    assert judged.tests == 7 and judged.skipped == 1
