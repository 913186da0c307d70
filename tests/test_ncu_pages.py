"""The one reader of ncu's pages: which lines are CSV, how each page's rows are split, and the bounds
that hold for every page."""

import pytest
from explain_pages import SYNTHETIC_SOURCE

from ncuverify import explain
from ncuverify.errors import InputError
from ncuverify.ncu import pages
from ncuverify.ncu.pages import Quoting, UnreadablePage, read_page

PAGE = '==PROF== Connected\n"ID","Text"\n\n  "0","a "quoted" word, and more"  \nnot CSV\n"1",""\n'


def test_only_lines_that_start_with_a_quote_are_rows_from_the_header_on():
    assert read_page('"x"\n' + PAGE, Quoting.TEXT, header='"ID"') == [
        ["ID", "Text"],
        ["0", 'a "quoted" word, and more'],
        ["1", ""],
    ]
    assert read_page(PAGE, Quoting.TEXT, header='"Line No"') == []


def test_a_table_is_strict_csv_and_text_is_split_by_ncu_s_rule():
    with pytest.raises(UnreadablePage, match="',' expected after '\"'"):
        read_page(PAGE, Quoting.TABLE)
    assert read_page('"a","b ""c"""\n', Quoting.TABLE) == [["a", 'b "c"']]


def test_every_page_is_bounded_before_its_rows_are_split(monkeypatch):
    monkeypatch.setattr(pages, "MAX_CSV_COLUMNS", 3)
    with pytest.raises(UnreadablePage, match=r"^4 columns, more than 3$"):
        read_page('"a","b","c","d"\n', Quoting.TEXT)
    monkeypatch.setattr(pages, "MAX_CSV_CELLS", 4)
    with pytest.raises(UnreadablePage, match=r"^3 rows of 2 columns, more than 4 values$"):
        read_page('"a","b"\n' * 4, Quoting.TEXT)
    # A first row narrower than the rows after it bounds nothing: the values are counted as they are split.
    with pytest.raises(UnreadablePage, match=r"^rows of more than 4 values in all$"):
        read_page('"a"\n"b","c","d"\n"e","f"\n', Quoting.TEXT)


def test_a_source_page_beyond_the_bounds_is_an_input_error(monkeypatch):
    monkeypatch.setattr(pages, "MAX_CSV_CELLS", 20)
    with pytest.raises(
        InputError,
        match=r"^the ncu source page could not be read \(13 rows of 2 columns, more than 20 values\)$",
    ):
        explain.parse_source(SYNTHETIC_SOURCE)
