"""Kernels from what a user's own build produced: a cubin, a fatbin, a relocatable object (.o), a
static library (.a), a shared library (.so) or an executable.

cuobjdump extracts the artifact's cubins into an empty temporary folder, from a copy of the artifact
under a name ncuverify chose (cuobjdump names what it writes after its input), within a time limit and
bounds on the artifact's size, the number of cubins and their bytes. What its fatbins unpack to is read
from their headers first (ncuverify.build.artifacts_fatbin), so that cuobjdump never writes more than
the bounds. Every file it leaves is checked against the names it writes before one is read. Each
cubin's architecture comes from its own ELF header, its kernels from its symbol table (both read within
bounds, ncuverify.build.artifacts_elf), and their facts from cuobjdump's resource table and (where
asked) nvdisasm's SASS, as for a kernel that ncuverify compiled; there is no ptxas report.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ncuverify.build import cache as compile_cache
from ncuverify.build.artifacts_elf import ELF_MAGIC, read_cubin
from ncuverify.build.artifacts_fatbin import check_unpacked
from ncuverify.build.binutils import TOOL_TIMEOUT_S, through_cache, tool_outputs
from ncuverify.build.built import BuiltKernel, built_kernels
from ncuverify.build.cache import CompileCache, Compiled
from ncuverify.build.limits import MAX_CUBIN_BYTES, MAX_UNPACKED_BYTES, MIB, Deadline, in_mib
from ncuverify.build.static import static_facts
from ncuverify.build.toolkit import find_tool
from ncuverify.errors import InputError
from ncuverify.files import NotRegular, Unreadable, open_plain
from ncuverify.processes import TimedOut, run_bounded

MAX_ARTIFACT_BYTES = 1024 * MIB
MAX_CUBINS = 4096

_COPY = "artifact"  # the artifact's name in the temporary folder
_EXTRACTED = re.compile(rf"{_COPY}(?:\.(\d+))?\.(sm_\d+[af]?)\.cubin")
_TOOL_PREFIX = re.compile(r"^cuobjdump \w+\s*:\s*")
_PTX = re.compile(r"PTX file\s+\d+:\s+\S*?\.(sm_\d+[af]?)\.ptx")


@dataclass(frozen=True)
class Cubin:
    """One cubin of an artifact: its bytes, the architecture it runs on and its kernels' symbols."""

    label: str  # in messages: the artifact, and which of its cubins (`lib.so: cubin 2 (sm_90)`)
    arch: str
    data: bytes
    kernels: tuple[str, ...]


def read_artifact(
    path: Path,
    arch: str | None,
    timeout_s: float = TOOL_TIMEOUT_S,
    cache: CompileCache | None = None,
    sass: bool = False,
) -> list[BuiltKernel]:
    """The kernels of the artifact's cubins for arch (every cubin's where arch is None), named
    demangled, with their static facts (SASS where asked); InputError where it holds none for arch,
    saying what it holds."""
    return [
        kernel
        for cubin in cubins_for(artifact_cubins(path, timeout_s), arch, path)
        for kernel in cubin_kernels(cubin, timeout_s, cache, sass)
    ]


def cubin_kernels(
    cubin: Cubin, timeout_s: float = TOOL_TIMEOUT_S, cache: CompileCache | None = None, sass: bool = False
) -> list[BuiltKernel]:
    """The cubin's kernels (entry functions, not device functions) with their facts (SASS where asked).
    cuobjdump's and nvdisasm's outputs are kept in the compile cache (where one is given) under the
    cubin's digest: a library of hundreds of kernels is read once, not on every check."""
    entry_key = compile_cache.key(cubin.data, [], ["--artifact-cubin"], (0, 0), [], _tools())
    compiled, _ = through_cache(
        cache, entry_key, cubin.label, lambda: _read_tools(cubin, timeout_s, sass), sass, timeout_s
    )
    facts = static_facts(None, compiled.resource_usage, compiled.disassembly, cubin.kernels)
    return built_kernels(facts, cubin.arch)


def _tools() -> tuple[str, ...]:
    """The tools whose outputs an entry holds: another installation is another entry."""
    return tuple(find_tool(tool) or "" for tool in ("cuobjdump", "nvdisasm"))


def _read_tools(cubin: Cubin, timeout_s: float, sass: bool) -> Compiled:
    try:
        resources, disassembly = tool_outputs(cubin.data, timeout_s, sass)
    except (RuntimeError, TimedOut, OSError) as error:
        raise InputError(f"{cubin.label}: cannot read its static facts: {error}") from None
    return Compiled(cubin.data, "", {}, resources, disassembly)


def cubins_for(cubins: list[Cubin], arch: str | None, path: Path) -> list[Cubin]:
    """The cubins built for arch (all where arch is None); InputError naming the ones it holds."""
    chosen = [cubin for cubin in cubins if arch is None or cubin.arch == arch]
    if not chosen:
        held = ", ".join(sorted({cubin.arch for cubin in cubins}))
        raise InputError(f"{path}: holds no cubin for {arch}; it holds cubins for {held}")
    return chosen


