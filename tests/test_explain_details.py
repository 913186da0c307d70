"""The details page: the rules that fired for each launch, with their text."""

import pytest
from explain_pages import DETAILS_HEADER, SYNTHETIC_DETAILS

from ncuverify import explain as ex
from ncuverify.errors import InputError

# --- synthetic pages: the shapes the capture does not have --------------------------------------------


def test_rules_with_markup_separators_na_and_empty_text():
    rules = ex.parse_rules(SYNTHETIC_DETAILS)
    assert sorted(rules) == [0, 1, 2]
    assert rules[2] == []  # a launch without rules is still known
    assert [rule.rule for rule in rules[0]] == ["UncoalescedGlobalAccess", "MemoryCacheAccessPattern"]
    uncoalesced, pattern = rules[0]
    assert uncoalesced.text == (
        "See the Source Counters section and the CUDA Best Practices Guide "
        "(https://docs.nvidia.com/cuda/guide.html#coalesced)."
    )
    assert uncoalesced.speedup_pct == 1234.5
    assert pattern.speedup_pct is None  # "n/a"
    assert pattern.severity == "WRN"


def test_rule_text_with_unescaped_quotes_and_commas_stays_whole():
    (rule,) = ex.parse_rules(SYNTHETIC_DETAILS)[1]
    assert rule.text == 'The "tile" array has conflicts, mostly "here".'
    assert rule.speedup_pct == 50


@pytest.mark.parametrize(
    ("markup", "plain"),
    [
        ("@section:SourceCounters:Source Counters@", "Source Counters"),
        ("@url:Guide:https://example.com/a:b#c@", "Guide (https://example.com/a:b#c)"),
        ("@url:https://example.com/x@", "https://example.com/x"),
        ("mail me @ home: no markup", "mail me @ home: no markup"),
    ],
)
def test_render_markup(markup, plain):
    assert ex.render_markup(markup) == plain


@pytest.mark.parametrize("text", ["", "not,a,report\n1,2,3\n", "==PROF== only log lines\n"])
def test_details_without_id_header_is_an_input_error(text):
    with pytest.raises(InputError, match='"ID"'):
        ex.parse_rules(text)


def test_details_with_a_non_numeric_id_is_an_input_error():
    with pytest.raises(InputError, match="launch index"):
        ex.parse_rules(DETAILS_HEADER + '\n"x","k","S","","","R","OPT","text","global","1"\n')


def test_details_missing_rule_columns_is_an_input_error():
    with pytest.raises(InputError, match="Rule Name"):
        ex.parse_rules('"ID","Kernel Name"\n"0","k"\n')
