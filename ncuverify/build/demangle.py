"""C++ names as users write them: mangled symbols demangled (ncuverify.names reads the function's name
back from a demangled signature).

The symbols come from cubins that a pull request may have built, so the demangler (the C++ runtime's
own, `__cxa_demangle` in libstdc++) runs in a child process with a time and memory limit: a name
crafted to make it recurse without end or take exponential time costs that child, never the check.
Where it cannot run, or a name does not demangle, the name stays as it is.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

from ncuverify.processes import TimedOut, run_bounded

# Longer names, or names with characters no mangling uses, are left as they are.
MAX_SYMBOL_CHARS = 4096
MAX_SYMBOLS = 100_000
DEMANGLE_TIMEOUT_S = 30.0
_CHILD_MEMORY_BYTES = 1024 * 1024 * 1024

# Reads a JSON list of names from the file named by argv[1]; prints a JSON object name -> demangled for
# the names that demangle.
_CHILD = f"""
import ctypes, ctypes.util, json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, ({_CHILD_MEMORY_BYTES}, {_CHILD_MEMORY_BYTES}))
library = ctypes.CDLL("libstdc++.so.6")
library.__cxa_demangle.restype = ctypes.c_void_p
library.__cxa_demangle.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)]
free = ctypes.CDLL(None).free
free.argtypes = [ctypes.c_void_p]
found = {{}}
for name in json.load(open(sys.argv[1], encoding="ascii")):
    status = ctypes.c_int()
    pointer = library.__cxa_demangle(name.encode("ascii"), None, None, ctypes.byref(status))
    if pointer:
        found[name] = ctypes.string_at(pointer).decode("ascii", errors="replace")
        free(pointer)
print(json.dumps(found))
"""


def demangle(symbols: Iterable[str], timeout_s: float = DEMANGLE_TIMEOUT_S) -> dict[str, str]:
    """Each symbol -> its demangled signature, or the symbol itself where it does not demangle (not a
    C++ name, extern "C", too long, or no demangler on this machine)."""
    names = list(dict.fromkeys(symbols))
    mangled = [name for name in names if _demanglable(name)][:MAX_SYMBOLS]
    found = _in_child(mangled, timeout_s) if mangled else {}
    return {name: found.get(name, name) for name in names}


def _demanglable(name: str) -> bool:
    return name.startswith("_Z") and len(name) <= MAX_SYMBOL_CHARS and name.isascii() and name.isprintable()


def _in_child(names: list[str], timeout_s: float) -> dict[str, str]:
    with tempfile.TemporaryDirectory(prefix="ncuverify-") as scratch:
        request = Path(scratch) / "names.json"
        request.write_text(json.dumps(names), encoding="ascii")
        try:
            finished = run_bounded(
                [sys.executable, "-P", "-c", _CHILD, str(request)], timeout_s, cwd=Path(scratch)
            )
        except (OSError, TimedOut):
            return {}
    if finished.returncode != 0:
        return {}
    try:
        answer = json.loads(finished.stdout)
    except ValueError:
        return {}
    if not isinstance(answer, dict):
        return {}
    wanted = set(names)
    return {
        key: value
        for key, value in answer.items()
        if key in wanted and isinstance(value, str) and len(value) <= 16 * MAX_SYMBOL_CHARS
    }
