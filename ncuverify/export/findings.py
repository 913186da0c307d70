"""What a run found that a reviewer must look at, each at a line of a file of the repository: failing
claims, claims that could not be evaluated, wrong files, regressions against a baseline (errors), and
set-aside claims, files not run and warnings (warnings). GitHub annotations and SARIF are made of
these; every text in them is untrusted and is escaped where it is written."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from ncuverify.explain import Explanation, SourceLine
from ncuverify.export.outcome import claim_message, spec_of
from ncuverify.results import ClaimResult, FileResult, Verdict, file_key, set_aside_line
from ncuverify.spec import project_root

if TYPE_CHECKING:  # a name only: the baseline reads exported results (a cycle)
    from ncuverify.baseline.snapshot import Change


class Level(StrEnum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True)
class Place:
    """A line of a file, the file relative to the repository's root, with / between folders."""

    file: str
    line: int


@dataclass(frozen=True)
class Finding:
    """One thing to show at a line: its rule (what kind of finding), level, a short title and the
    message; where ncu names the kernel source line at fault, that line too."""

    rule: str
    level: Level
    title: str
    message: str
    place: Place
    source: Place | None = None  # the kernel source line ncu's source page names, for a failing claim


# The rules of the findings, with what each means (SARIF lists them in its tool's rules).
RULES = {
    "claim-failed": "A claim does not hold: the measured value is not what the expectation file says.",
    "claim-xpassed": "A claim marked as failing here (xfail) holds: the expectation is out of date.",
    "claim-error": "A claim could not be evaluated: its case failed, a metric is missing, a division by 0.",
    "input-error": "The expectation file is wrong: it cannot be read, validated or built.",
    "internal-error": "ncuverify itself failed on the file.",
    "baseline-regression": "A measure got worse than the baseline by more than its tolerance.",
    "not-run": "The file was not checked: the run was interrupted.",
    "set-aside": "Claims on the profiler that --static-only did not judge.",
    "warning": "Something the run noticed that does not fail it.",
}

_TITLES = {
    Verdict.FAILED: "claim failed",
    Verdict.XPASSED: "claim passed unexpectedly",
    Verdict.ERROR: "claim error",
}
_RULES = {Verdict.FAILED: "claim-failed", Verdict.XPASSED: "claim-xpassed", Verdict.ERROR: "claim-error"}
# "path:LINE: " at the start of an input error: the line of the file it names.
_ERROR_LINE = re.compile(r"([0-9]{1,9}):")


def findings(results: Sequence[FileResult], changes: Sequence[Change] = ()) -> list[Finding]:
    """Every finding of the run, file by file in the run's order, then the regressions."""
    loaded = [replace(result, spec=spec_of(result)) for result in results]
    found = [finding for result in loaded for finding in _file_findings(result)]
    regressed = [change for change in changes if change.worse and change.allowed is None]
    return found + [_regression(change, loaded) for change in regressed]


def _file_findings(result: FileResult) -> Iterator[Finding]:
    file = _repository_path(result.path)
    for error, rule, title in (
        (result.input_error, "input-error", "the expectation file is wrong"),
        (result.internal_error, "internal-error", "ncuverify failed on this file"),
    ):
        if error is not None:
            yield Finding(rule, Level.ERROR, title, error, Place(file, _error_line(result.path, error)))
    for claim_result in result.claims:
        if claim_result.verdict in _RULES:
            yield _claim_finding(result, claim_result, file)
    if result.not_run is not None:
        yield Finding("not-run", Level.WARNING, "not run", result.not_run, Place(file, 1))
    if result.set_aside:
        said = f"{set_aside_line(result.set_aside)}: not judged, so not shown as passing"
        yield Finding("set-aside", Level.WARNING, "claims set aside", said, Place(file, 1))
    for warning in result.warnings:
        yield Finding("warning", Level.WARNING, "warning", warning, Place(file, 1))


