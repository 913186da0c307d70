"""The include directives of a file, read before NVRTC runs, for the include walk (ncuverify.build.resolve).

The reading is conservative, because being wrong in the other direction leaks a file:

- Every directive counts, in inactive `#if` branches too, and so does a line that only looks like one
  inside a block comment or a raw string: telling them apart means lexing exactly as NVRTC does
  (trigraphs in C++11 and 14, digit separators, raw strings), and a lexer that is fooled once hides a
  directive. Comments are skipped where they sit inside or before a directive (`#/**/include`).
- Lines are read with every splicing that NVRTC might apply (none, backslash-newline, backslash-space-
  newline, the `??/` trigraph), and trigraphs both replaced and not; a directive found in any reading
  counts.
- `#include MACRO` and `__has_include(MACRO)` cannot be checked, and are refused.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass

from ncuverify.text import one_line


@dataclass(frozen=True)
class Directive:
    """An include (or an existence test) as written in a file."""

    line: int
    kind: (
        str  # include, include_next, import, embed, __has_include...; refused: computed, alias, stray; empty
    )
    name: str | None  # the header name between the quotes or angle brackets (latin-1 decoded bytes)
    angled: bool
    text: str  # the directive as written, for messages

    @property
    def problem(self) -> str | None:
        """Why the directive cannot be checked, if it cannot."""
        if self.kind == "computed":
            return "a header name computed from macros cannot be checked; name the header in quotes or angle brackets"
        if self.kind == "alias":
            return (
                "__has_include without its header name in parentheses (an alias, or one pasted from "
                "tokens) could test any path, and cannot be checked"
            )
        if self.kind == "stray":
            return "a header name in #if outside __has_include(...) cannot be checked"
        if self.name is not None and "\0" in self.name:
            return "its header name holds a NUL character"
        return None


INCLUDE_KINDS = frozenset({"include", "include_next", "import", "embed"})
_PROBES = re.compile(r"__has_(include_next|include|embed)")
_PROBE_PREFIX = "__has_"
_PROBE_NAMES = frozenset({"__has_include", "__has_include_next", "__has_embed"})
_PROBE_CALL = re.compile(
    r'__has_(?:include_next|include|embed)[ \t\f\v\r\x00]*\([ \t\f\v\r\x00]*(?:"[^"]*"|<[^>]*>)'
)
_NAME_TESTS = frozenset({"ifdef", "ifndef", "elifdef", "elifndef", "undef"})
# A directive's introducer, which counts where it starts a line (after any white space a preprocessor
# skips) or follows the end of a block comment (which may span lines).
_INTRODUCERS = re.compile(r"#|%:|\?\?=")
_BOM = "\xef\xbb\xbf"
_SPACE = " \t\f\v\r\x00"
_IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_SPLICES = (
    None,
    re.compile(r"\\\r?\n"),
    re.compile(r"(?:\\|\?\?/)[ \t\f\v]*(?:\r\n|\n|\r)"),
)
_TRIGRAPHS = {"=": "#", "/": "\\", "'": "^", "(": "[", ")": "]", "!": "|", "<": "{", ">": "}", "-": "~"}
_TRIGRAPH = re.compile(r"\?\?([=/'()!<>-])")
_MAX_TEXT = 160


@dataclass
class _View:
    """One reading of a file: its text under one hypothesis of splicing and trigraphs, and how to get
    back to the physical line of an offset."""

    text: str
    spliced: list[int]  # offsets in text where a spliced newline was removed
    newlines: list[int] | None = None  # offsets of "\n" in text, found when a line is first asked for

    def line(self, offset: int) -> int:
        if self.newlines is None:
            self.newlines = [m.start() for m in re.finditer("\n", self.text)]
        return 1 + bisect.bisect_left(self.newlines, offset) + bisect.bisect_right(self.spliced, offset)


def directives(data: bytes) -> list[Directive]:
    """Every include-like directive and __has_include test in a file, under every reading, in line order."""
    text = data.decode("latin-1")  # one character per byte: header names come back as the bytes written
    texts = [text, _TRIGRAPH.sub(lambda m: _TRIGRAPHS[m.group(1)], text)] if "??" in text else [text]
    found: dict[tuple[str, str | None, bool], Directive] = {}
    views: dict[str, _View] = {}
    for variant in texts:
        for splice in _SPLICES:
            view = _view(variant, splice)
            views.setdefault(view.text, view)  # a reading the same as another is scanned once
    for view in views.values():
        for directive in _scan(view):
            key = ("" if directive.name is not None else directive.kind, directive.name, directive.angled)
            if key not in found or directive.line < found[key].line:
                found[key] = directive
    return sorted(found.values(), key=lambda d: (d.line, d.kind, d.name or ""))


def _view(text: str, splice: re.Pattern[str] | None) -> _View:
    spliced: list[int] = []
    if splice is not None:
        pieces, kept, last = [], 0, 0
        for match in splice.finditer(text):
            pieces.append(text[last : match.start()])
            kept += match.start() - last
            last = match.end()
            spliced.extend([kept] * match.group().count("\n"))
        pieces.append(text[last:])
        text = "".join(pieces)
    return _View(text, spliced)


def _scan(view: _View) -> Iterator[Directive]:
    text = view.text
    for match in _INTRODUCERS.finditer(text):
        if _starts_line(text, match.start()):
            yield from _directive_at(view, match.start())
    for match in _PROBES.finditer(text):
        probe = _probe_at(view, match)
        if probe is not None:
            yield probe


def _starts_line(text: str, at: int) -> bool:
    """Whether only white space lies between `at` and the line's start (a carriage return counts as
    one too) or the end of a block comment."""
    while at > 0:
        before = text[at - 1]
        if before in "\n\r":
            return True
        if before not in _SPACE:
            return text.startswith("*/", at - 2) or (at == len(_BOM) and text.startswith(_BOM))
        at -= 1
    return True


def _skip(text: str, at: int, newlines: bool = False) -> int:
    """Past white space and block comments (which may span lines); also newlines where asked."""
    space = _SPACE + "\n" if newlines else _SPACE
    while at < len(text):
        if text[at] in space:
            at += 1
        elif text.startswith("/*", at):
            end = text.find("*/", at + 2)
            at = len(text) if end < 0 else end + 2
        else:
            break
    return at


def _line_end(text: str, at: int) -> int:
    end = text.find("\n", at)
    return len(text) if end < 0 else end


def _directive_at(view: _View, start: int) -> Iterator[Directive]:
    text = view.text
    at = start
    for introducer in ("#", "%:", "??="):
        if text.startswith(introducer, at):
            hash_at, at = at, at + len(introducer)
            break
    else:
        return
    at = _skip(text, at)
    word = _IDENT.match(text, at)
    if word is None:
        return
    name, at = word.group(), word.end()
    if name in INCLUDE_KINDS:
        yield _include(view, hash_at, _skip(text, at), name)
    elif name in ("if", "elif", "define", "ifdef", "ifndef", "elifdef", "elifndef", "undef"):
        yield from _body_problems(view, hash_at, at, name)


def _include(view: _View, hash_at: int, at: int, kind: str) -> Directive:
    text = view.text
    header = _header_name(text, at)
    if header is not None:
        return Directive(view.line(hash_at), kind, header[0], header[1], _shown(text, hash_at))
    rest = text[at : _line_end(text, at)].strip(_SPACE)
    if not rest or rest.startswith("//") or rest[0] in '"<':
        # Nothing NVRTC could open: it says it expects a file name.
        return Directive(view.line(hash_at), "empty", None, False, "")
    return Directive(view.line(hash_at), "computed", None, False, _shown(text, hash_at))


def _header_name(text: str, at: int) -> tuple[str, bool] | None:
    """A quoted or angled header name on the line at `at`; None where there is none."""
    if at >= len(text) or text[at] not in '"<':
        return None
    closing = '"' if text[at] == '"' else ">"
    end = text.find(closing, at + 1, _line_end(text, at))
    if end < 0:
        return None
    return text[at + 1 : end], closing == ">"


def _probe_at(view: _View, match: re.Match[str]) -> Directive | None:
    """__has_include(...) anywhere: its operand, if it has one."""
    text = view.text
    at = _skip(text, match.end(), newlines=True)
    if not text.startswith("(", at):
        return None  # a use without parentheses is refused where it can be used: in a directive
    at = _skip(text, at + 1, newlines=True)
    kind = match.group()
    line, shown = view.line(match.start()), _shown(text, match.start())
    header = _header_name(text, at)
    if header is not None:
        return Directive(line, kind, header[0], header[1], shown)
    if text.startswith(")", at):
        return None
    return Directive(line, "computed", None, False, shown)


def _body_problems(view: _View, hash_at: int, at: int, directive: str) -> Iterator[Directive]:
    """In #if and #define: a __has_include that is not followed by its operand (an alias such as
    `#define HAS __has_include` could test any path, and so could one made by pasting tokens), and in
    #if a header name outside __has_include."""
    text = view.text
    body = text[at : _line_end(text, at)]
    if _PROBE_PREFIX not in body and (directive not in ("if", "elif") or not ('"' in body or "<" in body)):
        return  # the common case, quickly
    body = _without_comments(body)
    line, shown = view.line(hash_at), _shown(text, hash_at)
    alias = Directive(line, "alias", None, False, shown)
    for word in _IDENT.finditer(body):
        token = word.group()
        if not token.startswith(_PROBE_PREFIX):
            continue
        before, after = body[: word.start()].rstrip(_SPACE), body[word.end() :].lstrip(_SPACE)
        if before.endswith("##") or after.startswith("##"):
            yield alias
        elif token in _PROBE_NAMES and not after.startswith("("):
            tested = before.rstrip("(" + _SPACE).endswith("defined") or directive in _NAME_TESTS
            if not tested:
                yield alias
    if directive in ("if", "elif") and _stray_header_name(body):
        yield Directive(line, "stray", None, False, shown)


def _stray_header_name(body: str) -> bool:
    """A string, or `(<` / `,<`, in an #if expression other than as __has_include's operand: what a
    macro that expands to __has_include would be given. Neither is valid in an #if otherwise."""
    rest = _PROBE_CALL.sub(" ", body)
    return re.search(r'"|[(,][ \t\f\v\r\x00]*<', rest) is not None


def _without_comments(line: str) -> str:
    line = re.sub(r"/\*.*?\*/", " ", line)
    end = line.find("//")
    return line if end < 0 else line[:end]


def _shown(text: str, at: int) -> str:
    """The directive as written, for a message: one line, bounded, the bytes as UTF-8 where they are."""
    end = min(_line_end(text, at), at + _MAX_TEXT)
    written = text[at:end].encode("latin-1").decode("utf-8", errors="backslashreplace")
    return one_line(written.strip()) + ("..." if end - at >= _MAX_TEXT else "")
