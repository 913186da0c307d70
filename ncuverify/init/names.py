"""Names in a starter expectation file: a unique id for each kernel, made from its C++ name, and YAML
scalars written so that YAML reads them back as the same text."""

from __future__ import annotations

import re
from collections.abc import Iterable

from ncuverify.spec.fields import MAX_ID_LENGTH

# Claim ids add a suffix such as `_shared_static` to the kernel's id: room is kept for it.
MAX_KERNEL_ID = MAX_ID_LENGTH - 28
_NOT_ID = re.compile(r"[^A-Za-z0-9]+")
_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*", re.ASCII)
# Words that YAML 1.1 or 1.2 reads as booleans or null where they stand plain.
_YAML_WORDS = frozenset({"y", "n", "yes", "no", "on", "off", "true", "false", "null"})


def kernel_ids(names: Iterable[str]) -> dict[str, str]:
    """Each name -> an id: letters, digits and _ (`stride<float>` -> stride_float, `ns::copy` ->
    ns_copy), at most MAX_KERNEL_ID characters, unique (a repeat gets _2, _3, ...)."""
    ids: dict[str, str] = {}
    taken: set[str] = set()
    for name in names:
        base = _id_of(name)
        candidate, number = base, 1
        while candidate in taken:
            number += 1
            tail = f"_{number}"
            candidate = base[: MAX_KERNEL_ID - len(tail)] + tail
        taken.add(candidate)
        ids[name] = candidate
    return ids


def _id_of(name: str) -> str:
    words = _NOT_ID.sub("_", name.encode("ascii", errors="ignore").decode()).strip("_")
    if not words or words[0].isdigit():
        words = f"kernel_{words}".rstrip("_")
    return words[:MAX_KERNEL_ID].rstrip("_")


def scalar(text: str) -> str:
    """text as a YAML scalar: plain where it is a name YAML reads as text, else double-quoted."""
    if _PLAIN.fullmatch(text) and text.lower() not in _YAML_WORDS:
        return text
    return '"' + "".join(_escaped(character) for character in text) + '"'


def _escaped(character: str) -> str:
    """A character inside a double-quoted YAML scalar; what YAML may not hold raw as an escape."""
    if character in '"\\':
        return "\\" + character
    if character.isprintable() and not "\ud800" <= character <= "\udfff":
        return character
    code = ord(character)
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
