"""Compiling a unit with nvcc (`compiler: nvcc`): whole programs, host code and host headers beside the
kernels, to one cubin for the unit's arch, read afterwards as NVRTC's is.

nvcc runs in the compile worker (ncuverify.build.worker), which confines itself with Landlock and then
becomes nvcc: nvcc, g++ and everything they start can read only the project, the allowed folders, the
CUDA installation, g++'s system headers and what the tools need to run, and write only the empty
temporary folder the build gets. They get a minimal environment (ncuverify.build.host), a time limit
for their whole process group, and only the options of ncuverify.build.nvcc_flags.

nvcc runs its own steps through sh, its arguments inside double quotes: nothing that sh would read there
(`$`, backticks, backslashes, `"`, a newline) reaches its command line. The expectation file's fields are
refused as they are read (ncuverify.build.units, with nvcc_flags.nvcc_argument_problem), and the command
line is looked at once more before nvcc starts.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ncuverify.build import cache as compile_cache
from ncuverify.build.demangle import demangle
from ncuverify.build.host import HostToolchain, minimal_environment
from ncuverify.build.launch import WORKER_SCRIPT, worker_environment
from ncuverify.build.limits import MAX_CUBIN_BYTES
from ncuverify.build.nvcc_flags import nvcc_argument_problem, nvcc_list_item
from ncuverify.build.resolve import IncludedFile, Roots, Source, read_bounded, resolve
from ncuverify.build.units import Unit
from ncuverify.errors import InputError
from ncuverify.names import function_name
from ncuverify.processes import Finished, TimedOut, run_bounded
from ncuverify.text import one_line

# What nvcc and g++ read besides the sources and headers: their libraries, g++'s own programs
# (cc1plus under /usr/lib/gcc or /usr/libexec), the loader's cache, /dev/null.
_RUNTIME_FOLDERS = (
    "/usr/lib",
    "/usr/lib64",
    "/lib",
    "/lib64",
    "/usr/libexec",
    "/etc/ld.so.cache",
    "/dev/null",
)


@dataclass(frozen=True)
class NvccAnswer:
    """What nvcc did: its output (the ptxas report among it, or its errors) and the cubin (b"" where it
    failed)."""

    compiled: bool
    log: str
    cubin: bytes
    confined: bool  # whether Landlock held nvcc to the folders it was given
    network_closed: bool  # whether Landlock kept nvcc from binding or connecting over TCP


def search_folders(unit: Unit, host: HostToolchain) -> list[str]:
    """Where nvcc looks for headers: its toolkit's CUDA headers, the .cu file's folder, the include
    folders, then g++'s system folders."""
    folders = [str(folder) for folder in host.header_folders]
    folders += [str(unit.folder)] if unit.folder is not None else []
    return list(dict.fromkeys([*folders, *unit.include_dirs, *(str(d) for d in host.include_dirs)]))


def include_graph(unit: Unit, host: HostToolchain, roots: Roots) -> tuple[IncludedFile, ...]:
    """The unit's include graph as nvcc may read it (roots with g++'s system folders among them)."""
    source = Source(unit.source_bytes, unit.source_name, unit.folder)
    return resolve(source, [Path(folder) for folder in search_folders(unit, host)], roots)


def cache_key(unit: Unit, host: HostToolchain, files: list[tuple[str, str, str]]) -> str:
    """The compile cache's key for the unit; files are its include graph's (root, path, sha256)."""
    options = [*nvcc_options(unit), *unit_include_dirs(unit)]
    # NVRTC's version does not decide nvcc's cubin: nvcc's and g++'s versions (host.identity) do.
    return compile_cache.key(unit.source_bytes, list(unit.instances), options, (0, 0), files, host.identity)


def nvcc_options(unit: Unit) -> list[str]:
    """The options of the command line that decide the cubin, include folders aside (they differ
    between machines, and the include graph keys the cache)."""
    return [_as_listed(option) for option in _options_as_given(unit)]


def _options_as_given(unit: Unit) -> list[str]:
    """nvcc_options with the -D and -U values as the file gives them."""
    options = ["-cubin", f"-arch={unit.arch}", f"-std={unit.std}", "-Xptxas", "-v", "-x", "cu"]
    if unit.lineinfo:
        options.append("-lineinfo")
    if unit.max_registers is not None:
        options.append(f"-maxrregcount={unit.max_registers}")
    options += [f"-D{n}" if v is None else f"-D{n}={v}" for n, v in unit.defines]
    return [*options, *unit.options]


