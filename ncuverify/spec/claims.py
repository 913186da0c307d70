"""A claim of an expectation file: its metric, its assertion and the document it checks."""

from __future__ import annotations

import functools
from typing import Annotated, Any, Literal

from pydantic import Field, WithJsonSchema, field_validator, model_validator

from ncuverify import expression
from ncuverify.expression import CaseMetric, MetricRef
from ncuverify.spec.fields import (
    ARCH_PATTERN,
    MAX_TEXT_LENGTH,
    CaseName,
    Finite,
    Float,
    Id,
    StrictModel,
    Text,
    as_text,
)
from ncuverify.spec.kernels import kernel_pattern
from ncuverify.spec.measures import expand

_TEXT_OR_NUMBER = WithJsonSchema({"type": ["string", "number"], "maxLength": MAX_TEXT_LENGTH})


class Citation(StrictModel):
    """Where a claim comes from: the document, its section and the figure it states."""

    document: Text
    section: Annotated[Text, _TEXT_OR_NUMBER]
    figure: Annotated[Text, _TEXT_OR_NUMBER] = Field(description="what the document states, in its words")
    value: Float | None = Field(None, description="the document's number, where it gives one")
    holds: Annotated[
        Literal["yes", "approximately", "no"],
        WithJsonSchema({"anyOf": [{"enum": ["yes", "approximately", "no"]}, {"type": "boolean"}]}),
    ] = Field("yes", description="whether the document's figure holds on the hardware")

    _text = field_validator("section", "figure", mode="before")(as_text)

    @field_validator("holds", mode="before")
    @classmethod
    def _holds_words(cls, value: Any) -> Any:
        """true/false read as yes/no, and so do Yes, YES, No and NO, as YAML 1.1 read them."""
        if isinstance(value, bool):
            return "yes" if value else "no"
        if isinstance(value, str) and value in ("Yes", "YES", "No", "NO"):
            return value.lower()
        return str(value) if isinstance(value, str) else value


class Expectation(StrictModel):
    """The assertion: exactly one of equals, at_least, at_most, between or approx (with rel or abs)."""

    equals: Finite | None = None
    at_least: Finite | None = None
    at_most: Finite | None = None
    between: tuple[Finite, Finite] | None = None
    approx: Finite | None = None
    rel: Finite | None = Field(None, gt=0)
    abs: Finite | None = Field(None, gt=0)

    @model_validator(mode="after")
    def _exactly_one(self) -> Expectation:
        given = [
            k for k in ("equals", "at_least", "at_most", "between", "approx") if getattr(self, k) is not None
        ]
        if len(given) != 1:
            raise ValueError("give exactly one of equals, at_least, at_most, between or approx")
        if self.approx is not None and (self.rel is None) == (self.abs is None):
            raise ValueError("approx needs exactly one tolerance: rel (a fraction) or abs")
        if self.approx is None and (self.rel is not None or self.abs is not None):
            raise ValueError("rel and abs go with approx only")
        if self.between is not None and self.between[0] > self.between[1]:
            raise ValueError(f"between needs low <= high, got {list(self.between)}")
        return self


class ExpectedFailure(StrictModel):
    """A claim known not to hold (on some architectures), and why."""

    reason: Text
    arch: list[Annotated[str, Field(pattern=ARCH_PATTERN)]] | None = Field(
        None, min_length=1, description="where; all if absent"
    )


class Claim(StrictModel):
    """One checkable statement about a case, or about every kernel of a set (`kernels:`)."""

    id: Id
    case: CaseName | None = Field(None, description="the case unqualified metric names are read from")
    kernels: Id | None = Field(
        None,
        description="instead of a case, a kernel entry's key: every kernel it names or selects is judged"
        " on its static facts, one by one",
    )
    match: Text | None = Field(
        None, description="with kernels: only the kernels whose demangled signature this RE2 pattern matches"
    )
    metric: Annotated[str, _TEXT_OR_NUMBER] = Field(
        description="a metric name, a measure, or an expression over them"
    )
    expect: Expectation
    cite: Citation | None = Field(None, description="the document, section and figure the claim checks")
    why: Text | None = Field(
        None, description="what the claim protects, in your own words: a claim of your own needs no document"
    )
    note: Text | None = Field(None, description="why the assertion differs from the document")
    control: CaseName | None = Field(None, description="a case on which the same assertion must fail")
    xfail: ExpectedFailure | None = None
    arch: list[Annotated[str, Field(pattern=ARCH_PATTERN)]] | None = Field(
        None, min_length=1, description="the architectures the claim is about; skipped on others"
    )

    _text = field_validator("metric", mode="before")(as_text)

    @field_validator("metric")
    @classmethod
    def _parses(cls, value: str) -> str:
        expression.parse(value)
        return value

    @model_validator(mode="after")
    def _case_or_kernels(self) -> Claim:
        if self.kernels is not None and self.case is not None:
            raise ValueError("give 'case' (one launch) or 'kernels' (every kernel of a set), not both")
        if self.kernels is not None and self.control is not None:
            raise ValueError("a claim over 'kernels' reads static facts: it takes no 'control'")
        if self.match is not None and self.kernels is None:
            raise ValueError("'match' narrows a claim's 'kernels': give 'kernels' too")
        if self.match is not None:
            kernel_pattern(self.match)  # refused here with RE2's reason
        return self

    @model_validator(mode="after")
    def _note_when_document_is_wrong(self) -> Claim:
        if self.cite is not None and self.cite.holds != "yes" and not self.note:
            raise ValueError(
                f"a claim whose document figure does not hold (cite.holds: {self.cite.holds}) needs a 'note'"
            )
        return self

    def source_line(self) -> str:
        """Where the claim comes from, as a failure shows it: the document cited, else its why ("" for
        a claim with neither)."""
        if self.cite is not None:
            return f"source: {self.cite.document} §{self.cite.section}: {self.cite.figure}"
        return f"why: {self.why}" if self.why else ""

    @functools.cached_property
    def expression(self) -> expression.Expr:
        """The metric as an expression over raw metrics (measures expanded); parsed once, as a claim is
        read at every stage and its metric may be 4096 characters long (the model is frozen)."""
        return expand(expression.parse(self.metric))

    def metric_refs(self) -> list[CaseMetric]:
        """The metrics this claim reads, each with its case made explicit."""
        return [CaseMetric(ref.name, self._case_of(ref)) for ref in expression.references(self.expression)]

    def _case_of(self, ref: MetricRef) -> str:
        # a claim over kernels reads only static facts, of each of its kernels: its set stands for them
        case = ref.case or self.case or self.kernels
        assert case is not None  # validated: a claim without a case names one in every metric
        return case
