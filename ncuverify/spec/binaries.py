"""Artifacts given on the command line (`check --binary KERNEL=PATH`): a build system names the file it
built for a `binary:` kernel, wherever its build folder is, instead of the path the expectation file
writes. The path given is still checked as a written one is (inside the project or an allowed folder)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path

from ncuverify.errors import InputError
from ncuverify.spec.expectation_file import Spec
from ncuverify.text import one_line

# A kernel key as an expectation file writes one (a YAML mapping key, no '=' in it).
_GIVEN = re.compile(r"([^=\s]+)=(.+)", re.DOTALL)


def parse_binaries(given: Iterable[str], option: str = "--binary") -> dict[str, Path]:
    """KERNEL=PATH pairs, each path made absolute against the current folder; InputError on a pair
    not so written or a kernel named twice."""
    binaries: dict[str, Path] = {}
    for pair in given:
        found = _GIVEN.fullmatch(pair)
        if found is None:
            raise InputError(f"{option}: {one_line(repr(pair))}: write KERNEL=PATH")
        key, path = found.groups()
        if key in binaries:
            raise InputError(f"{option}: kernel {one_line(key)} is given twice")
        binaries[key] = Path(path).absolute()
    return binaries


def with_binaries(spec: Spec, binaries: Mapping[str, Path]) -> Spec:
    """The file with each named kernel's `binary:` replaced by the path given; InputError naming the
    file where a named kernel is not one of its `binary:` kernels (a typo must not judge the old file)."""
    if not binaries:
        return spec
    kernels = dict(spec.content.kernels)
    for key, path in binaries.items():
        kernel = kernels.get(key)
        if kernel is None or kernel.binary is None:
            raise InputError(
                f"{spec.name}: --binary {one_line(key)}: the file has no kernel {one_line(key)} with a 'binary:'"
            )
        kernels[key] = kernel.model_copy(update={"binary": str(path)})
    return replace(spec, content=spec.content.model_copy(update={"kernels": kernels}))