def _as_listed(option: str) -> str:
    """A -D or -U option with its value as nvcc reads a list (a comma kept inside it)."""
    for prefix in ("-D", "--define-macro=", "--undefine-macro="):
        if option.startswith(prefix):
            return prefix + nvcc_list_item(option.removeprefix(prefix))
    return option


def compile_cubin(unit: Unit, host: HostToolchain, roots: Roots, timeout_s: float) -> NvccAnswer:
    """nvcc's cubin for the unit, built confined in an empty temporary folder; InputError where it runs
    past timeout_s or leaves no cubin."""
    with tempfile.TemporaryDirectory(prefix="ncuverify-nvcc-") as scratch_name:
        scratch = Path(scratch_name)
        work, temporary, output = scratch / "cwd", scratch / "tmp", scratch / "out"
        for folder in (work, temporary, output):
            folder.mkdir()
        source = _source_path(unit, scratch)
        folders = unit_include_dirs(unit)
        command = [
            str(host.nvcc),
            "-ccbin",
            str(host.host_compiler),
            *nvcc_options(unit),
            *(f"-I{folder}" for folder in folders),
            str(source),
            "-o",
            str(output / "kernel.cubin"),
        ]
        given = [str(host.nvcc), str(host.host_compiler), *_options_as_given(unit), *command[-3:]]
        _check_arguments(unit, given, folders)
        readable = [str(p) for p in (*_readable(roots, host), source.parent)]
        request = {
            "exec": command,
            "environment": minimal_environment((host.nvcc, host.host_compiler), temporary),
            "readable": readable,
            "writable": [str(temporary), str(output)],
        }
        (scratch / "request.json").write_text(json.dumps(request))
        finished = _run_worker(unit, scratch, timeout_s)
        confined, network_closed, log = _split_answer(finished)
        if unit.instances:  # the unit of the entries names the source, which its errors show as given
            log = _named_as_shown(log, str(source), _ENTRIES_UNIT)
            if unit.folder is not None:
                source = unit.folder / Path(unit.source_name).name
            else:
                source = source.parent / "source.cu"
        log = _named_as_shown(log, str(source), unit.source_name)
        if finished.returncode != 0:
            return NvccAnswer(False, log, b"", confined, network_closed)
        try:
            cubin = read_bounded(output / "kernel.cubin", MAX_CUBIN_BYTES)
        except InputError as error:
            raise InputError(f"{unit.source_name}: nvcc left no cubin ({error})") from None
    return NvccAnswer(True, log, cubin, confined, network_closed)


def _check_arguments(unit: Unit, arguments: list[str], folders: list[str]) -> None:
    """The last look before nvcc's shell, at what its command line is made of: the unit's fields were
    checked as they were read, where a message can name them; this covers the tools' and the temporary
    folder's paths too."""
    for argument, folder in [*((a, False) for a in arguments), *((f, True) for f in folders)]:
        if (problem := nvcc_argument_problem(argument, folder)) is not None:
            raise InputError(f"{unit.source_name}: nvcc's command line: {one_line(argument)}: {problem}")


def unit_include_dirs(unit: Unit) -> list[str]:
    """The unit's own include folders, for -I (nvcc adds the CUDA headers and g++ its own)."""
    return [*([str(unit.folder)] if unit.folder is not None else []), *unit.include_dirs]


def _source_path(unit: Unit, scratch: Path) -> Path:
    """The .cu file itself (its quoted includes start from its folder), or inline source written into
    a folder of its own in the scratch folder; where the unit names template instances, a unit beside
    that includes the source and instantiates them (instantiation_unit)."""
    inline = scratch / "inline"
    if unit.folder is not None:
        source = unit.folder / Path(unit.source_name).name
    else:
        inline.mkdir()
        source = inline / "source.cu"
        source.write_bytes(unit.source_bytes)
    if not unit.instances:
        return source
    inline.mkdir(exist_ok=True)
    path = inline / _ENTRIES_UNIT
    path.write_text(instantiation_unit(source, unit.instances))
    return path


# The unit that instantiates the template entries, as nvcc's messages name it.
_ENTRIES_UNIT = "entries.cu"


def instantiation_unit(source: Path, instances: Iterable[str]) -> str:
    """A unit that compiles the source and the template instances named (kernel<32>, kernel<float, 4>):
    taking each one's address in a host-side static makes nvcc instantiate it, its device code too,
    without its parameter list being written out. The entries were checked as the file was read
    (one line, no control character)."""
    lines = [f'#include "{source}"']
    lines += [
        f"static const void* const ncuverify_instance_{n} __attribute__((used)) = (const void*)&{entry};"
        for n, entry in enumerate(instances)
    ]
    return "\n".join(lines) + "\n"


