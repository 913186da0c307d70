"""The include graph of a kernel: every file its preprocessor may read, found before NVRTC runs.

A pull request may write the kernel and every header it includes, and NVRTC prints what it reads in
its error log: a kernel that includes /proc/self/environ or ../../../etc/passwd would show that file to
whoever reads the log. So ncuverify walks the includes itself, before compiling, and refuses any that
NVRTC could find outside the project, the folders allowed with --allow-include and the CUDA headers.

The walk is conservative, because being wrong in the other direction leaks a file:

- Every directive counts, in inactive `#if` branches too, and so does a line that only looks like one
  inside a block comment or a raw string: telling them apart means lexing exactly as NVRTC does
  (trigraphs in C++11 and 14, digit separators, raw strings), and a lexer that is fooled once hides a
  directive. Comments are skipped where they sit inside or before a directive (`#/**/include`).
- Lines are read with every splicing that NVRTC might apply (none, backslash-newline, backslash-space-
  newline, the `??/` trigraph), and trigraphs both replaced and not; a directive found in any reading
  counts.
- A header name is looked up wherever NVRTC may look for it: a quoted one next to the including file,
  then in every include folder; an angled one in every include folder. Every file found is checked and
  walked, not only the first, so the order of the folders does not matter.
- `#include MACRO` and `__has_include(MACRO)` cannot be checked, and are refused.

Headers in the CUDA toolkit's folders are trusted and not walked. Nothing of a refused file is read:
its path is resolved (symbolic links followed) and refused before it is opened.
"""

from __future__ import annotations

import bisect
import hashlib
import os
import re
import stat
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ncuverify.errors import InputError
from ncuverify.files import CannotRead, NotRegular, TooLarge, read_plain
from ncuverify.text import one_line

MIB = 1024 * 1024


@dataclass(frozen=True)
class GraphLimits:
    """Bounds on what one kernel's includes may make ncuverify read."""

    max_files: int = 2000
    max_file_bytes: int = 16 * MIB
    max_total_bytes: int = 64 * MIB
    max_depth: int = 200


@dataclass(frozen=True)
class Roots:
    """Where included files may lie: the project, the folders allowed beside it, the CUDA headers.
    All resolved (absolute, symbolic links followed)."""

    project: Path
    allowed: tuple[Path, ...] = ()
    toolkit: tuple[Path, ...] = ()


@dataclass(frozen=True)
class Source:
    """The program NVRTC compiles: its text, its name in messages, and the folder its quoted includes
    start from (the .cu file's; None for inline source, which NVRTC sees in an empty folder)."""

    text: bytes
    name: str
    folder: Path | None


@dataclass(frozen=True)
class IncludedFile:
    """A file of the project or of an allowed folder that the program may read."""

    root: str  # "project", or "allowed" for a folder allowed beside the project
    relative: str  # its path in that folder, symbolic links followed
    sha256: str
    path: Path  # absolute, resolved


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


# --- reading directives -----------------------------------------------------------------------------------

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


# --- walking the graph ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Visit:
    opened: str  # the path as NVRTC would open it: the folder it searched, joined with the name
    resolved: Path
    root: str
    depth: int


def resolve(
    source: Source, include_dirs: Sequence[Path], roots: Roots, limits: GraphLimits = GraphLimits()
) -> tuple[IncludedFile, ...]:
    """Every project or allowed file the source may include, with its content's digest; raise
    InputError naming the file, line and directive of any include that is not allowed."""
    walk = _Walk(roots, tuple(str(d) for d in include_dirs), limits)
    main_folder = str(source.folder) if source.folder is not None else None
    walk.directives_of(source.name, directives(source.text), main_folder, depth=0)
    return walk.run()


