"""YAML 1.2's core schema for plain scalars, and why a scalar YAML 1.1 reads otherwise is refused."""

from __future__ import annotations

import re
from typing import Any

import yaml

from ncuverify.errors import InputError

MAX_NUMBER_LENGTH = 100

# Plain scalars are typed by YAML 1.2's core schema, not by PyYAML's YAML 1.1 resolver, which reads
# 010 as 8, 1:30 as 90 and yes as true. The loader tags every plain scalar so, and the reader types it.
PLAIN_TAG = "tag:ncuverify,2025:plain"
STR_TAG = "tag:yaml.org,2002:str"
_NULL = re.compile(r"~|null|Null|NULL|")
_TRUE = re.compile(r"true|True|TRUE")
_FALSE = re.compile(r"false|False|FALSE")
_DECIMAL = re.compile(r"[-+]?[0-9]+")
_LEADING_ZERO = re.compile(r"[-+]?0[0-9]+")  # octal in YAML 1.1, decimal in 1.2: refused as a number
_OCTAL = re.compile(r"0o[0-7]+")
_HEXADECIMAL = re.compile(r"0x[0-9a-fA-F]+")
_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")
_INFINITY = re.compile(r"[-+]?\.(?:inf|Inf|INF)")
_NAN = re.compile(r"\.(?:nan|NaN|NAN)")
_YAML11_TAGS = {f"tag:yaml.org,2002:{kind}" for kind in ("bool", "int", "float")}


class WrittenInt(int):
    """An int read from YAML, with its text as written, for the fields that are text (`section: 2.10`)."""

    text: str

    def __new__(cls, value: int, text: str) -> WrittenInt:
        number = super().__new__(cls, value)
        number.text = text
        return number


class WrittenFloat(float):
    """A float read from YAML, with its text as written."""

    text: str

    def __new__(cls, value: float, text: str) -> WrittenFloat:
        number = super().__new__(cls, value)
        number.text = text
        return number


class Yaml11Text(str):
    """A plain scalar YAML 1.2 reads as text and YAML 1.1 as something else (reading: what, or None where
    only the leading zero of a number differs). It is text where text belongs and refused, saying why,
    where a number or a boolean does."""

    reading: bool | int | float | None

    def __new__(cls, text: str, reading: bool | int | float | None) -> Yaml11Text:
        scalar = super().__new__(cls, text)
        scalar.reading = reading
        return scalar


def plain_scalar(text: str, line: int) -> Any:
    """A plain scalar typed as YAML 1.2's core schema types it."""
    if _NULL.fullmatch(text):
        return None
    if _TRUE.fullmatch(text) or _FALSE.fullmatch(text):
        return text[0] in "tT"
    if len(text) > MAX_NUMBER_LENGTH and any(
        form.fullmatch(text) for form in (_DECIMAL, _OCTAL, _HEXADECIMAL)
    ):
        raise InputError(f"line {line}: a number of {len(text)} characters is longer than ncuverify reads")
    if _LEADING_ZERO.fullmatch(text):
        return Yaml11Text(text, _yaml11_reading(text))
    if _DECIMAL.fullmatch(text):
        return WrittenInt(int(text), text)
    if _OCTAL.fullmatch(text) or _HEXADECIMAL.fullmatch(text):
        return WrittenInt(int(text[2:], 8 if text[1] == "o" else 16), text)
    if _INFINITY.fullmatch(text):
        return WrittenFloat(float("-inf") if text[0] == "-" else float("inf"), text)
    if _NAN.fullmatch(text):
        return WrittenFloat(float("nan"), text)
    if _FLOAT.fullmatch(text):
        return WrittenFloat(float(text), text)
    reading = _yaml11_reading(text)
    return text if reading is None else Yaml11Text(text, reading)


def _yaml11_reading(text: str) -> bool | int | float | None:
    """What PyYAML's YAML 1.1 resolver makes of a plain scalar, where that is a boolean or a number."""
    if text in ("y", "Y", "n", "N"):  # booleans in YAML 1.1 itself, though PyYAML reads them as text
        return text in "yY"
    if len(text) > 64:
        return None
    tag = yaml.resolver.Resolver().resolve(yaml.ScalarNode, text, (True, False))
    if tag not in _YAML11_TAGS:
        return None
    try:
        value = yaml.constructor.SafeConstructor().construct_object(yaml.ScalarNode(tag, text))
    except (ValueError, yaml.YAMLError):
        return None
    return value if isinstance(value, bool | int | float) else None


def _yaml11_described(scalar: Yaml11Text) -> tuple[str, str]:
    """What YAML 1.1 would read the scalar as, and what to write instead."""
    value = scalar.reading
    if isinstance(value, bool):
        return ("true" if value else "false"), "a number"
    if value is None:  # a leading zero YAML 1.1 does not read as octal (09)
        return "text: a leading 0 means octal", str(int(scalar))
    if _LEADING_ZERO.fullmatch(scalar):
        return f"octal {value}", f"{value} or {int(scalar)}"
    kind = "binary " if "0b" in scalar else "sexagesimal " if ":" in scalar else ""
    return f"{kind}{value}", str(value)


def not_a_number(scalar: Yaml11Text) -> str:
    reading, instead = _yaml11_described(scalar)
    return f"{scalar} is not a number here (YAML 1.1 would read it as {reading}): write {instead}"


def _not_a_boolean(scalar: Yaml11Text) -> str | None:
    if not isinstance(scalar.reading, bool):
        return None
    word = "true" if scalar.reading else "false"
    return f"{scalar} is not a boolean here (YAML 1.1 would read it as {word}): write {word}"


def ambiguous(scalar: Yaml11Text) -> str:
    """For a field that takes text and numbers alike: which one the author meant is not known."""
    reading, instead = _yaml11_described(scalar)
    if isinstance(scalar.reading, bool):
        instead = reading
    return (
        f"{scalar} is read differently by YAML 1.1 ({reading}) and YAML 1.2: write {instead}, "
        f"or '{scalar}' in quotes for the text"
    )


_NUMBER_ERRORS = ("int_type", "float_type")


def scalar_problem(error_type: str, given: Any) -> str | None:
    """Why a scalar is not the number or boolean its field takes, where YAML explains it."""
    if isinstance(given, Yaml11Text):
        if error_type in _NUMBER_ERRORS:
            return not_a_number(given)
        if error_type == "bool_type":
            return _not_a_boolean(given)
    elif isinstance(given, str) and error_type in _NUMBER_ERRORS:
        if any(form.fullmatch(given) for form in (_DECIMAL, _OCTAL, _HEXADECIMAL, _FLOAT)):
            return f"{given!r} is quoted, so it is text: write {given} without quotes for the number"
    elif isinstance(given, WrittenFloat) and error_type == "int_type" and given.is_integer():
        return f"{given.text} is not written as a whole number: write {int(given)}"
    return None
