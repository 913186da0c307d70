"""Running the CUDA binary utilities on a cubin, in a temporary folder and within a time limit:
cuobjdump for its resource table, nvdisasm for its SASS."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from ncuverify.build import cache as compile_cache
from ncuverify.build.cache import CompileCache, Compiled
from ncuverify.build.toolkit import find_tool
from ncuverify.errors import InputError
from ncuverify.processes import TimedOut, run_bounded

# How long cuobjdump or nvdisasm may take on one cubin (they take well under a second).
TOOL_TIMEOUT_S = 120.0


def _run_on_cubin(tool: str, arguments: list[str], cubin: bytes, timeout_s: float = TOOL_TIMEOUT_S) -> str:
    """The tool's output on the cubin; RuntimeError where it fails, TimedOut past the limit (its
    process group is killed, and the cubin's temporary folder removed either way)."""
    with tempfile.TemporaryDirectory(prefix="ncuverify-") as scratch:
        path = Path(scratch) / "kernel.cubin"
        path.write_bytes(cubin)
        finished = run_bounded([tool, *arguments, str(path)], timeout_s, cwd=Path(scratch))
    if finished.returncode != 0:
        raise RuntimeError(f"{Path(tool).name} failed: {finished.stderr.strip() or finished.stdout.strip()}")
    return finished.stdout


def tool_outputs(
    cubin: bytes, timeout_s: float = TOOL_TIMEOUT_S, sass: bool = True
) -> tuple[str, str | None]:
    """cuobjdump's resource usage ("" without cuobjdump) and, where sass, nvdisasm's text (None without
    nvdisasm), each run within timeout_s."""
    cuobjdump = find_tool("cuobjdump")
    resources = _run_on_cubin(cuobjdump, ["--dump-resource-usage"], cubin, timeout_s) if cuobjdump else ""
    return resources, disassembly(cubin, timeout_s) if sass else None


def disassembly(cubin: bytes, timeout_s: float = TOOL_TIMEOUT_S) -> str | None:
    """nvdisasm's text of the cubin; None without nvdisasm."""
    nvdisasm = find_tool("nvdisasm")
    return _run_on_cubin(nvdisasm, ["-c"], cubin, timeout_s) if nvdisasm else None


def through_cache(
    cache: CompileCache | None,
    entry_key: str,
    source_name: str,
    compile_it: Callable[[], Compiled],
    sass: bool,
    timeout_s: float = TOOL_TIMEOUT_S,
) -> tuple[Compiled, list[str]]:
    """As ncuverify.build.cache.through; where sass is asked for and the entry was kept without it, the
    cubin is disassembled now and the entry kept again with its SASS. InputError where nvdisasm fails."""
    compiled, warnings = compile_cache.through(cache, entry_key, source_name, compile_it)
    if not sass or compiled.disassembly is not None:
        return compiled, warnings
    try:
        text = disassembly(compiled.cubin, timeout_s)
    except (RuntimeError, TimedOut, OSError) as error:
        raise InputError(f"{source_name}: cannot read the static facts of the build: {error}") from None
    if text is None:
        return compiled, warnings  # no nvdisasm
    compiled = replace(compiled, disassembly=text)
    if cache is not None and (problem := cache.put(entry_key, compiled)) is not None:
        warnings.append(f"{source_name}: {problem}")
    return compiled, warnings