@dataclass
class _Walk:
    roots: Roots
    include_dirs: tuple[str, ...]
    limits: GraphLimits
    queue: deque[tuple[_Visit, str]] = field(default_factory=deque)  # each with where it was included
    seen: set[tuple[Path, str]] = field(default_factory=set)  # (file, the folder it was opened in)
    files: dict[Path, IncludedFile] = field(default_factory=dict)
    total_bytes: int = 0

    def run(self) -> tuple[IncludedFile, ...]:
        while self.queue:
            visit, where = self.queue.popleft()
            data = self._read(visit, where)
            label = self._label(visit.resolved, visit.root)
            self.directives_of(label, directives(data), os.path.dirname(visit.opened), visit.depth)
        return tuple(sorted(self.files.values(), key=lambda f: (f.root, f.relative)))

    def directives_of(self, label: str, found: Iterable[Directive], folder: str | None, depth: int) -> None:
        for directive in found:
            if directive.kind == "empty":
                continue
            where = f"{label}:{directive.line}: {directive.text}"
            if (problem := directive.problem) is not None:
                raise InputError(f"{where}: {problem}")
            for opened in self._candidates(directive, folder, where):
                self._reached(opened, where, depth + 1)

    def _candidates(self, directive: Directive, folder: str | None, where: str) -> Iterator[str]:
        name = os.fsdecode(directive.name.encode("latin-1"))  # type: ignore[union-attr]
        if os.path.isabs(name):
            inside = self._root_of(Path(os.path.realpath(name))) is not None
            if inside:
                raise InputError(
                    f"{where}: an absolute path; name the header relative to the including file or an include folder"
                )
            raise InputError(f"{where}: {self._outside()}")
        folders = [*([folder] if folder is not None and not directive.angled else []), *self.include_dirs]
        for searched in folders:
            yield os.path.join(searched, name)

    def _reached(self, opened: str, where: str, depth: int) -> None:
        try:
            status = os.stat(opened)
        except (OSError, ValueError):  # not there (or not reachable): NVRTC cannot open it either
            return
        if stat.S_ISDIR(status.st_mode):
            return
        resolved = Path(os.path.realpath(opened))
        root = self._root_of(resolved)
        if root is None:
            raise InputError(f"{where}: {self._outside()}")
        if root == "toolkit":
            return
        if not stat.S_ISREG(status.st_mode):
            raise InputError(f"{where}: {self._label(resolved, root)} is not a regular file")
        context = (resolved, os.path.realpath(os.path.dirname(opened)))
        if context in self.seen:
            return
        if depth > self.limits.max_depth:
            raise InputError(
                f"{where}: includes nest more than {self.limits.max_depth} deep; refusing to read on"
            )
        if len(self.seen) >= self.limits.max_files:
            raise InputError(
                f"{where}: more than {self.limits.max_files} files are included; refusing to read on"
            )
        self.seen.add(context)
        self.queue.append((_Visit(opened, resolved, root, depth), where))

    def _read(self, visit: _Visit, where: str) -> bytes:
        label = self._label(visit.resolved, visit.root)
        try:
            data = read_bounded(visit.resolved, self.limits.max_file_bytes)
        except InputError as error:
            raise InputError(f"{where}: {label}: {error}") from None
        self.total_bytes += len(data)
        if self.total_bytes > self.limits.max_total_bytes:
            raise InputError(
                f"{where}: the included files hold more than {self.limits.max_total_bytes // MIB} MiB; refusing to read on"
            )
        if visit.resolved not in self.files:
            relative = str(visit.resolved.relative_to(self._root_path(visit.resolved, visit.root)))
            self.files[visit.resolved] = IncludedFile(
                visit.root, relative, hashlib.sha256(data).hexdigest(), visit.resolved
            )
        return data

    def _root_of(self, resolved: Path) -> str | None:
        """Which kind of folder holds the file: toolkit (checked first: it may lie in the project),
        project, allowed; None for anywhere else."""
        if any(resolved.is_relative_to(folder) for folder in self.roots.toolkit):
            return "toolkit"
        if resolved.is_relative_to(self.roots.project):
            return "project"
        if any(resolved.is_relative_to(folder) for folder in self.roots.allowed):
            return "allowed"
        return None

    def _root_path(self, resolved: Path, root: str) -> Path:
        if root == "project":
            return self.roots.project
        return next(folder for folder in self.roots.allowed if resolved.is_relative_to(folder))

    def _label(self, resolved: Path, root: str) -> str:
        """A file as messages name it: relative to the project, absolute beside it."""
        return str(resolved.relative_to(self.roots.project)) if root == "project" else str(resolved)

    def _outside(self) -> str:
        return (
            f"lies outside the project ({self.roots.project}) and the CUDA headers; "
            "a folder beside the project can be allowed with --allow-include DIR"
        )


def read_bounded(path: Path, max_bytes: int) -> bytes:
    """A regular file's bytes, refusing (InputError) one larger than max_bytes, a special file, or a
    symbolic link (resolve the path first)."""
    try:
        return read_plain(path, max_bytes, follow_links=False)
    except CannotRead as problem:  # a symbolic link among them: the OS refuses to open one
        raise InputError(f"cannot be read ({problem.error.strerror})") from None
    except NotRegular:
        raise InputError("not a regular file") from None
    except TooLarge:
        raise InputError(f"larger than {max_bytes // MIB} MiB; refusing to read it") from None
