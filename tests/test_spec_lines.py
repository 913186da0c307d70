"""Where a loaded file writes each claim and case: a sweep's claims at the claim written, a sequence's
steps at the step written, anything unknown at the file's first line."""

from pathlib import Path

from conftest import DATA
from sweep_files import SWEPT_COPY, claim, loaded
from test_spec_sequences import TWO_STEPS

from ncuverify.spec import load


def _line_of(path: Path, text: str) -> int:
    """The first line that is text, or ends with it."""
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if line.endswith(text))


def test_each_claim_and_case_is_at_the_line_the_file_writes_it():
    spec = load(DATA / "sample.yaml")
    for written in spec.content.claims:
        assert spec.lines.claim(written.id) == _line_of(DATA / "sample.yaml", f"- id: {written.id}")
    assert spec.lines.case("stride32") == _line_of(DATA / "sample.yaml", "  stride32:")


def test_a_swept_claim_is_at_the_claim_written(tmp_path):
    spec = loaded(tmp_path, SWEPT_COPY, claim("first", "copy") + claim("second", "copy"))
    written = _line_of(tmp_path / "sweep.yaml", "- id: second")
    swept = [c.id for c in spec.content.claims if c.id.startswith("second")]
    assert len(swept) == 2
    assert {spec.lines.claim(claim_id) for claim_id in swept} == {written}
    copy = _line_of(tmp_path / "sweep.yaml", "cases:") + 1
    assert {spec.lines.case(name) for name in spec.content.cases} == {copy}


def test_a_step_is_at_the_step_written_and_the_unknown_at_the_first_line(tmp_path):
    spec = loaded(tmp_path, TWO_STEPS, claim("sectors", "reduce#2"))
    lines = (tmp_path / "sweep.yaml").read_text().splitlines()
    assert lines[spec.lines.case("reduce#2") - 1].strip().startswith("- kernel: copy")
    assert spec.lines.case("reduce#2") > spec.lines.case("reduce#1")
    assert (spec.lines.claim("nothing"), spec.lines.case("nothing")) == (1, 1)


def test_a_launch_of_combine_each_is_at_its_claim_and_case():
    spec = load(DATA / "sample.yaml")
    claim = spec.content.claims[0].id
    assert spec.lines.claim(f"{claim}#2") == spec.lines.claim(claim) > 1
    assert spec.lines.case("stride32#3") == spec.lines.case("stride32") > 1


def test_a_kernel_of_a_set_is_at_its_kernel_entry_and_a_case_not_written_nowhere():
    spec = load(DATA / "regression.yaml")
    assert spec.lines.case_line("reader[read_stride<1>]") == _line_of(DATA / "regression.yaml", "  reader:")
    assert spec.lines.case_line("read#2") == spec.lines.case_line("read") == 15
    assert spec.lines.case_line("nothing") is None and spec.lines.case_line("other[k]") is None
    assert spec.lines.case_line("x.yaml::read") is None  # a file's case is named within its file
