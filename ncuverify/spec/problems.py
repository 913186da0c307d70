"""A file's problems as lines: pydantic's errors placed at their file, line and field, with suggestions."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator
from pathlib import Path

from pydantic import ValidationError

from ncuverify.spec.arguments import ARGUMENT_KINDS, FIELD_KINDS, ArrayValues, BufferArg, StructArg, UseArg
from ncuverify.spec.cases import CaseSpec
from ncuverify.spec.claims import Citation, Claim, Expectation, ExpectedFailure
from ncuverify.spec.expectation_file import ExpectationFile
from ncuverify.spec.fields import SCALAR_TYPES
from ncuverify.spec.kernels import KernelSpec
from ncuverify.spec.programs import PROGRAMS_FIELD, ProgramCase, ProgramSpec
from ncuverify.spec.scalars import scalar_problem
from ncuverify.spec.yaml_reader import Location

MAX_PROBLEMS = 20  # a file's problems shown at once; finding more could take long, and say no more

_ALL_FIELDS = sorted(
    {
        name
        for model in (
            ExpectationFile,
            KernelSpec,
            CaseSpec,
            ProgramCase,
            ProgramSpec,
            BufferArg,
            UseArg,
            StructArg,
            ArrayValues,
            Claim,
            Citation,
            Expectation,
            ExpectedFailure,
        )
        for name in model.model_fields
    }
    | set(SCALAR_TYPES)
)


def pydantic_problems(error: ValidationError) -> Iterator[tuple[Location, str]]:
    """Each error pydantic found, as the file's location and a message; lazily, as only a few are shown."""
    for item in error.errors(include_url=False):
        # Union tags and validator names appear in loc; they are not keys of the file.
        where = _file_location(item["loc"])
        message = item["msg"].removeprefix("Value error, ")
        if item["type"] == "extra_forbidden" and where:
            key = str(where[-1])
            # a key known elsewhere (kernel, a field of cases) is unknown here: never suggest it again
            close = difflib.get_close_matches(key, [name for name in _ALL_FIELDS if name != key], n=1)
            message = f"unknown key {key!r}" + (f" (did you mean {close[0]!r}?)" if close else "")
        elif item["type"] == "missing" and where:
            message = f"missing: {where[-1]!r} is required"
        elif item["type"] == "too_short" and where and where[-1] == "arch":
            outcome = "be expected to fail nowhere" if "xfail" in where else "never be judged"
            message = (
                f"[] names no architecture, so the claim would {outcome}: name one, or leave arch out for all"
            )
        else:
            message = scalar_problem(item["type"], item.get("input")) or message
        yield where, message


_UNION_TAGS = frozenset({*ARGUMENT_KINDS, *FIELD_KINDS})
_TYPE_NAMES = ("str", "int", "float", "bool", "none")  # union members pydantic names in a location


def _file_location(loc: tuple[str | int, ...]) -> Location:
    """pydantic's loc, less the union tags and type names it adds, which are not keys of the file."""
    where: list[str | int] = []
    if loc[:1] == (PROGRAMS_FIELD,):  # program cases are written among the cases
        loc = ("cases", *loc[1:])
    for index, part in enumerate(loc):
        is_last = index == len(loc) - 1
        after_index = index > 0 and isinstance(loc[index - 1], int)
        if isinstance(part, str) and not is_last and after_index and part in _UNION_TAGS:
            continue
        if isinstance(part, str) and part in _TYPE_NAMES and index > 0:
            continue
        if part == "[key]":  # a mapping's key was wrong: the key's own location names it
            continue
        where.append(part)
    return tuple(where)


def describe(path: Path, lines: dict[Location, int], problems: Iterable[tuple[Location, str]]) -> str:
    rendered: dict[str, None] = {}
    for where, message in problems:
        if len(rendered) == MAX_PROBLEMS:
            return "\n".join([*rendered, f"{path}: and more problems; these are the first {MAX_PROBLEMS}"])
        line = _line_of(lines, where)
        field = _field_name(where)
        rendered.setdefault(f"{path}:{line}: {field + ': ' if field else ''}{message}")
    return "\n".join(rendered)


def _line_of(lines: dict[Location, int], where: Location) -> int:
    for end in range(len(where), -1, -1):
        if where[:end] in lines:
            return lines[where[:end]]
    return 1


def _field_name(where: Location) -> str:
    text = ""
    for part in where:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


# difflib compares a name with every candidate, at a cost that grows with their lengths: bounded both.
_SUGGEST_AMONG = 256
_SUGGEST_LENGTH = 64


def suggest(name: str, known: Iterable[str]) -> str:
    candidates = [candidate for candidate in known if len(candidate) <= _SUGGEST_LENGTH]
    if len(name) > _SUGGEST_LENGTH or len(candidates) > _SUGGEST_AMONG:
        return ""
    close = difflib.get_close_matches(name, candidates, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""
