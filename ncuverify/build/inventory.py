"""Every kernel of a build, by its demangled name, with its static facts: the kernels a `match:` entry
of an expectation file selects, which claims over many kernels judge one by one."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ncuverify.build.artifacts_spec import binary_kernels
from ncuverify.build.built import BuiltKernel, kernels_of, roots_of
from ncuverify.build.cache import CompileCache
from ncuverify.build.limits import BuildLimits
from ncuverify.build.programs import compile_unit
from ncuverify.build.units import unit_of
from ncuverify.errors import InputError
from ncuverify.spec.kernels import pattern_selects

if TYPE_CHECKING:
    from ncuverify.spec import Spec


@dataclass(frozen=True)
class KernelSet:
    """The kernels that one `match:` entry selects, in the order of their names."""

    key: str  # the entry's key in the expectation file
    pattern: str
    kernels: tuple[BuiltKernel, ...]
    warnings: tuple[str, ...] = ()


def selected(kernels: Iterable[BuiltKernel], pattern: str) -> tuple[BuiltKernel, ...]:
    """The kernels whose demangled signature or symbol the pattern matches, searched as grep does."""
    return tuple(k for k in kernels if pattern_selects(pattern, k.signature, k.symbol))


def build_sets(
    spec: Spec, arch: str, cache: CompileCache | None = None, limits: BuildLimits | None = None
) -> dict[str, KernelSet]:
    """Every `match:` entry of a file, built, with the kernels it selects; InputError where one cannot be
    built or selects none."""
    limits = limits or BuildLimits()
    roots = roots_of(spec, limits)
    sets: dict[str, KernelSet] = {}
    problems: list[str] = []
    for key, kernel in spec.content.kernels.items():
        if kernel.match is None:
            continue
        try:
            if kernel.binary is not None:
                every = binary_kernels(spec, key, kernel, arch, roots, limits, cache)
                warnings: list[str] = []
                source_name = kernel.binary
            else:
                compiler = kernel.compiler or spec.content.compiler
                unit = unit_of(spec.path, key, kernel, kernel.arch or arch, roots, compiler)
                compiled, warnings = compile_unit(unit, cache, roots, limits)
                every, source_name = kernels_of(compiled, unit.arch), unit.source_name
        except InputError as error:
            problems.append(f"kernels.{key}: {error}")
            continue
        chosen = selected(every, kernel.match)
        if not chosen:
            known = ", ".join(k.name for k in every[:20]) or "none"
            more = f" and {len(every) - 20} more" if len(every) > 20 else ""
            problems.append(
                f"kernels.{key}.match: {kernel.match!r} matches none of the {len(every)} kernels of"
                f" {source_name} (it defines: {known}{more})"
            )
            continue
        sets[key] = KernelSet(key, kernel.match, chosen, tuple(warnings))
    if problems:
        raise InputError("\n".join(f"{spec.path}: {problem}" for problem in problems))
    return sets
