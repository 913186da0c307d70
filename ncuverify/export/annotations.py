"""The findings of a run as GitHub Actions workflow commands (`::error file=F,line=L,title=T::message`),
which GitHub shows as annotations on the pull request's files.

Every value comes from a pull request and is escaped as the runner reads it back: a message can hold
no line break, so it never starts a command of its own. GitHub shows at most 10 errors, 10 warnings and
10 notices of a step: no more are written, and one notice counts the rest."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from ncuverify.export.findings import Level, Place, findings
from ncuverify.results import FileResult
from ncuverify.text import printable

if TYPE_CHECKING:  # a name only: the baseline reads exported results (a cycle)
    from ncuverify.baseline.snapshot import Change

# What GitHub shows of one step, per level.
MAX_SHOWN = 10
# The escapes of the runner (its CommandStringEscaping): data, then the values of properties.
_DATA_ESCAPES = (("%", "%25"), ("\r", "%0D"), ("\n", "%0A"))
_PROPERTY_ESCAPES = (*_DATA_ESCAPES, (":", "%3A"), (",", "%2C"))


def github_actions(environment: Mapping[str, str]) -> bool:
    """Whether this runs in a GitHub Actions job (the runner sets GITHUB_ACTIONS=true)."""
    return environment.get("GITHUB_ACTIONS") == "true"


def to_annotations(results: Sequence[FileResult], changes: Sequence[Change] = ()) -> list[str]:
    """One workflow command per finding, and one notice at the kernel source line ncu names for a
    failing claim; at most MAX_SHOWN of each level, then a notice that counts the rest."""
    budget = {"error": MAX_SHOWN, "warning": MAX_SHOWN, "notice": MAX_SHOWN - 1}  # a notice counts the rest
    left_out = {Level.ERROR: 0, Level.WARNING: 0}
    lines: list[str] = []
    for finding in findings(results, changes):
        if budget[finding.level] == 0:
            left_out[finding.level] += 1
            continue
        budget[finding.level] -= 1
        lines.append(command(finding.level, finding.place, finding.title, finding.message))
        if finding.source is not None and budget["notice"] > 0:
            budget["notice"] -= 1
            said = f"{finding.title}: ncu names this line ({finding.place.file}:{finding.place.line})"
            lines.append(command("notice", finding.source, finding.title, said))
    rest = _rest(left_out)
    if rest:
        lines.append(f"::notice title={_property('ncuverify')}::{_data(rest)}")
    return lines


def _rest(left_out: Mapping[Level, int]) -> str:
    """What the annotations left out, as a count of each level."""
    parts = [
        f"{count} more {'failing claims, errors and regressions' if level is Level.ERROR else 'warnings'}"
        for level, count in left_out.items()
        if count
    ]
    return f"{'; '.join(parts)}: see the job summary" if parts else ""


def command(level: str, place: Place, title: str, message: str) -> str:
    """`::LEVEL file=F,line=L,title=T::MESSAGE`, every value escaped."""
    properties = f"file={_property(place.file)},line={place.line},title={_property('ncuverify: ' + title)}"
    return f"::{level} {properties}::{_data(message)}"


def _data(text: str) -> str:
    """A message as the runner reads it: made printable (no escape sequence, no line separator other
    than newline), then %, CR and LF escaped, so that it stays on the command's line."""
    return _escaped(printable(text), _DATA_ESCAPES)


def _property(text: str) -> str:
    """A property's value: also : and , escaped, which would end the value or the property."""
    return _escaped(printable(text), _PROPERTY_ESCAPES)


def _escaped(text: str, escapes: tuple[tuple[str, str], ...]) -> str:
    for character, escape in escapes:  # % first: the escapes themselves hold one
        text = text.replace(character, escape)
    return text