def _claim_finding(result: FileResult, claim_result: ClaimResult, file: str) -> Finding:
    claim = claim_result.claim
    line = result.spec.lines.claim(claim.id) if result.spec is not None else 1
    explanation = result.explanations.get(claim.id)
    source = _source_place(result, explanation) if explanation is not None else None
    message = _claim_said(claim_result)
    if source is not None and explanation is not None:
        message += f"\nncu: {_source_said(explanation.lines[0])} at {source.file}:{source.line}"
    verdict = claim_result.verdict
    return Finding(
        _RULES[verdict], Level.ERROR, f"{_TITLES[verdict]}: {claim.id}", message, Place(file, line), source
    )


def _claim_said(result: ClaimResult) -> str:
    """The claim's metric, measured and expected values and why; then the document it checks."""
    reason = result.reason or ""
    said = f"{result.claim.metric}: {reason}" if reason.startswith("measured ") else claim_message(result)
    source = result.claim.source_line()
    return f"{said}\n{source}" if source else said


def _source_said(line: SourceLine) -> str:
    return f"{line.share:.0%} of the kernel's excess on `{line.text}`"


def _regression(change: Change, results: Sequence[FileResult]) -> Finding:
    """A regression at its case's line in its file (the file by the key the baseline knows it by)."""
    result = next((r for r in results if r.key == change.file), None)
    file = _repository_path(result.path) if result is not None else change.file
    line = result.spec.lines.case(change.case) if result is not None and result.spec is not None else 1
    ratio = f" (x{change.ratio:.3g})" if change.ratio is not None else ""
    message = f"{change.case} {change.metric}: {change.before:g} in the baseline, {change.after:g} now{ratio}"
    return Finding(
        "baseline-regression", Level.ERROR, f"regressed: {change.metric}", message, Place(file, line)
    )


def _repository_path(path: Path) -> str:
    """The file relative to the root of its git repository, which annotations and code scanning read
    paths from (a project inside a larger repository has its own root); else its key (file_key)."""
    root = _repository_root(path.parent)
    if root is not None:
        try:
            return Path(os.path.abspath(path)).resolve().relative_to(root).as_posix()
        except (ValueError, OSError, RuntimeError):  # it links out of the repository
            pass
    return file_key(path)


def _repository_root(folder: Path) -> Path | None:
    """The nearest folder at or above folder that holds .git (a folder, or a worktree's file)."""
    try:
        folder = Path(os.path.abspath(folder))
        return next((f.resolve() for f in (folder, *folder.parents) if (f / ".git").exists()), None)
    except (OSError, RuntimeError, ValueError):  # a folder that cannot be searched, a NUL in the path
        return None


def _error_line(path: Path, error: str) -> int:
    """The line an input error names first (`path:12: ...`), else 1."""
    prefix = f"{path}:"
    if not error.startswith(prefix):
        return 1
    matched = _ERROR_LINE.match(error, len(prefix))
    return max(int(matched[1]), 1) if matched is not None else 1


def _source_place(result: FileResult, explanation: Explanation) -> Place | None:
    """The kernel source line with the most excess, as a file of the repository: the path ncu printed
    where it lies under the repository, else the kernel file of the expectation file whose path it ends
    with (the recording was made in another checkout). None where it is no file of the repository."""
    if not explanation.lines:
        return None
    top = explanation.lines[0]
    root = _repository_root(result.path.parent) or project_root(result.path.parent)
    printed = PurePosixPath(top.file.replace("\\", "/"))
    if printed.is_absolute():
        try:
            return Place(Path(os.path.abspath(printed)).relative_to(root).as_posix(), top.line)
        except ValueError:
            pass
    for known in _kernel_files(result, root):
        if printed.as_posix() == known or printed.as_posix().endswith("/" + known):
            return Place(known, top.line)
    return None


def _kernel_files(result: FileResult, root: Path) -> list[str]:
    """The kernel files the expectation file names, relative to the repository's root."""
    if result.spec is None:
        return []
    known = []
    for kernel in result.spec.content.kernels.values():
        if kernel.file is None:
            continue
        try:
            known.append((result.spec.folder / kernel.file).resolve().relative_to(root).as_posix())
        except (ValueError, OSError, RuntimeError):  # outside the repository, or a link that loops
            continue
    return known
