"""The toolchain nvcc compiles with: nvcc itself, the host C++ compiler (g++) it preprocesses with,
their versions, and the host compiler's system include folders; each asked once a run, bounded, in a
minimal environment."""

from __future__ import annotations

import functools
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from ncuverify.build.toolkit import find_tool
from ncuverify.errors import InputError
from ncuverify.processes import TimedOut, run_bounded

# How long `nvcc --version`, `g++ --version` and g++'s search list may take (well under a second).
PROBE_TIMEOUT_S = 30.0
# What of a version's text goes into the cache key: its first lines, bounded.
_MAX_VERSION_CHARS = 2000


@dataclass(frozen=True)
class HostToolchain:
    nvcc: Path
    host_compiler: Path  # g++, which nvcc runs as its preprocessor and host compiler
    nvcc_version: str
    host_version: str
    include_dirs: tuple[Path, ...]  # g++'s system include folders, resolved

    @property
    def toolkit_root(self) -> Path:
        """The CUDA installation nvcc belongs to (bin/..): its headers, nvvm and ptxas."""
        return self.nvcc.parent.parent

    @property
    def identity(self) -> tuple[str, ...]:
        """What the compile cache keys on beside the sources and options."""
        return ("nvcc", self.nvcc_version, self.host_version)


def minimal_environment(tools: tuple[Path, ...], temporary: Path | None = None) -> dict[str, str]:
    """The whole environment nvcc and g++ get: a PATH of their own folders and the C locale. Nothing of
    ncuverify's environment reaches them, so NVCC_PREPEND_FLAGS, CPATH, GCC_EXEC_PREFIX and the like,
    which would change what they read or run, cannot."""
    environment = {"PATH": os.pathsep.join(dict.fromkeys(str(tool.parent) for tool in tools)), "LC_ALL": "C"}
    if temporary is not None:
        environment["TMPDIR"] = str(temporary)
    return environment


def host_toolchain(timeout_s: float = PROBE_TIMEOUT_S) -> HostToolchain:
    """nvcc and g++ as this machine offers them; InputError saying what is missing."""
    nvcc_found, gxx_found = find_tool("nvcc"), shutil.which("g++")
    if nvcc_found is None:
        raise InputError(
            "compiler: nvcc needs nvcc, which is neither in the CUDA wheels nor on the PATH here: install "
            "cuda-toolkit[nvcc] (pip) or a CUDA toolkit"
        )
    if gxx_found is None:
        raise InputError(
            "compiler: nvcc needs a host C++ compiler, and there is no g++ on the PATH here: install g++ "
            "(apt install g++)"
        )
    return _probed(Path(os.path.realpath(nvcc_found)), Path(gxx_found), timeout_s)


@functools.cache
def _probed(nvcc: Path, host_compiler: Path, timeout_s: float) -> HostToolchain:
    environment = minimal_environment((nvcc, host_compiler))
    return HostToolchain(
        nvcc=nvcc,
        host_compiler=host_compiler,
        nvcc_version=_output(nvcc, ["--version"], environment, timeout_s)[:_MAX_VERSION_CHARS],
        host_version=_output(host_compiler, ["--version"], environment, timeout_s)[:_MAX_VERSION_CHARS],
        include_dirs=search_list(
            _output(host_compiler, ["-E", "-x", "c++", "-", "-v"], environment, timeout_s)
        ),
    )


def _output(tool: Path, arguments: list[str], environment: dict[str, str], timeout_s: float) -> str:
    try:
        finished = run_bounded([str(tool), *arguments], timeout_s, env=environment, cwd=Path("/"))
    except (OSError, TimedOut) as error:
        raise InputError(f"{tool} {' '.join(arguments)} failed: {error}") from None
    if finished.returncode != 0:
        last = (finished.stderr.strip().splitlines() or [""])[-1]
        raise InputError(f"{tool} {' '.join(arguments)} failed (exit status {finished.returncode}): {last}")
    return finished.stdout + finished.stderr


def search_list(text: str) -> tuple[Path, ...]:
    """The folders of `g++ -E -v`'s '#include <...> search starts here:' list, resolved."""
    lines = text.splitlines()
    try:
        start = lines.index("#include <...> search starts here:") + 1
        end = lines.index("End of search list.", start)
    except ValueError:
        return ()
    folders = (line.strip() for line in lines[start:end])
    return tuple(dict.fromkeys(Path(os.path.realpath(folder)) for folder in folders if os.path.isabs(folder)))
