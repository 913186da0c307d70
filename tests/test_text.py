"""Untrusted text made safe to show."""

from ncuverify.text import one_line, printable


def test_escape_sequences_and_bidi_overrides_become_visible_escapes():
    assert printable("a\x1b[2Jb\u202ec\x00") == "a\\x1b[2Jb\\u202ec\\x00"


def test_tab_and_newline_are_kept_and_one_line_makes_them_spaces():
    assert printable("a\tb\nc") == "a\tb\nc"
    assert one_line("a\tb\nc") == "a b c"


def test_unicode_line_and_paragraph_separators_cannot_split_a_line():
    # Some readers break lines there: a Markdown table row or a log line would be split.
    assert one_line("a\u2028b\u2029c") == "a\\u2028b\\u2029c"
    assert len(one_line("a\u2028b\x85c").splitlines()) == 1


def test_lone_surrogates_and_xml_noncharacters_are_escaped():
    assert printable("\ud800\ufffe\uffff") == "\\ud800\\ufffe\\uffff"


def test_a_count_says_its_noun_in_the_singular_for_one_alone():
    from ncuverify.text import counted

    assert [counted(n, "kernel") for n in (0, 1, 2)] == ["0 kernels", "1 kernel", "2 kernels"]
    assert counted(1, "pass", "passes") == "1 pass" and counted(3, "pass", "passes") == "3 passes"
