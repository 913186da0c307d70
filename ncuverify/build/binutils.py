"""Running the CUDA binary utilities on a cubin, in a temporary folder and within a time limit:
cuobjdump for its resource table, nvdisasm for its SASS."""

from __future__ import annotations

import tempfile
from pathlib import Path

from ncuverify.build.toolkit import find_tool
from ncuverify.processes import run_bounded

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


def tool_outputs(cubin: bytes, timeout_s: float = TOOL_TIMEOUT_S) -> tuple[str, str | None]:
    """cuobjdump's resource usage ("" without cuobjdump) and nvdisasm's text (None without nvdisasm),
    each run within timeout_s."""
    cuobjdump, nvdisasm = find_tool("cuobjdump"), find_tool("nvdisasm")
    resources = _run_on_cubin(cuobjdump, ["--dump-resource-usage"], cubin, timeout_s) if cuobjdump else ""
    disassembly = _run_on_cubin(nvdisasm, ["-c"], cubin, timeout_s) if nvdisasm else None
    return resources, disassembly
