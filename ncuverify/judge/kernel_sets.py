"""The kernels that claims over kernels read and that a baseline ratchets: each `match:` entry's kernels,
and each entry a claim names with `kernels:` as a set of one, in the measurement table as the cases
`KEY[kernel]` (a key is an id, so no case of the file is named so)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from ncuverify.build import KernelBuild
from ncuverify.build import measurement_rows as static_rows
from ncuverify.build.built import BuiltKernel
from ncuverify.build.inventory import KernelSet
from ncuverify.measurements import Measurements
from ncuverify.names import QualifiedCase
from ncuverify.spec import Spec


def set_case(key: str, label: str) -> str:
    """The measurement table's case for one kernel of a set: `gemms[axpy_gemm<64>]`."""
    return str(QualifiedCase(None, key, set_kernel=label))


def of_set_case(case: str) -> tuple[str, str] | None:
    """`gemms[axpy_gemm<64>]` -> ("gemms", "axpy_gemm<64>"); None for a case of the file's own."""
    try:
        identity = QualifiedCase.parse(case)
    except ValueError:
        return None
    return (identity.case, identity.set_kernel) if identity.set_kernel is not None else None


def labels(kernels: Iterable[BuiltKernel]) -> dict[str, BuiltKernel]:
    """Each kernel under its name, or under its signature where two of them share a name (overloads)."""
    kernels = list(kernels)
    names = Counter(kernel.name for kernel in kernels)
    return {kernel.name if names[kernel.name] == 1 else kernel.signature: kernel for kernel in kernels}


def members(
    spec: Spec, builds: dict[str, KernelBuild], sets: dict[str, KernelSet]
) -> dict[str, dict[str, BuiltKernel]]:
    """Every set's kernels by label, and every entry that a claim reads with `kernels:` as a set of one."""
    found = {key: labels(kernel_set.kernels) for key, kernel_set in sets.items()}
    for claim in spec.content.claims:
        build = builds.get(claim.kernels or "")
        if build is not None and build.name not in found:
            found[build.name] = {build.entry: BuiltKernel(build.symbol, build.entry, build.arch, build.facts)}
    return found


def set_measurements(by_key: dict[str, dict[str, BuiltKernel]], patterns: Iterable[str]) -> Measurements:
    """The static facts of every kernel of every set, as rows of the cases `KEY[kernel]`."""
    cases = {
        set_case(key, label): set_case(key, label) for key, kernels in by_key.items() for label in kernels
    }
    facts = {set_case(key, label): k.facts for key, kernels in by_key.items() for label, k in kernels.items()}
    symbols = {
        set_case(key, label): k.symbol for key, kernels in by_key.items() for label, k in kernels.items()
    }
    rows = static_rows(cases, facts, patterns)
    return Measurements(
        tuple((case, symbols[case], metric, value, unit) for case, _, metric, value, unit in rows)
    )
