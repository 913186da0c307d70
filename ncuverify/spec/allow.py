"""The allow-list of an expectation file: known exceptions, each with its reason. An entry names kernels
(`kernel:` a name as ncuverify shows it, spacing aside; or `match:` an RE2 pattern searched in the
demangled signature or the symbol), optionally one claim and one metric; a failing kernel of a claim
over kernels, or a kernel's growth against a baseline, that an entry covers does not fail the run."""

from __future__ import annotations

from pydantic import Field, model_validator

from ncuverify.names import same_name
from ncuverify.spec.claims import Claim
from ncuverify.spec.fields import Id, StrictModel, Text
from ncuverify.spec.kernels import kernel_pattern, pattern_selects


class AllowEntry(StrictModel):
    """One known exception: which kernels, which claim and metric (all where absent), and why."""

    kernel: Text | None = Field(None, description="a kernel's name as ncuverify shows it: axpy_gemm<64>")
    match: Text | None = Field(
        None, description="instead of kernel, an RE2 pattern searched in the demangled signature or symbol"
    )
    claim: Id | None = Field(None, description="only this claim's failures; absent: every claim and growth")
    metric: Text | None = Field(
        None, description="only this static fact (a growth) or a claim reading it; absent: every one"
    )
    reason: Text = Field(min_length=1, description="why the exception is accepted")

    @model_validator(mode="after")
    def _one_selector(self) -> AllowEntry:
        if (self.kernel is None) == (self.match is None):
            raise ValueError("give exactly one of 'kernel' (a name) or 'match' (a pattern)")
        if self.match is not None:
            kernel_pattern(self.match)  # refused here with RE2's reason
        return self

    def covers_kernel(self, name: str, signature: str, symbol: str) -> bool:
        """Whether the entry names this kernel."""
        if self.kernel is not None:
            return same_name(self.kernel, name)
        assert self.match is not None  # validated: one of kernel or match
        return pattern_selects(self.match, signature, symbol)

    def covers_claim(self, claim: Claim) -> bool:
        """Whether the entry is about this claim (its id and metric, where it gives them)."""
        if self.claim is not None and self.claim != claim.id:
            return False
        if self.metric is None:
            return True
        return self.metric == claim.metric or self.metric in {ref.name for ref in claim.metric_refs()}

    def covers_growth(self, metric: str) -> bool:
        """Whether the entry accepts a kernel's growth of this static fact against a baseline."""
        return self.claim is None and self.metric in (None, metric)

    def describe(self) -> str:
        """The entry as its file writes it, briefly: `kernel axpy_gemm<64>` or `match _gemm`."""
        what = f"kernel {self.kernel}" if self.kernel is not None else f"match {self.match}"
        return what + "".join(
            f", {key} {value}" for key, value in (("claim", self.claim), ("metric", self.metric)) if value
        )
