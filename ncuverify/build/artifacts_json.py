"""`ncuverify build --json`: every kernel's static facts in a versioned shape, written, and read back
for `build --diff` (a file from another build, so every field is checked: a number that is not finite
or a key given twice would let a grown kernel compare as unchanged)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from ncuverify.build.artifacts_listing import ListedKernel
from ncuverify.errors import InputError
from ncuverify.files import read_json, repeated_keys
from ncuverify.text import one_line

FORMAT = "ncuverify-build"
VERSION = 1
MAX_JSON_BYTES = 256 * 1024 * 1024
_TEXT_FIELDS = ("name", "symbol", "signature", "arch", "source")


def to_json(kernels: list[ListedKernel]) -> dict[str, Any]:
    """The document: {"format", "version", "kernels": [{name, symbol, signature, arch, source, facts,
    sass_mix}]}."""
    return {
        "format": FORMAT,
        "version": VERSION,
        "kernels": [
            {
                **{field: getattr(kernel, field) for field in _TEXT_FIELDS},
                "facts": kernel.facts,
                "sass_mix": kernel.mix,
            }
            for kernel in kernels
        ],
    }


def is_listing(path: Path) -> bool:
    return path.suffix == ".json"


def read_listing(path: Path) -> list[ListedKernel]:
    """The kernels of a `build --json` file; InputError saying what is wrong with it."""
    try:
        document = read_json(path, MAX_JSON_BYTES, keep_repeats=True)
    except OSError as error:
        raise InputError(f"{path}: cannot be read ({error.strerror})") from None
    except ValueError as error:
        raise InputError(f"{path}: {error}") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise InputError(f'{path}: not a `ncuverify build --json` file (no "format": "{FORMAT}")')
    if document.get("version") != VERSION:
        raise InputError(
            f"{path}: version {document.get('version')!r}; this ncuverify reads version {VERSION}"
        )
    _no_repeats(document, f"{path}:")
    kernels = document.get("kernels")
    if not isinstance(kernels, list):
        raise InputError(f'{path}: "kernels" is not a list')
    return [_kernel(path, index, entry) for index, entry in enumerate(kernels)]


def _kernel(path: Path, index: int, entry: object) -> ListedKernel:
    where = f"{path}: kernels[{index}]"
    if not isinstance(entry, dict):
        raise InputError(f"{where}: not an object")
    texts = [entry.get(field) for field in _TEXT_FIELDS]
    if not all(isinstance(text, str) for text in texts):
        raise InputError(f"{where}: {', '.join(_TEXT_FIELDS)} must each be text")
    name, symbol, signature, arch, source = (str(text) for text in texts)
    where += f" ({one_line(name)}, {one_line(arch)})"
    facts, mix = entry.get("facts"), entry.get("sass_mix")
    if not _numbers(facts, (int, float)) or not _numbers(mix, (int,)):
        raise InputError(f'{where}: "facts" and "sass_mix" must map names to numbers')
    for part, value in (("", entry), (" facts:", facts), (" sass_mix:", mix)):
        _no_repeats(value, where + ":" + part)
    for fact, number in facts.items():  # type: ignore[union-attr]
        if not _finite(number):  # NaN compares false with everything: a change would not show
            raise InputError(f"{where}: facts: {one_line(fact)} is {_shown(number)}, not a finite number")
    return ListedKernel(name, symbol, signature, arch, source, dict(facts), dict(mix))  # type: ignore[arg-type]


def _no_repeats(value: object, where: str) -> None:
    """InputError where the JSON object gave a key twice: which of its values counts is not known."""
    repeated = repeated_keys(value)
    if repeated:
        raise InputError(f"{where} {one_line(repr(repeated[0]))} is given twice")


def _finite(number: float) -> bool:
    try:
        return math.isfinite(number)
    except OverflowError:  # a whole number beyond any float
        return False


def _shown(number: float) -> str:
    return str(number) if isinstance(number, float) else "a whole number beyond any float"


def _numbers(value: object, kinds: tuple[type, ...]) -> bool:
    return isinstance(value, dict) and all(
        isinstance(key, str) and isinstance(number, kinds) and not isinstance(number, bool)
        for key, number in value.items()
    )
