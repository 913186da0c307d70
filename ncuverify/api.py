"""The Python API: `ncuverify.check(path)` runs the pipeline and returns the verdicts and measurements
as pandas DataFrames, for notebooks and scripts."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ncuverify import options, pipeline
from ncuverify.errors import ExitCode
from ncuverify.profile import NcuOptions
from ncuverify.results import FileResult, exit_code
from ncuverify.spec import Citation, expand_paths


@dataclass(frozen=True)
class Results:
    """One run: every file's result, and the same as tables."""

    files: list[FileResult]

    @property
    def exit_code(self) -> ExitCode:
        return exit_code(self.files)

    @property
    def claims(self) -> pd.DataFrame:
        """One row per claim: file, id, case, metric, expected, measured, verdict, reason, and its source."""
        from ncuverify.judge.claims import describe

        rows = [
            {
                "file": result.key,
                "id": r.claim.id,
                "case": r.claim.case,
                "metric": r.claim.metric,
                "expected": describe(r.claim.expect),
                "measured": r.measured,
                "verdict": r.verdict.value,
                "reason": r.reason,
                "control": r.claim.control,
                "control_measured": r.control_measured,
                **_cited(r.claim.cite),
                "why": r.claim.why,
            }
            for result in self.files
            for r in result.claims
        ]
        return pd.DataFrame(rows, columns=_CLAIM_COLUMNS)

    @property
    def measurements(self) -> pd.DataFrame:
        """Every measured value: file, case, kernel, metric, value, unit (static facts included)."""
        frames = [
            result.measurements.frame.assign(file=result.key)
            for result in self.files
            if result.measurements is not None
        ]
        if not frames:
            return pd.DataFrame(columns=["file", "case", "kernel", "metric", "value", "unit"])
        return pd.concat(frames, ignore_index=True)[["file", "case", "kernel", "metric", "value", "unit"]]

    def __repr__(self) -> str:
        counts = self.claims["verdict"].value_counts().to_dict()
        return f"Results({len(self.files)} files, {counts}, exit code {int(self.exit_code)})"


def _cited(cite: Citation | None) -> dict[str, object]:
    """The document columns of a claim's row: None where it cites no document."""
    return {
        "document": cite.document if cite else None,
        "section": cite.section if cite else None,
        "figure": cite.figure if cite else None,
        "document_value": cite.value if cite else None,
        "document_holds": cite.holds if cite else None,
    }


_CLAIM_COLUMNS = [
    "file",
    "id",
    "case",
    "metric",
    "expected",
    "measured",
    "verdict",
    "reason",
    "control",
    "control_measured",
    "document",
    "section",
    "figure",
    "document_value",
    "document_holds",
    "why",
]


def check(
    paths: str | Path | Iterable[str | Path],
    *,
    arch: str | None = None,
    from_profile: str | Path | None = None,
    static_only: bool = False,
    ncu: str = "ncu",
    clock_control: str = "none",
    cache: bool = True,
    gpus: Iterable[int] | None = None,
    allow_include: Iterable[str | Path] = (),
    compile_timeout: float = 120.0,
    allow_programs: bool = False,
) -> Results:
    """Check expectation files (or folders of them) as `ncuverify check` does, and return the results.
    allow_include names folders outside the project that kernels may include from; compile_timeout
    stops compiling one kernel source after that many seconds; allow_programs runs the commands of
    program cases (as --allow-programs does).

    InputError for a path that does not exist or a folder without expectation files (or for an
    include folder that is not one); a file that is wrong, or on which ncuverify itself fails, has its
    `input_error` or `internal_error` set instead, and the other files are still checked."""
    given = [paths] if isinstance(paths, str | Path) else list(paths)
    files = expand_paths(map(Path, given))
    run = options.for_run(
        arch=arch,
        ncu=NcuOptions(executable=ncu, clock_control=clock_control),
        from_profile=Path(from_profile) if from_profile is not None else None,
        static_only=static_only,
        cache=cache,
        build=options.build_limits(
            map(Path, allow_include), compile_timeout, "allow_include", "compile_timeout"
        ),
        gpus=tuple(gpus) if gpus is not None else None,
        allow_programs=allow_programs,
    )
    return Results(pipeline.check_files(files, run))
