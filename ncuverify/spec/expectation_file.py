"""The whole expectation file as validated, its regression tolerances, and the file with its path."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import Field, ValidatorFunctionWrapHandler, field_validator, model_validator
from pydantic_core import PydanticCustomError

from ncuverify.spec.allow import AllowEntry
from ncuverify.spec.cases import CaseSpec
from ncuverify.spec.claims import Claim
from ncuverify.spec.fields import ARCH_PATTERN, CaseName, Float, Id, StrictModel, Text
from ncuverify.spec.kernels import Compiler, KernelSpec
from ncuverify.spec.lines import SpecLines
from ncuverify.spec.points import SweepPoints
from ncuverify.spec.programs import ProgramCase, split_programs


class Tolerance(StrictModel):
    """How much worse than the baseline a measure may get: a fraction (rel) or an amount (abs)."""

    rel: Float | None = Field(None, ge=0)
    abs: Float | None = Field(None, ge=0)

    @model_validator(mode="after")
    def _one(self) -> Tolerance:
        if (self.rel is None) == (self.abs is None):
            raise ValueError("give exactly one of rel (a fraction) or abs (an amount)")
        return self

    def allows(self, before: float, after: float) -> bool:
        """Whether going from before to after stays within the tolerance (upwards: larger is worse)."""
        limit = before * (1 + self.rel) if self.rel is not None else before + (self.abs or 0.0)
        return after <= limit


# Stand for a `cases` left out where a claim needs one: where no claim reads `kernels`, as required as
# it always was, with the same message; where some do, with what would make the file whole.
_NO_CASES = object()
_SOME_CASES = object()
_NO_KERNELS = object()  # left out, or every case gone to `programs`: none needed


class ExpectationFile(StrictModel):
    """The whole file, as validated."""

    arch: str | None = Field(None, pattern=ARCH_PATTERN, description="build target when no GPU can be asked")
    compiler: Compiler = Field(
        "nvrtc", description="how kernels compile where they do not say: nvrtc or nvcc"
    )
    toolkit: Text | None = Field(
        None,
        description="the CUDA toolkit (an absolute path, such as /usr/local/cuda-12.4) whose nvcc compiles"
        " `compiler: nvcc` kernels, unless the runner gives --cuda-home; it must be an installed toolkit:"
        " outside the project, owned by root",
    )
    regressions: dict[Text, Tolerance] = Field(
        default_factory=dict, description="per measure, how much worse than a baseline is tolerated"
    )
    kernels: dict[Id, KernelSpec] = Field(min_length=1)
    # The cases that give `program`, split from `cases` as the file is read (see spec/programs.py).
    programs: dict[Id, ProgramCase] = Field(default_factory=dict, alias="cases (programs)")  # PROGRAMS_FIELD
    cases: dict[CaseName, CaseSpec] = Field(
        default_factory=dict,
        min_length=1,
        description="what to launch; a file whose claims all read 'kernels' needs none",
    )
    # The steps of each case written with `steps`, made cases as the file is read (spec/sequences.py).
    sequences: dict[Id, list[CaseName]] = Field(default_factory=dict, alias="cases (sequences)")
    claims: list[Claim] = Field(min_length=1)
    allow: list[AllowEntry] = Field(
        default_factory=list, description="known exceptions: kernels whose failure or growth is accepted"
    )

    @model_validator(mode="before")
    @classmethod
    def _cases_unless_kernel_claims(cls, data: Any) -> Any:
        """`cases` may be left out only where every claim reads `kernels`; elsewhere it is as required as
        it always was, with the same message."""
        if isinstance(data, dict):
            data = split_programs(data, _NO_KERNELS)
        if not isinstance(data, dict) or "cases" in data:
            return data
        claims = data.get("claims")
        if not isinstance(claims, list):
            claims = []
        over_kernels = [isinstance(claim, dict) and "kernels" in claim for claim in claims]
        if over_kernels and all(over_kernels):
            return data
        return {**data, "cases": _SOME_CASES if any(over_kernels) else _NO_CASES}

    @field_validator("kernels", "cases", mode="wrap")
    @classmethod
    def _none_beside_programs(cls, value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        """A file whose every case runs a program needs no kernels, and no other case."""
        return {} if value is _NO_KERNELS else handler(value)

    @field_validator("cases", mode="before")
    @classmethod
    def _no_missing_cases(cls, value: Any) -> Any:
        if value is _NO_CASES:
            raise PydanticCustomError("missing", "Field required")
        if value is _SOME_CASES:
            raise ValueError(
                "give 'cases' (what to launch): only a file whose every claim reads 'kernels' needs none"
            )
        return value

    @model_validator(mode="after")
    def _steps_of_sequences(self) -> ExpectationFile:
        """A case named like a step (`reduce#2`) is one: only `steps` makes such names."""
        for name in self.cases:
            if "#" in name and name not in self.step_of:
                raise ValueError(
                    f"{name!r} is not an id: an id has only letters, digits and _ (CASE#N names a step of a"
                    " case written with steps)"
                )
        return self

    @functools.cached_property
    def step_of(self) -> dict[str, str]:
        """Each step's sequence, by the step's case name."""
        return {step: name for name, steps in self.sequences.items() for step in steps}

    def sequence_of(self, case: str) -> str | None:
        """The sequence a case is a step of; None for a case of its own."""
        return self.step_of.get(case)

    def sequence_steps(self, case: str) -> list[str]:
        """The steps of the sequence that a case is a step of, in order, up to and with it ([case] for a
        case of its own)."""
        sequence = self.sequence_of(case)
        if sequence is None:
            return [case]
        steps = self.sequences[sequence]
        return steps[: steps.index(case) + 1]


@dataclass(frozen=True)
class Spec:
    """A loaded expectation file: its path and its validated content."""

    path: Path
    content: ExpectationFile
    lines: SpecLines = field(default_factory=SpecLines, compare=False)  # where claims and cases are written
    points: SweepPoints = field(default_factory=SweepPoints, compare=False)  # of the cases and claims swept

    @property
    def folder(self) -> Path:
        return self.path.parent

    @property
    def name(self) -> str:
        return self.path.name
