"""Real ncu captures (tests/fixtures, remade by scripts/capture-fixtures.sh) as the parser and the
launch-to-case mapping see them."""

from dataclasses import replace

from conftest import FIXTURES

from ncuverify.runner import CaseStatus, read_statuses

SAMPLE_SYMBOLS = {
    "stride1": "_Z11read_strideILi1EEvPKfPf",
    "stride32": "_Z11read_strideILi32EEvPKfPf",
    "scale_2d": "scale",
    "misaligned": "_Z11read_strideILi1EEvPKfPf",
}


def capture(name: str) -> tuple[str, list[CaseStatus]]:
    """A fixture's log and status, its cases named without their file (as `measurements` sees them
    once a run's cases are split back per file, and as these tests name them)."""
    folder = FIXTURES / name
    status = read_statuses((folder / "status.json").read_text())
    plain = [replace(s, case=s.case.split("::")[-1]) for s in status]
    return (folder / "ncu.log").read_text(), plain
