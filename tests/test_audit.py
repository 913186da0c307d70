import re
from pathlib import Path

import pytest
from conftest import DATA, EXPECTATIONS, FIXTURES, RECORDINGS, ROOT
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console
from typer.testing import CliRunner

from ncuverify.cli import app
from ncuverify.errors import ExitCode
from ncuverify.report import audit
from ncuverify.results import ClaimResult, Verdict
from ncuverify.spec import Claim, Expectation


def claim(holds: str, note: str | None = None) -> Claim:
    return Claim(
        id="c",
        case="a",
        metric="m.sum",
        expect=Expectation(equals=4),
        cite={"document": "doc.txt", "section": "2.10", "figure": "four", "value": 32, "holds": holds},
        note=note,
    )


@pytest.mark.parametrize(
    ("holds", "verdict", "expected"),
    [
        ("yes", Verdict.PASSED, audit.HOLDS),
        ("approximately", Verdict.PASSED, audit.APPROXIMATELY),
        ("no", Verdict.PASSED, audit.DOES_NOT_HOLD),
        ("yes", Verdict.FAILED, audit.UNSETTLED),
        ("no", Verdict.ERROR, audit.UNSETTLED),
        ("yes", Verdict.XPASSED, audit.UNSETTLED),
        ("yes", Verdict.SKIPPED, audit.NOT_MEASURED),
        ("yes", Verdict.OTHER_ARCH, audit.NOT_MEASURED),
    ],
)
def test_verdicts(holds, verdict, expected):
    note = None if holds == "yes" else "why"
    assert audit.verdict_of(ClaimResult(claim(holds, note), verdict, 4.0)) == expected


def test_a_row_shows_the_figure_the_measurement_and_the_reason():
    row = audit.row(ClaimResult(claim("no", "sectors are 32 B"), Verdict.PASSED, 4.0))
    assert row == audit.AuditRow(
        "doc.txt", "2.10", "c", "four (32)", "4 (asserted == 4)", audit.DOES_NOT_HOLD, "sectors are 32 B"
    )


def test_sections_sort_as_numbers():
    assert sorted(["2.10", "2.9", "App Q1", "10"], key=audit._section_key) == ["2.9", "2.10", "10", "App Q1"]


def test_audit_of_a_recording_as_markdown(tmp_path: Path):
    out = tmp_path / "audit.md"
    result = CliRunner().invoke(
        app, ["audit", str(DATA / "sample.yaml"), "--from-profile", str(FIXTURES), "--markdown", str(out)]
    )
    assert result.exit_code == ExitCode.OK, result.stdout
    text = out.read_text()
    assert "Made by `ncuverify audit` from a recording of a run on NVIDIA H200 (sm_90)" in text
    assert "Nsight Compute 2025.3.1" in text
    assert (
        "| 2 | `stride32_sector_ratio` | stride 32 is 32x the traffic (32) | 8 (asserted == 8) | does not hold here |"
        in text
    )
    assert "audit: 7 holds, 1 does not hold here" in result.stdout


def test_the_committed_audit_is_what_the_tool_makes_of_the_committed_recording(tmp_path: Path):
    out = tmp_path / "audit.md"
    CliRunner().invoke(
        app, ["audit", str(EXPECTATIONS), "--from-profile", str(RECORDINGS), "--markdown", str(out)]
    )
    assert out.read_text() == (ROOT / "docs" / "claims-audit-h200.md").read_text()


def test_missing_recording_is_an_input_error(tmp_path: Path):
    result = CliRunner().invoke(app, ["check", str(DATA / "sample.yaml"), "--from-profile", str(tmp_path)])
    assert result.exit_code == ExitCode.BAD_INPUT
    assert f"no recording of sample in {tmp_path}" in result.stdout


def test_replay_needs_no_gpu_and_says_where_the_figures_come_from():
    result = CliRunner().invoke(app, ["check", str(DATA / "sample.yaml"), "--from-profile", str(FIXTURES)])
    assert result.exit_code == ExitCode.OK, result.stdout
    assert "replayed from a recording made on NVIDIA H200 (sm_90, driver 580" in result.stdout


def test_a_changed_kernel_is_flagged_on_replay(tmp_path: Path):
    changed = tmp_path / "sample.yaml"
    changed.write_text(
        (DATA / "sample.yaml")
        .read_text()
        .replace("out[i] = factor * in[i];", "out[i] = factor * in[i] + 0.0f;")
    )
    result = CliRunner().invoke(app, ["check", str(changed), "--from-profile", str(FIXTURES)])
    assert "warning: kernel scale changed since it was recorded" in result.stdout


