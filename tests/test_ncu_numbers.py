"""Numbers as ncu prints them, and what only Python would read as one."""

import math

import pytest

from ncuverify.ncu.numbers import cell_number, parse_number


@pytest.mark.parametrize(
    ("text", "value"), [("16,780,032", 16780032.0), ("4", 4.0), ("1,064.5", 1064.5), (" 0 ", 0.0)]
)
def test_numbers(text, value):
    assert parse_number(text) == value


@pytest.mark.parametrize("text", ["n/a", "N/A", "", "NVIDIA H200"])
def test_not_numbers(text):
    assert math.isnan(parse_number(text))


@pytest.mark.parametrize(
    ("text", "value"), [("-5", -5.0), ("1.5e3", 1500.0), ("65,850,789", 65850789.0), ("0.000", 0.0)]
)
def test_more_numbers(text, value):
    assert parse_number(text) == value


@pytest.mark.parametrize(
    "text",
    [
        "nan",
        "inf",
        "-inf",
        "Infinity",
        "NaN",
        "1_000",
        "１２",
        "1e999",
        "1,2",
        "1,0000",
        "0x10",
        "1" * 65,
        "+1",
        "1 2",
    ],
)
def test_what_only_python_reads_as_a_number_is_none(text):
    assert math.isnan(parse_number(text))


@pytest.mark.parametrize(
    ("text", "value"), [("1,024", 1024.0), ("-0.5", -0.5), ("1.5e3", 1500.0), ("0", 0.0)]
)
def test_a_cell_is_the_number_ncu_printed(text, value):
    assert cell_number(text) == value


@pytest.mark.parametrize("text", ["", "-", "n/a", "N/A", "nan", " n/a "])
def test_a_cell_where_ncu_printed_no_value_is_nan(text):
    assert math.isnan(cell_number(text))


# The pages of the second pass once read their numbers by Python's float(); they follow ncu's printf
# grammar now, as the tidy table always did: what only Python reads as a number is text there too.
@pytest.mark.parametrize(
    "text", ["+5", ".5", "5.", "1,234.", "inf", "1_000", "１２", "1e999", "(32, 8, 1)", "Global(1)"]
)
def test_a_cell_of_text_or_of_what_only_python_reads_as_a_number_is_none(text):
    assert cell_number(text) is None
