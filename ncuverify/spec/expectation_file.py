"""The whole expectation file as validated, its regression tolerances, and the file with its path."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import Field, model_validator

from ncuverify.spec.cases import CaseSpec
from ncuverify.spec.claims import Claim
from ncuverify.spec.fields import ARCH_PATTERN, Float, Id, StrictModel, Text
from ncuverify.spec.kernels import Compiler, KernelSpec


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


class ExpectationFile(StrictModel):
    """The whole file, as validated."""

    arch: str | None = Field(None, pattern=ARCH_PATTERN, description="build target when no GPU can be asked")
    compiler: Compiler = Field(
        "nvrtc", description="how kernels compile where they do not say: nvrtc or nvcc"
    )
    regressions: dict[Text, Tolerance] = Field(
        default_factory=dict, description="per measure, how much worse than a baseline is tolerated"
    )
    kernels: dict[Id, KernelSpec] = Field(min_length=1)
    cases: dict[Id, CaseSpec] = Field(min_length=1)
    claims: list[Claim] = Field(min_length=1)


@dataclass(frozen=True)
class Spec:
    """A loaded expectation file: its path and its validated content."""

    path: Path
    content: ExpectationFile

    @property
    def folder(self) -> Path:
        return self.path.parent

    @property
    def name(self) -> str:
        return self.path.name