def test_the_audit_shows_a_files_markup_and_escape_sequences_as_text():
    result = CliRunner().invoke(app, ["audit", "--arch", "sm_90", str(DATA / "hostile_text.yaml")])
    assert "\x1b" not in result.stdout
    for shown in (
        "[bold red]x[/]",
        "a[i].txt",
        "\\x1b[2Jcleared",
        "[blink]doc[/blink]",
        "a[i] :smile: \\x1b[2J (1)",
    ):
        assert shown in result.stdout, shown
    console = Console(record=True, width=300)
    row = audit.AuditRow("[b]d", "\x1b[2J", "c", "[link=x]f[/link]", "1", audit.HOLDS, "\u202ewhy")
    console.print(audit.table([row]))
    shown = console.export_text()
    assert all(s in shown for s in ("[b]d", "\\x1b[2J", "[link=x]f[/link]", "\\u202ewhy"))


def test_the_audit_markdown_cannot_be_made_to_render_html_or_break_its_table():
    row = audit.AuditRow(
        "doc <script>",
        "1",
        "c",
        "<img src=x onerror=alert(1)> a|b \\| c",
        "x < 5, x <= 6",
        audit.HOLDS,
        "</td>\n&amp;",
    )
    text = audit.markdown([row], None, replayed=False)
    line = next(line for line in text.splitlines() if line.startswith("| 1 |"))
    assert line == (
        "| 1 | `c` | &lt;img src=x onerror=alert(1)> a\\|b \\\\\\| c | x < 5, x <= 6 | holds | &lt;/td> &amp;amp; |"
    )
    assert "## doc &lt;script>" in text
    assert line.count(" | ") == 5  # six cells, however the text tried to make more


def test_a_file_whose_rows_cannot_be_made_is_one_line_and_the_others_are_audited(monkeypatch, tmp_path):
    real_rows = audit.audit_rows

    def broken_on_static(results):
        if results[0].path.name == "static.yaml":
            raise AttributeError("no rows")
        return real_rows(results)

    monkeypatch.setattr(audit, "audit_rows", broken_on_static)
    out = tmp_path / "audit.md"
    result = CliRunner().invoke(
        app,
        [
            "audit",
            str(DATA / "static.yaml"),
            str(DATA / "sample.yaml"),
            "--from-profile",
            str(FIXTURES),
            "--markdown",
            str(out),
        ],
    )
    assert result.exit_code == ExitCode.INTERNAL_ERROR
    assert (
        f"{DATA / 'static.yaml'}: internal error: AttributeError: no rows, please report it with"
        in result.stdout
    )
    assert "audit: 7 holds, 1 does not hold here" in result.stdout  # sample.yaml's rows
    assert "`stride32_sector_ratio`" in out.read_text()


def test_a_section_in_superscript_digits_sorts_as_text():
    assert sorted(["²", "2", "1" * 5000, "10"], key=audit._section_key) == ["2", "10", "1" * 5000, "²"]


@given(
    sections=st.lists(st.text(max_size=30), min_size=1, max_size=6),
    texts=st.lists(st.text(max_size=40), min_size=4, max_size=4),
)
@settings(max_examples=60, deadline=None)
def test_any_rows_sort_and_render_as_text_and_as_one_markdown_row_each(sections, texts):
    document, figure, measured, reason = texts
    rows = [
        audit.AuditRow(document, section, "c", figure, measured, audit.HOLDS, reason) for section in sections
    ]
    ordered = audit.in_order(rows)
    assert sorted(map(id, ordered)) == sorted(map(id, rows))
    text = audit.markdown(ordered, None, replayed=False)
    body = [line for line in text.splitlines() if line.startswith("| ") and "`c`" in line]
    assert len(body) == len(rows)  # no cell spills onto a line of its own
    for line in body:
        cells = re.split(r"(?<!\\) \| ", line[2:-2].replace("\\\\", "\0"))
        assert len(cells) == 6
    assert all(ch not in text for ch in "\x00\x1b\x07\u202e")
    assert re.search(r"<[A-Za-z/!?]", text) is None
    console = Console(record=True, width=200)
    console.print(audit.table(ordered))
    assert all(ch not in console.export_text() for ch in "\x00\x1b\x07\u202e")