def artifact_cubins(path: Path, timeout_s: float = TOOL_TIMEOUT_S) -> list[Cubin]:
    """Every cubin of the artifact at path, in cuobjdump's order; InputError where it is no artifact,
    holds PTX only, or is larger than the bounds."""
    with tempfile.TemporaryDirectory(prefix="ncuverify-") as scratch:
        folder = Path(scratch)
        _copy_bounded(path, folder / _COPY)
        with open(folder / _COPY, "rb") as copy:
            head = copy.read(20)
        if head[:4] == ELF_MAGIC and head[18:20] == (190).to_bytes(2, "little"):  # a cubin itself
            _check_cubin_size(str(path), (folder / _COPY).stat().st_size)
            data = (folder / _COPY).read_bytes()
            header = read_cubin(data, str(path), Deadline())
            return [Cubin(str(path), header.arch, data, header.kernels)]
        check_unpacked(path, folder / _COPY, Deadline())
        return _extracted(path, folder, timeout_s)


def _check_cubin_size(label: str, size: int) -> None:
    if size > MAX_CUBIN_BYTES:
        raise InputError(
            f"{label}: a cubin of {in_mib(size)}, more than the {in_mib(MAX_CUBIN_BYTES)} one may be;"
            " refusing to read it"
        )


def _copy_bounded(path: Path, copy: Path) -> None:
    try:
        with open_plain(path) as source:
            if os.fstat(source.fileno()).st_size > MAX_ARTIFACT_BYTES:
                raise InputError(f"{path}: larger than {MAX_ARTIFACT_BYTES // MIB} MiB; refusing to read it")
            with open(copy, "xb") as target:
                shutil.copyfileobj(source, target)
    except NotRegular:
        raise InputError(f"{path}: not a regular file") from None
    except Unreadable as problem:
        raise InputError(f"{path}: cannot be read ({problem.reason})") from None
    if copy.stat().st_size > MAX_ARTIFACT_BYTES:  # it grew while it was copied
        raise InputError(f"{path}: larger than {MAX_ARTIFACT_BYTES // MIB} MiB; refusing to read it")


def _cuobjdump(path: Path, arguments: list[str], folder: Path, timeout_s: float) -> str:
    tool = find_tool("cuobjdump")
    if tool is None:
        raise InputError(f"{path}: reading a built artifact needs cuobjdump, which is not installed here")
    try:
        finished = run_bounded([tool, *arguments, _COPY], timeout_s, cwd=folder)
    except TimedOut as error:
        raise InputError(f"{path}: {error}") from None
    except OSError as error:
        raise InputError(f"{path}: cuobjdump cannot run: {error.strerror}") from None
    if finished.returncode != 0:
        said = (finished.stderr.strip() or finished.stdout.strip()).splitlines()
        first = _TOOL_PREFIX.sub("", said[0][:500]).replace(str(folder / _COPY), str(path)) if said else ""
        reason = first or f"exit status {finished.returncode}"
        raise InputError(f"{path}: not an artifact cuobjdump can read ({reason})")
    return finished.stdout


def _extracted(path: Path, folder: Path, timeout_s: float) -> list[Cubin]:
    _cuobjdump(path, ["-xelf", "all"], folder, timeout_s)
    found: list[tuple[int, str, Path]] = []
    total = 0
    for entry in os.scandir(folder):
        if entry.name == _COPY:
            continue
        match = _EXTRACTED.fullmatch(entry.name)
        if match is None or not stat.S_ISREG(entry.stat(follow_symlinks=False).st_mode):
            raise InputError(
                f"{path}: cuobjdump wrote {entry.name[:200]!r}, which no cubin it extracts is named"
            )
        size = entry.stat(follow_symlinks=False).st_size
        total += size
        if len(found) >= MAX_CUBINS or total > MAX_UNPACKED_BYTES:
            raise InputError(
                f"{path}: holds more than {MAX_CUBINS} cubins or {in_mib(MAX_UNPACKED_BYTES)} of them;"
                " refusing to read on"
            )
        _check_cubin_size(f"{path}: cubin {match.group(1) or 1} ({match.group(2)})", size)
        found.append((int(match.group(1) or 0), match.group(2), Path(entry.path)))
    if not found:
        raise InputError(f"{path}: {_no_cubin(path, folder, timeout_s)}")
    deadline = Deadline()  # for all its cubins' tables together, cuobjdump's run aside
    return [_cubin(path, index, arch, file, deadline) for index, arch, file in sorted(found)]


def _cubin(path: Path, index: int, listed_arch: str, file: Path, deadline: Deadline) -> Cubin:
    label = f"{path}: cubin {index or 1} ({listed_arch})"
    data = file.read_bytes()
    header = read_cubin(data, label, deadline)
    if header.arch != listed_arch.rstrip("af"):
        raise InputError(f"{label}: cuobjdump says {listed_arch}, its ELF header {header.arch}")
    return Cubin(label, listed_arch, data, header.kernels)


def _no_cubin(path: Path, folder: Path, timeout_s: float) -> str:
    """Why an artifact gave no cubin: PTX only (for which architectures), or no CUDA code at all."""
    try:
        listing = _cuobjdump(path, ["-lptx"], folder, timeout_s)
    except InputError:
        listing = ""
    ptx = sorted(set(_PTX.findall(listing)))
    if ptx:
        return (
            f"holds PTX only ({', '.join(ptx)}), no cubin: ncuverify reads compiled code; build it with"
            " -gencode arch=compute_NN,code=sm_NN"
        )
    return "holds no cubin"
