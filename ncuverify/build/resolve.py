"""The include graph of a kernel: every file its preprocessor may read, found before NVRTC runs.

A pull request may write the kernel and every header it includes, and NVRTC prints what it reads in
its error log: a kernel that includes /proc/self/environ or ../../../etc/passwd would show that file to
whoever reads the log. So ncuverify walks the includes itself, before compiling, and refuses any that
NVRTC could find outside the project, the folders allowed with --allow-include and the CUDA headers.

The walk is conservative, because being wrong in the other direction leaks a file:

- A header name is looked up wherever NVRTC may look for it: a quoted one next to the including file,
  then in every include folder; an angled one in every include folder. Every file found is checked and
  walked, not only the first, so the order of the folders does not matter.

The directives are read by ncuverify.build.scan, which says how it reads them.

Headers in the CUDA toolkit's folders are trusted and not walked. Nothing of a refused file is read:
its path is resolved (symbolic links followed) and refused before it is opened.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ncuverify.build.scan import Directive, directives
from ncuverify.errors import InputError
from ncuverify.files import CannotRead, NotRegular, TooLarge, read_plain
from ncuverify.names import outside_project

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
    """Where included files may lie: the project, the folders allowed beside it, the CUDA headers, and
    with nvcc the host compiler's system headers. All resolved (absolute, symbolic links followed)."""

    project: Path
    allowed: tuple[Path, ...] = ()
    toolkit: tuple[Path, ...] = ()
    system: tuple[Path, ...] = ()  # trusted like the CUDA headers, but never a way to a project file


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
            for searched, opened in self._candidates(directive, folder, where):
                self._reached(opened, where, depth + 1, Path(searched) in self.roots.system)

    def _candidates(self, directive: Directive, folder: str | None, where: str) -> Iterator[tuple[str, str]]:
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
            yield searched, os.path.join(searched, name)

    def _reached(self, opened: str, where: str, depth: int, through_system: bool = False) -> None:
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
        if root in ("toolkit", "system"):
            return
        if through_system:  # the walk does not follow the host's headers: nor may a project file hide there
            raise InputError(
                f"{where}: {self._label(resolved, root)} is reached through the host compiler's system "
                f"header folder {os.path.dirname(opened)}; include a project header by its path in the project"
            )
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
        if any(resolved.is_relative_to(folder) for folder in self.roots.system):
            return "system"
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
            f"lies {outside_project(self.roots.project)} and the CUDA headers; "
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
