"""ncu's CSV as the tidy table: real captures, and whatever a broken or hostile page holds."""

import contextlib
import math

import pytest
from conftest import FIXTURES
from hypothesis import given, settings
from hypothesis import strategies as st
from ncu_captures import SAMPLE_SYMBOLS, capture

from ncuverify.errors import EnvironmentProblem
from ncuverify.ncu.pages import MAX_CSV_COLUMNS
from ncuverify.profile import parse_csv


def test_raw_page_becomes_one_row_per_launch_and_metric():
    log, _ = capture("sample")
    table = parse_csv(log)
    assert list(table.columns) == ["launch", "kernel", "metric", "value", "unit"]
    # stride1, stride32 three times (repeat: 3), scale_2d, misaligned
    assert sorted(table["launch"].unique()) == [0, 1, 2, 3, 4, 5]
    sectors = table[table["metric"] == "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"].set_index("launch")
    # 262,144 threads: 8,192 warps, 4 sectors each contiguous, 32 at stride 32; printed with separators.
    assert sectors.loc[0, "value"] == 32768 and sectors.loc[1, "value"] == 262144
    assert sectors.loc[0, "unit"] == "sector"
    assert set(table["kernel"]) == set(SAMPLE_SYMBOLS.values())
    # The device attributes come along on the raw page: they are metrics too.
    name = table[(table["metric"] == "device__attribute_display_name") & (table["launch"] == 0)]
    assert math.isnan(name["value"].iloc[0])


def test_preamble_and_units_row_are_not_data():
    log, _ = capture("sample")
    assert log.startswith("==")  # ncu's own lines come first
    table = parse_csv(log)
    assert table["launch"].min() == 0  # the units row (empty ID) is gone
    assert not table["metric"].str.startswith("==").any()


def test_details_page_with_thousands_separators_and_demangled_names():
    text = (FIXTURES / "sample" / "details.csv").read_text()
    table = parse_csv(text)
    sectors = table[table["metric"] == "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"].set_index("launch")
    assert sectors.loc[1, "value"] == 262144
    assert '"262,144"' in text
    assert "void read_stride<32>(const float *, float *)" in set(table["kernel"])


def test_no_csv_gives_an_empty_table():
    assert parse_csv("==PROF== No kernels were profiled.\n").empty


# --- ncu's CSV, whatever it holds -------------------------------------------------------------------------

HEADER = '"ID","Kernel Name","a.sum"\n"","","sector"\n'


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('"ID","Kernel Name","m","m"\n"0","k","1","2"\n', "the column 'm' appears twice"),
        ('"ID","Kernel","m"\n"0","k","1"\n', "no 'Kernel Name' column"),
        (HEADER + '"0","k"\n', "row 2 has 2 fields, the header 3"),
        (HEADER + '"0","k","1","2"\n', "row 2 has 4 fields, the header 3"),
        (HEADER + '"0","k","1"\n"ID","Kernel Name","a.sum"\n', "row 3 repeats the header"),
        (HEADER + '"1e3","k","1"\n', "the launch ID '1e3' is not a number"),
        (
            HEADER + '"99999999999999999999999","k","1"\n',
            "the launch ID '99999999999999999999999' is not a number",
        ),
        (HEADER + '"-1","k","1"\n', "the launch ID '-1' is not a number"),
        (HEADER + '"٣","k","1"\n', "the launch ID '٣' is not a number"),
        (HEADER + '"","k","1"\n', "the launch ID '' is not a number"),
        (HEADER + '"0"x,"k","1"\n', "',' expected after '\"'"),
        (HEADER + '"0","' + "k" * 200_000 + '","1"\n', "field larger than field limit (131072)"),
        ('"ID","Kernel Name","Metric Name","Metric Value"\n"0","k","a.sum","1"\n', "no 'Metric Unit' column"),
        (
            '"ID","Kernel Name",' + ",".join(f'"m{i}"' for i in range(MAX_CSV_COLUMNS)) + "\n",
            "10002 columns, more than 10000",
        ),
    ],
)
def test_a_broken_csv_is_a_clear_problem(text, reason):
    with pytest.raises(EnvironmentProblem) as problem:
        parse_csv("==PROF== Disconnected from process 1\n" + text)
    assert str(problem.value) == f"ncu's CSV could not be read ({reason})"


def test_a_csv_of_too_many_values_is_refused_before_it_is_read(monkeypatch):
    from ncuverify.ncu import pages

    monkeypatch.setattr(pages, "MAX_CSV_CELLS", 30)
    rows = "".join(f'"{i}","k","1"\n' for i in range(10))
    assert len(parse_csv(HEADER + rows[: rows.index('"9"')])) == 9  # 10 rows (units too) of 3: 30 values
    with pytest.raises(EnvironmentProblem) as problem:
        parse_csv(HEADER + rows + '"10","k","1"\n"11"x\n')  # the broken row is never read
    assert str(problem.value) == "ncu's CSV could not be read (13 rows of 3 columns, more than 30 values)"


def test_the_units_row_gives_each_metric_its_unit_and_the_columns_are_typed():
    table = parse_csv(HEADER + '"0","k","1,024"\n"1","k","n/a"\n')
    assert table.to_dict("list")["unit"] == ["sector", "sector"]
    assert table["launch"].dtype == "int64" and table["value"].dtype == "float64"
    assert table["value"].iloc[0] == 1024 and math.isnan(table["value"].iloc[1])


cells = st.text(alphabet=st.characters(blacklist_characters='"\n\r'), max_size=12) | st.sampled_from(
    ["0", "1", "1,024", "nan", "n/a", "inf", "1e999", "", "ID", "Kernel Name", "Metric Name"]
)


csv_rows = st.lists(st.lists(cells, min_size=1, max_size=5), max_size=6)


@settings(max_examples=150, deadline=None)
@given(csv_rows, st.booleans())
def test_any_csv_after_ncu_s_header_is_a_table_of_finite_numbers_or_a_clear_problem(rows, details):
    head = (
        '"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"'
        if details
        else '"ID","Kernel Name","a.sum"'
    )
    text = "\n".join([head, *(",".join(f'"{cell}"' for cell in row) for row in rows)])
    try:
        table = parse_csv(text)
    except EnvironmentProblem as problem:
        assert str(problem).startswith("ncu's CSV could not be read (")
        return
    assert list(table.columns) == ["launch", "kernel", "metric", "value", "unit"]
    assert not table["value"].map(math.isinf).any()


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=300))
def test_any_text_after_ncu_s_header_parses_or_is_a_clear_problem(text):
    with contextlib.suppress(EnvironmentProblem):
        parse_csv('"ID","Kernel Name","a.sum"\n' + text)
