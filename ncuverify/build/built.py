"""What the build makes, as the stages after it see it: a kernel of an expectation file compiled and
ready to launch (KernelBuild), a kernel of a build found by its symbol (BuiltKernel), and the folders
that a file's kernels may read (Roots).

These sit below ncuverify.build.compile, ncuverify.build.inventory and the artifacts' modules, which
each make them: none of those needs another to name what it returns.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import ncuverify.spec
from ncuverify.build.cache import Compiled
from ncuverify.build.demangle import demangle
from ncuverify.build.limits import BuildLimits
from ncuverify.build.reports import entry_functions
from ncuverify.build.resolve import Roots
from ncuverify.build.static import StaticFacts, static_facts
from ncuverify.build.toolkit import cuda_include_dirs
from ncuverify.errors import InputError
from ncuverify.names import function_name

if TYPE_CHECKING:
    from ncuverify.spec import Spec


@dataclass(frozen=True)
class KernelBuild:
    """One compiled kernel, ready to load and launch."""

    name: str  # the kernel's key in the expectation file
    entry: str  # as written: strided_read, copy_stride<32>
    symbol: str  # the mangled name in the cubin, which ncu reports too
    arch: str
    cubin: bytes
    facts: StaticFacts
    log: str
    source_digest: (
        str  # the source, its headers and options it was built from, whatever the compiler's version
    )
    warnings: tuple[
        str, ...
    ] = ()  # what went wrong on the way without stopping the build (a damaged cache entry)
    nvcc: str | None = None  # which nvcc compiled it (`nvcc 13.0.88 (/usr/local/cuda-13.0)`); None: NVRTC


@dataclass(frozen=True)
class BuiltKernel:
    """One kernel of a build: how the cubin names it, how C++ names it, and its facts."""

    symbol: str  # mangled, as the cubin and ncu name it
    signature: str  # demangled (`void stride<float>(float*, int)`); the symbol where it does not demangle
    arch: str
    facts: StaticFacts

    @property
    def name(self) -> str:
        """The function's name as a user writes it: `stride<float>`, `ns::copy`, `scale`."""
        return function_name(self.signature)


def kernels_of(compiled: Compiled, arch: str) -> list[BuiltKernel]:
    """Every kernel of a compiled program, sorted by name."""
    symbols = sorted(entry_functions(compiled.log))
    try:
        facts = static_facts(compiled.log, compiled.resource_usage, compiled.disassembly, symbols)
    except KeyError as error:
        raise InputError(f"cannot read the static facts of the build: {error}") from None
    return built_kernels(facts, arch)


def built_kernels(facts: dict[str, StaticFacts], arch: str) -> list[BuiltKernel]:
    """Kernels named by their demangled signatures, sorted by name."""
    signatures = demangle(facts)
    kernels = [BuiltKernel(symbol, signatures[symbol], arch, facts[symbol]) for symbol in facts]
    return sorted(kernels, key=lambda kernel: (kernel.name, kernel.signature, kernel.symbol))


def roots_of(spec: Spec, limits: BuildLimits) -> Roots:
    """What a file's kernels may read: its project, the folders allowed, the CUDA headers."""
    return roots_at(spec.folder, limits)


def roots_at(folder: Path, limits: BuildLimits) -> Roots:
    """What kernels in folder may read: its project, the folders allowed, the CUDA headers."""
    return Roots(
        project=ncuverify.spec.project_root(folder),
        allowed=tuple(Path(os.path.realpath(allowed)) for allowed in limits.allowed_roots),
        toolkit=tuple(Path(os.path.realpath(headers)) for headers in cuda_include_dirs()),
    )


def build_warnings(builds: dict[str, KernelBuild]) -> list[str]:
    """What the builds warn of (a damaged cache entry rebuilt, ...), each once: kernels compiled
    together share their warnings."""
    return list(dict.fromkeys(w for build in builds.values() for w in getattr(build, "warnings", ())))
