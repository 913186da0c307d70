"""The index of the documents' claims (tests/data/documented_claims.tsv) against the expectation files.

Each row of the index is one claim of one of the four encoded documents, with the expectation claims that
check it, `N/T: <reason>` where compiling and profiling cannot check it, or `MISSING` where nothing checks
it yet. These tests keep the index and the expectation files from drifting apart. No GPU needed.
"""

from functools import cache

import pytest
from conftest import DATA, EXPECTATIONS

from ncuverify.spec import load

INDEX = DATA / "documented_claims.tsv"
HEADER = ["id", "document", "covered_by"]
DOCUMENTS = {
    "000_41d4bba01cd90206.txt",
    "002_b48240abed923777.txt",
    "003_a7bdf3f6b43d9421.txt",
    "004_e4370fce40a887a3.txt",
}
NOT_TESTABLE = "N/T:"
MISSING = "MISSING"


@cache
def index_rows() -> tuple[tuple[int, dict[str, str]], ...]:
    """The index's rows, each with its line number."""
    lines = INDEX.read_text(encoding="utf-8").splitlines()
    assert lines and lines[0].split("\t") == HEADER, f"{INDEX.name}: the header must be {HEADER}"
    rows = []
    for number, line in enumerate(lines[1:], start=2):
        fields = line.split("\t")
        assert len(fields) == len(HEADER), f"{INDEX.name}:{number}: {len(fields)} columns, not 3: {line!r}"
        rows.append((number, dict(zip(HEADER, fields, strict=True))))
    return tuple(rows)


def covering_ids(row: dict[str, str]) -> list[str]:
    """The expectation claims a row names; none for N/T and MISSING rows."""
    covered_by = row["covered_by"]
    if covered_by.startswith(NOT_TESTABLE) or covered_by == MISSING:
        return []
    return covered_by.split()


@cache
def expectation_claims() -> dict[str, tuple[str, str]]:
    """Every claim id of the expectation files: (file name, cited document)."""
    claims = {}
    for path in sorted(EXPECTATIONS.glob("*.yaml")):
        for claim in load(path).content.claims:
            claims[claim.id] = (path.name, claim.cite.document)
    return claims


def test_index_rows_are_well_formed():
    ids = [row["id"] for _, row in index_rows()]
    assert ids, f"{INDEX.name} has no rows"
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    assert not duplicates, f"ids listed more than once: {duplicates}"
    malformed = [
        f"{INDEX.name}:{number} {row['id']}: {row['covered_by']!r}"
        for number, row in index_rows()
        if not row["id"]
        or not row["covered_by"].strip()
        or (row["covered_by"].startswith(NOT_TESTABLE) and not row["covered_by"][len(NOT_TESTABLE) :].strip())
    ]
    assert not malformed, "rows without an id, or with an empty covered_by or N/T reason:\n" + "\n".join(
        malformed
    )


def test_every_covering_id_is_an_expectation_claim():
    known = expectation_claims()
    unknown = [
        f"{INDEX.name}:{number} {row['id']}: {claim}"
        for number, row in index_rows()
        for claim in covering_ids(row)
        if claim not in known
    ]
    assert not unknown, "covered_by names claims that no expectation file has:\n" + "\n".join(unknown)


def test_no_claim_is_missing():
    missing = [
        f"{INDEX.name}:{number} {row['id']}" for number, row in index_rows() if row["covered_by"] == MISSING
    ]
    assert not missing, "checkable claims that no expectation file checks yet:\n" + "\n".join(missing)


def test_every_row_names_an_encoded_document():
    others = [
        f"{INDEX.name}:{number} {row['id']}: {row['document']!r}"
        for number, row in index_rows()
        if row["document"] not in DOCUMENTS
    ]
    assert not others, f"documents other than {sorted(DOCUMENTS)}:\n" + "\n".join(others)


@pytest.mark.parametrize("document", sorted(DOCUMENTS))
def test_every_expectation_claim_is_indexed(document):
    indexed = {claim for _, row in index_rows() for claim in covering_ids(row)}
    unindexed = [
        f"{name}: {claim}"
        for claim, (name, cited) in sorted(expectation_claims().items())
        if cited == document and claim not in indexed
    ]
    assert not unindexed, f"claims citing {document} that no row of {INDEX.name} lists:\n" + "\n".join(
        unindexed
    )
