"""The toolchain nvcc compiles with: nvcc itself, the host C++ compiler (g++) it preprocesses with,
their versions, and the host compiler's system include folders; each asked once a run, bounded, in a
minimal environment.

Which CUDA toolkit's nvcc (and so which headers: cuBLAS, cuDNN, NCCL where the toolkit has them) is
the runner's choice first, then the file's, then the machine's: `--cuda-home` > the file's `toolkit:` >
CUDA_HOME > CUDA_PATH > the CUDA wheels > an nvcc on the PATH. The wheels come before the PATH because
they are the version ncuverify was installed with, and an nvcc on the PATH is often a wrapper script
(ccache, a shim) whose folder is no toolkit; the variables and the option say which toolkit on purpose.
The file's `toolkit:` comes from the pull request under test, so it may name only a toolkit that the
pull request cannot have written (trusted_toolkit_problem).
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from ncuverify.build.resolve import Roots
from ncuverify.build.toolkit import cuda_include_dirs, find_tool
from ncuverify.errors import InputError
from ncuverify.processes import TimedOut, run_bounded
from ncuverify.text import one_line

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
        """What the compile cache keys on beside the sources and options: two toolkits of one release
        may hold different library headers."""
        return ("nvcc", self.nvcc_version, self.host_version, str(self.toolkit_root))

    @property
    def release(self) -> str:
        """nvcc's release as `nvcc --version` gives it (13.0.88 of `V13.0.88`); `unknown` where it
        says none."""
        found = _RELEASE.search(self.nvcc_version)
        return one_line(found.group(1)) if found else "unknown"

    @property
    def described(self) -> str:
        """Which nvcc compiled, as provenance records it: its release and its toolkit's root."""
        return one_line(f"nvcc {self.release} at {self.toolkit_root}")

    @property
    def header_folders(self) -> tuple[Path, ...]:
        """The toolkit's own CUDA headers (include/, and include/cccl where CCCL lies there), which nvcc
        adds itself; the CUDA wheels' where nvcc's folder is no toolkit (a wrapper on the PATH)."""
        include = self.toolkit_root / "include"
        if not (include / "cuda_runtime.h").is_file():
            return tuple(Path(os.path.realpath(folder)) for folder in cuda_include_dirs())
        folders = (include, include / "cccl")
        return tuple(Path(os.path.realpath(folder)) for folder in folders if folder.is_dir())


# `Cuda compilation tools, release 13.0, V13.0.88`
_RELEASE = re.compile(r"release [^,\n]*, V([0-9][0-9.]*)")


def minimal_environment(tools: tuple[Path, ...], temporary: Path | None = None) -> dict[str, str]:
    """The whole environment nvcc and g++ get: a PATH of their own folders and the C locale. Nothing of
    ncuverify's environment reaches them, so NVCC_PREPEND_FLAGS, CPATH, GCC_EXEC_PREFIX and the like,
    which would change what they read or run, cannot."""
    environment = {"PATH": os.pathsep.join(dict.fromkeys(str(tool.parent) for tool in tools)), "LC_ALL": "C"}
    if temporary is not None:
        environment["TMPDIR"] = str(temporary)
    return environment


def host_toolchain(
    timeout_s: float = PROBE_TIMEOUT_S,
    cuda_home: Path | None = None,
    file_toolkit: str | None = None,
    roots: Roots | None = None,
) -> HostToolchain:
    """nvcc (from the toolkit chosen: see the module's note) and g++; InputError saying what is missing.
    cuda_home is the command line's --cuda-home; file_toolkit the expectation file's `toolkit:`, checked
    against roots (the project and the allowed folders, where it must not lie)."""
    nvcc_found, gxx_found = chosen_nvcc(cuda_home, file_toolkit, roots), shutil.which("g++")
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


def chosen_nvcc(cuda_home: Path | None, file_toolkit: str | None, roots: Roots | None) -> str | None:
    """The nvcc of the toolkit chosen, in the module's order; None where none is found."""
    if cuda_home is not None:
        return _toolkit_nvcc(cuda_home, "--cuda-home")
    if file_toolkit is not None:
        if (problem := trusted_toolkit_problem(file_toolkit, roots)) is not None:
            raise InputError(f"toolkit: {one_line(file_toolkit)}: {problem}")
        return _toolkit_nvcc(Path(file_toolkit), "toolkit:")
    for variable in ("CUDA_HOME", "CUDA_PATH"):
        if value := os.environ.get(variable):
            return _toolkit_nvcc(Path(value), variable)
    return find_tool("nvcc")


def _toolkit_nvcc(root: Path, given_by: str) -> str:
    nvcc = root / "bin" / "nvcc"
    if not (nvcc.is_file() and os.access(nvcc, os.X_OK)):
        raise InputError(
            f"{given_by} {one_line(str(root))}: no CUDA toolkit there (no bin/nvcc to run); name the folder"
            " that holds bin/nvcc (such as /usr/local/cuda)"
        )
    return os.path.realpath(nvcc)


def trusted_toolkit_problem(written: str, roots: Roots | None) -> str | None:
    """Why an expectation file's `toolkit:` cannot be used, or None. The file may come from the pull
    request under test, so the toolkit must be one it cannot have written: an absolute path (never one
    relative to the file, in the checkout), outside the project and the allowed folders, whose nvcc and
    every folder down to it are owned by root and writable by no one else (as an installed toolkit is).
    The runner's own --cuda-home and CUDA_HOME take any folder."""
    if not os.path.isabs(written):
        return "not an absolute path: a toolkit named by the file is an installed one, never a folder of the project"
    nvcc = Path(os.path.realpath(Path(written) / "bin" / "nvcc"))
    for root in (roots.project, *roots.allowed) if roots is not None else ():
        if nvcc.is_relative_to(root):
            return (
                f"inside {root}, which the pull request under test may have written; give --cuda-home instead"
            )
    # nvcc runs the programs beside it (ptxas, cudafe++) and cicc from nvvm/bin: those too
    programs = [p for folder in (nvcc.parent, nvcc.parent.parent / "nvvm" / "bin") for p in _listed(folder)]
    for part in (*programs, nvcc, *nvcc.parents):
        try:
            status = part.stat()
        except OSError:
            return "no CUDA toolkit there (no bin/nvcc to run)"
        if status.st_uid != 0 or status.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            return (
                f"{part} is not owned by root, or others may write it: a toolkit named by the file must be"
                " an installed one; give --cuda-home or CUDA_HOME instead"
            )
    return None


def _listed(folder: Path) -> list[Path]:
    try:
        return sorted(folder.iterdir())
    except OSError:
        return []


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