def _readable(roots: Roots, host: HostToolchain) -> list[Path]:
    tools = (host.nvcc.parent, host.toolkit_root, host.host_compiler.parent)
    runtime = tuple(Path(folder) for folder in _RUNTIME_FOLDERS)
    return list(
        dict.fromkeys([roots.project, *roots.allowed, *roots.toolkit, *host.include_dirs, *tools, *runtime])
    )


def _run_worker(unit: Unit, scratch: Path, timeout_s: float) -> Finished:
    command = [sys.executable, "-P", str(WORKER_SCRIPT), str(scratch / "request.json")]
    try:
        finished = run_bounded(command, timeout_s, env=worker_environment(), cwd=scratch / "cwd")
    except TimedOut:
        raise InputError(
            f"{unit.source_name}: did not compile with nvcc within {timeout_s:g} s; stopped"
        ) from None
    if finished.returncode < 0:
        raise InputError(
            f"{unit.source_name}: nvcc ended on signal {-finished.returncode} while compiling it"
        )
    return finished


def _split_answer(finished: Finished) -> tuple[bool, bool, str]:
    """Whether the worker could confine nvcc and close the network to it (its first line), and nvcc's
    output."""
    first, _, rest = finished.stdout.partition("\n")
    try:
        state = json.loads(first)
        confined, network_closed = bool(state["confined"]), bool(state["network_closed"])
    except (ValueError, KeyError, TypeError):
        last = (finished.stderr.strip().splitlines() or [""])[-1]
        raise RuntimeError(f"the compile worker did not start nvcc: {last}") from None
    return confined, network_closed, (rest + finished.stderr).strip()


def _named_as_shown(log: str, path: str, name: str) -> str:
    return re.sub(re.escape(path) + r'(?=[(":])', lambda _: name, log)


# --- entry points ------------------------------------------------------------------------------------------


def entry_symbols(
    source_name: str, entries: Iterable[str], symbols: set[str], timeout_s: float
) -> dict[str, str]:
    """Each entry as written (transposeNaive, ns::f, stride<float>, or a symbol) -> the one kernel
    symbol it names; InputError listing the file's kernels, demangled, for a name that matches none or
    several (overloads)."""
    demangled = demangle(sorted(symbols), timeout_s) if symbols else {}
    names = {symbol: _spaceless(function_name(demangled.get(symbol, symbol))) for symbol in symbols}
    found: dict[str, str] = {}
    for entry in entries:
        if entry in symbols:
            found[entry] = entry
            continue
        matches = sorted(symbol for symbol, name in names.items() if name == _spaceless(entry))
        if len(matches) != 1:
            defined = ", ".join(sorted(demangled.get(s, s) for s in symbols)) or "none"
            why = "no kernel entry point" if not matches else "more than one kernel (overloads) for"
            raise InputError(f"{source_name}: {why} {entry!r} (it defines: {defined})")
        found[entry] = matches[0]
    return found


# An integer literal's suffix, which the demangler writes for an unsigned or long template argument
# (`stride<32u>` for `template <const uint S>`) and a kernel's name as written leaves out.
_INTEGER_SUFFIX = re.compile(r"(?<![\w.])(\d+)(?:[uU](?:ll|LL|l|L)?|(?:ll|LL|l|L)[uU]?)(?!\w)")


def _spaceless(name: str) -> str:
    """A kernel's name as compared: without spaces or integer suffixes (stride<32u> is stride<32>)."""
    return _INTEGER_SUFFIX.sub(r"\1", re.sub(r"\s+", "", name))


# --- the hint on NVRTC's failures ----------------------------------------------------------------------------

_HOST_HEADER = re.compile(
    r'cannot open source file "(cstdio|stdio\.h|cstdlib|stdlib\.h|cassert|assert\.h|cuda_runtime\.h|'
    r"cuda_runtime_api\.h|iostream|vector|string|cstring|string\.h|algorithm|chrono|memory|cmath|math\.h)\""
)
_MAIN = re.compile(rb"\bint\s+main\s*\(")
HOST_CODE_HINT = (
    "hint: this file holds host code (host headers or main()), which NVRTC cannot compile; "
    "`compiler: nvcc` compiles such a file as it is"
)


def host_code_hint(log: str, source: bytes) -> str | None:
    """The hint for a failed NVRTC compile of a file with host code in it; None for other failures."""
    if _HOST_HEADER.search(log) or _MAIN.search(source):
        return HOST_CODE_HINT
    return None
