"""Where a run's figures come from: the machine, the tools, the settings, the kernels' sources, what
each case launched with and the files each program case ran."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from ncuverify.spec import ARCH_PATTERN
from ncuverify.text import one_line

_MAX_FIELD = 64 * 1024


@dataclass(frozen=True)
class Provenance:
    """Where measurements come from: the machine, the tools, the settings and the kernels' sources."""

    recorded_at: str
    gpu: str
    arch: str
    nvidia_driver: str | None
    cuda_driver: str
    ncu_version: str | None
    nvrtc_version: str
    ncuverify_version: str
    clock_control: str
    cache_control: str
    ncu_command: list[str]
    kernels: dict[str, str] = field(default_factory=dict)  # <file>::<kernel> -> digest of source and options
    # <file>::<case> -> digest of its geometry, arguments and fills, or its program (spec.digests);
    # absent from recordings made before ncuverify kept them
    cases: dict[str, str] = field(default_factory=dict)
    # <file>::<case> of a program case -> {path in the project: sha256} of each file its command names
    # (spec.digests.program_file_digests); absent from recordings made before ncuverify kept them
    program_files: dict[str, dict[str, str]] = field(default_factory=dict)
    # <file>::<kernel> of a kernel nvcc compiled -> which nvcc: its release and its toolkit's root
    # (`nvcc 13.0.88 at /usr/local/cuda-13.0`; HostToolchain.described); absent from recordings made
    # before ncuverify kept it, and where NVRTC compiled every kernel
    nvcc: dict[str, str] = field(default_factory=dict)
    # <file>::<case> -> its measurement key (profile.measurement_keys): what check --reuse compares;
    # absent from recordings made before ncuverify kept them, which then reuse nothing
    measurement_keys: dict[str, str] = field(default_factory=dict)

    def describe(self) -> str:
        compiled = f"; {toolkits}" if (toolkits := self.compiled_with()) else ""
        return one_line(
            f"{self.gpu} ({self.arch}, {self._driver()}, ncu {self.ncu_version or '?'}{compiled})"
            f" on {self.recorded_at}"
        )

    def machine(self) -> str:
        """The GPU and the tools alone: `NVIDIA H200 (sm_90, driver 580.159.04, ncu 2025.3.1.0)`."""
        return one_line(f"{self.gpu} ({self.arch}, {self._driver()}, ncu {self.ncu_version or '?'})")

    def _driver(self) -> str:
        return f"driver {self.nvidia_driver}" if self.nvidia_driver else f"CUDA driver {self.cuda_driver}"

    def compiled_with(self) -> str | None:
        """Which nvcc compiled the kernels nvcc built, each once (`nvcc 13.0.88 at /usr/local/cuda`);
        None where NVRTC compiled every kernel, or the provenance is older than this record."""
        return one_line(", ".join(sorted(set(self.nvcc.values())))) or None

    @classmethod
    def from_json(cls, data: object) -> Provenance:
        """The provenance in data; ValueError naming the field where it is not one ncuverify writes."""
        if not isinstance(data, dict):
            raise ValueError("not an object")
        names = {f.name for f in fields(cls)}
        unknown = sorted(str(key) for key in data if key not in names)
        if unknown:
            raise ValueError(f"{unknown[0][:80]!r}: not a field of a provenance")
        optional = {"nvidia_driver", "ncu_version"}
        values: dict[str, Any] = {}
        for name in sorted(
            names - {"ncu_command", "kernels", "cases", "program_files", "nvcc", "measurement_keys"}
        ):
            values[name] = _field_string(data, name, optional=name in optional)
        if not re.fullmatch(ARCH_PATTERN, values["arch"], re.ASCII):
            raise ValueError("arch: not a build target such as sm_90")
        command = data.get("ncu_command")
        if not (isinstance(command, list) and all(isinstance(word, str) for word in command)):
            raise ValueError("ncu_command: not a list of strings")
        digests = {name: data.get(name, {}) for name in ("kernels", "cases", "nvcc", "measurement_keys")}
        for name, found in digests.items():
            if not _is_digests(found):
                raise ValueError(f"{name}: not an object of digests (strings)")
        files = data.get("program_files", {})
        if not (isinstance(files, dict) and all(_is_digests(found) for found in files.values())):
            raise ValueError("program_files: not an object of objects of digests (strings)")
        return cls(**values, ncu_command=command, **digests, program_files=files)


def _is_digests(found: object) -> bool:
    return isinstance(found, dict) and all(isinstance(value, str) for value in found.values())


def _field_string(data: Mapping[str, object], name: str, optional: bool) -> str | None:
    if name not in data and not optional:
        raise ValueError(f"{name}: missing")
    value = data.get(name)
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise ValueError(f"{name}: not a string" + (" or null" if optional else ""))
    if len(value) > _MAX_FIELD:
        raise ValueError(f"{name}: longer than {_MAX_FIELD} characters")
    return value


@dataclass(frozen=True)
class ReusedFrom:
    """Where a file's reused figures come from (check --reuse): the recording's folder, when and on
    which GPU it was made, the file's cases whose figures it gave, and how many cases the file's claims
    read in all."""

    folder: str
    recorded_at: str
    gpu: str
    cases: tuple[str, ...]
    of: int

    def describe(self) -> str:
        return one_line(
            f"reused {len(self.cases)} of {self.of} cases from {self.folder} (recorded {self.recorded_at}"
            f" on {self.gpu})"
        )
