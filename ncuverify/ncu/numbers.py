"""The one reader of the numbers in ncu's pages, as ncu prints them in the C locale.

ncu prints a value with printf in the C locale: an optional minus, digits (in groups of three with
thousands separators), a decimal point with digits after it, an exponent. That grammar is the rule for
every page: text that only Python would read as a number (`+1`, `.5`, `1.`, `inf`, `1_000`, non-ASCII
digits, a number too large for a float) did not come from ncu's printf, and taking it for a figure
would let a damaged report pass a claim.
"""

from __future__ import annotations

import math
import re

# A number as ncu prints it in the C locale: digits in groups of three, a decimal point, an exponent.
_NUMBER = re.compile(r"-?(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]{1,3})?")
_MAX_NUMBER_TEXT = 64
# What ncu prints where a metric has no value for a row ("nan": a launch that faulted).
NO_VALUE = frozenset({"", "-", "n/a", "N/A", "nan"})


def parse_number(text: str) -> float:
    """A value as ncu prints it, thousands separators included. What is no finite number is NaN: n/a,
    empty, the "nan" of a launch that faulted, text values (a device's name), and also text that only
    Python would read as one (inf, 1_000, non-ASCII digits, 1e999)."""
    cleaned = text.strip()
    if len(cleaned) > _MAX_NUMBER_TEXT or not _NUMBER.fullmatch(cleaned):
        return math.nan
    value = float(cleaned.replace(",", ""))
    return value if math.isfinite(value) else math.nan


def cell_number(text: str) -> float | None:
    """A cell of a page as a number (parse_number's): NaN where ncu printed no value (NO_VALUE), None
    where the cell holds anything else that is no number (text: a kernel's name, a source line)."""
    if text.strip() in NO_VALUE:
        return math.nan
    value = parse_number(text)
    return None if math.isnan(value) else value
