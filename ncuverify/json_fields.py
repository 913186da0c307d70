"""The strict readers of a JSON document's fields, for files that come from other machines and may
have been edited: each takes a value and where it stands in the document (`files[0].seconds`) and
returns the value as the type it must be, or raises Malformed naming that place and what is wrong."""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable
from typing import Any

from ncuverify.text import one_line


class Malformed(ValueError):
    """A field of the document that is not what its writer writes there."""

    def __init__(self, where: str, problem: str) -> None:
        super().__init__(f"{where}: {problem}" if where else problem)


def text(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise Malformed(where, "not text")
    return value


def texts(value: Any, where: str) -> list[str]:
    return [text(item, f"{where}[{index}]") for index, item in enumerate(json_list(value, where))]


def text_table(value: Any, where: str) -> dict[str, str]:
    return {key: text(item, member(where, key)) for key, item in json_object(value, where).items()}


def text_tables(value: Any, where: str) -> dict[str, dict[str, str]]:
    return {key: text_table(item, member(where, key)) for key, item in json_object(value, where).items()}


def boolean(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise Malformed(where, "not true or false")
    return value


def integer(value: Any, where: str, low: int, high: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise Malformed(where, "not a whole number")
    if not low <= value <= high:
        raise Malformed(where, f"{shown(value)} is not between {low} and {high}")
    return value


def finite(value: Any, where: str, low: float | None = None) -> float:
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise Malformed(where, "not a number")
    try:
        number = float(value)
    except OverflowError:  # a whole number beyond any float
        number = math.inf
    if not math.isfinite(number):
        raise Malformed(where, "not a finite number")
    if low is not None and number < low:
        raise Malformed(where, f"{shown(value)} is less than {low:g}")
    return number


def optional(check: Callable[[Any, str], Any], value: Any, where: str) -> Any:
    return None if value is None else check(value, where)


def json_list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise Malformed(where, "not a list")
    return value


def json_object(
    value: Any,
    where: str,
    required: set[str] | None = None,
    optional: frozenset[str] | set[str] = frozenset(),
) -> dict[str, Any]:
    """A JSON object; with required, one holding those keys, and none but those and the optional."""
    if not isinstance(value, dict):
        raise Malformed(where, "not an object")
    if required is not None:
        for key in value:
            if key not in required and key not in optional:
                raise Malformed(where, f"unknown key {shown(key)}")
        for key in sorted(required):
            if key not in value:
                raise Malformed(where, f"missing {key!r}")
    return value


def no_infinities(value: Any, where: str, depth: int = 0) -> None:
    """JSON has no NaN or infinity; Python's reader accepts them, and so would the schema."""
    if depth > 8:
        raise Malformed(where, "nested too deeply")
    if isinstance(value, float) and not math.isfinite(value):
        raise Malformed(where, "not a finite number")
    if isinstance(value, dict):
        for key, item in value.items():
            no_infinities(item, member(where, key), depth + 1)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            no_infinities(item, f"{where}[{index}]", depth + 1)


def dataclass_fields(kind: type, value: Any, where: str) -> dict[str, Any]:
    """A JSON object holding exactly a dataclass's fields (those with defaults may be absent), each of
    the field's type."""
    fields = dataclasses.fields(kind)
    required = {f.name for f in fields if _required(f)}
    record = json_object(value, where, required, {f.name for f in fields} - required)
    checked = {}
    for f in fields:
        if f.name in record:
            check = _FIELD_CHECKS[str(f.type)]
            checked[f.name] = check(record[f.name], f"{where}.{f.name}")
    return checked


def _required(f: dataclasses.Field[Any]) -> bool:
    return f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING


_FIELD_CHECKS: dict[str, Callable[[Any, str], Any]] = {
    "str": text,
    "str | None": lambda value, where: optional(text, value, where),
    "int": lambda value, where: integer(value, where, 0, 2**31),
    "float": finite,
    "float | None": lambda value, where: optional(finite, value, where),
    "bool": boolean,
    "list[str]": texts,
    "dict[str, str]": text_table,
    "dict[str, dict[str, str]]": text_tables,
}


def member(where: str, key: str) -> str:
    """The name of an object's member: where.key for a plain key, else where['key'] (quoted, escaped)."""
    plain = re.fullmatch(r"[\w.:@-]{1,80}", key, flags=re.ASCII)
    return f"{where}.{key}" if plain else f"{where}[{shown(key)}]"


def shown(value: Any) -> str:
    """A value in a message: its repr (which escapes control characters), cut short."""
    written = repr(value)
    return one_line(written if len(written) <= 60 else written[:57] + "...")
