"""Reading include directives: every one a preprocessor might see, under every reading of the file."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ncuverify.build.scan import directives


def found(text: bytes) -> list[tuple[int, str, str | None, bool]]:
    return [(d.line, d.kind, d.name, d.angled) for d in directives(text)]


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            b'#include "a.h"\n#include <b/c.h>\n',
            [(1, "include", "a.h", False), (2, "include", "b/c.h", True)],
        ),
        (b'  #  include   "x.h" // note\n', [(1, "include", "x.h", False)]),
        # A comment may sit before and inside a directive, and span lines there.
        (b'#/* a\n */include "/etc/passwd"\n', [(1, "include", "/etc/passwd", False)]),
        (b'int q; /* a\n */ #include "x.h"\n', [(2, "include", "x.h", False)]),
        # Digraph and trigraph introducers; a directive split by a backslash-newline.
        (
            b'%:include "d.h"\n??=include "t.h"\n',
            [(1, "include", "d.h", False), (2, "include", "t.h", False)],
        ),
        (b'#inc\\\nlude "s.h"\n', [(1, "include", "s.h", False)]),
        # Whether or not backslash-space-newline splices, the next line counts.
        (b'// note \\ \n#include "n.h"\n', [(2, "include", "n.h", False)]),
        # Inactive branches and block comments count too.
        (
            b'#if 0\n#include "off.h"\n#endif\n/*\n#include "c.h"\n*/\n',
            [(2, "include", "off.h", False), (5, "include", "c.h", False)],
        ),
        (b'\xef\xbb\xbf#include "bom.h"\n', [(1, "include", "bom.h", False)]),
        (b'x\r#include "cr.h"\n', [(1, "include", "cr.h", False)]),
        (
            b'#include_next <n.h>\n#embed "e.bin"\n',
            [(1, "include_next", "n.h", True), (2, "embed", "e.bin", False)],
        ),
        (
            b'#if __has_include(<cuda/x>) && __has_include( "y.h" )\n',
            [(1, "__has_include", "cuda/x", True), (1, "__has_include", "y.h", False)],
        ),
        # Not includes: a name test, an include that names nothing.
        (b"#if defined(__has_include)\n#ifdef __has_include\n#endif\n#endif\n", []),
        (b'#include\n#include // x\n#include "open\n', [(1, "empty", None, False)]),
    ],
)
def test_directives_are_found_under_every_reading(text, expected):
    assert found(text) == expected


@pytest.mark.parametrize(
    "text, kind",
    [
        (b"#include MACRO\n", "computed"),
        (b"#define H(x) __has_include(x)\n", "computed"),
        (b"#define HAS __has_include\n", "alias"),
        (b"#define HAS __has_ ## include\n", "alias"),
        (b'#if HAS("/etc/passwd")\n#endif\n', "stray"),
    ],
)
def test_what_cannot_be_checked_is_marked(text, kind):
    assert [d.kind for d in directives(text)] == [kind]


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=400))
def test_any_bytes_are_read_without_error(data):
    for directive in directives(data):
        assert directive.line >= 1
