"""A shard's claims against the expectation files they were read from. A shard carries a copy of each
claim it judged (metric, expectation, control, xfail, architectures): judged again from the shard's
figures, an edited copy would pass. Where the run's expectation files are here as the shards ran them
(their suite's digest is the run's), each copy must be the file's claim; elsewhere nothing can be
compared, and the merge says so."""

from __future__ import annotations

from collections.abc import Sequence

from ncuverify.errors import InputError
from ncuverify.export.run_identity import suite_digest
from ncuverify.results import FileResult
from ncuverify.spec import Claim, Spec, load
from ncuverify.spec.programs import each_name, launch_of
from ncuverify.text import one_line

NOT_HERE = (
    "merge: the expectation files are not here as the shards ran them (merge where check ran, on the"
    " same files): each claim's metric and expectation are the shards' own copies, not checked"
)


def not_as_written(shard: str, results: Sequence[FileResult], suite: str | None) -> str | None:
    """InputError naming the first claim of results (a shard's) that is not its file's claim; a
    warning, and nothing compared, where the files are not here as the run had them."""
    if suite is None:  # written before shards said their run: merged only with --partial, which says so
        return None
    if not any(result.claims for result in results):
        return None  # no claim to compare
    if suite_digest([result.path for result in results]) != suite:
        return NOT_HERE
    for result in results:
        spec = _spec(result)
        if spec is None:
            continue
        written = {claim.id: claim for claim in spec.content.claims}
        for claim_result in result.claims:
            claim = claim_result.claim
            if claim != _written(claim.id, written):
                raise InputError(
                    one_line(
                        f"{shard}: {result.path}: claim {claim.id} is not the claim of that id in the file"
                        " (its metric, expectation, control, xfail or architectures differ): the shard"
                        " was edited, or run on other expectation files"
                    )
                )
    return None


def _spec(result: FileResult) -> Spec | None:
    """The file as loaded; None where the run could not load it either (it has no claims then)."""
    if result.input_error is not None:
        return None
    try:
        return load(result.path)
    except InputError:
        return None


def _written(claim_id: str, written: dict[str, Claim]) -> Claim | None:
    """The file's claim of that id; for a claim on a case with `combine: each`, judged once per launch
    as claim#2 on case#2, that launch's copy."""
    if claim_id in written:
        return written[claim_id]
    base, number = launch_of(claim_id)
    claim = written.get(base)
    if claim is None or claim.case is None or number is None:
        return None
    return claim.model_copy(update={"id": claim_id, "case": each_name(claim.case, number)})
