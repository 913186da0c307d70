"""Whether a replay's figures are today's: every kernel, case and program file that a file's recorded
figures depend on, compared by digest with what the recording's provenance kept. One comparison finds
both what changed since it was recorded and what the recording holds no digest of, and names each alike.

- A kernel, or a case's launch, that changed: the claims on its cases are stale, errors saying why
  (exit 1); the file's other claims are judged.
- What the replayed claims depend on that the recording holds no digest of (the kernel of a case they
  read; a program case's launch or files), and a file of a program case that changed since: nothing
  ties those figures to today's files, and ncuverify knows a program by nothing but its recorded
  figures, so the whole file is refused, one line naming the first (exit 2).

`--allow-stale` judges them all anyway, each named in a warning. A kernel case's launch without a
digest is not refused: recordings made before ncuverify kept those digests hold none, and its kernel's
digest still ties its figures to today's source.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ncuverify.build import KernelBuild
from ncuverify.names import QualifiedCase
from ncuverify.profile.plan import claim_needs
from ncuverify.profile.shown import shown_output
from ncuverify.provenance import Provenance
from ncuverify.spec import Claim, Spec
from ncuverify.spec.digests import case_digests, program_file_digests
from ncuverify.spec.programs import launch_of

CASE_CHANGES = "its launch, arguments or program"
GONE = "its command no longer names it, or it is gone"


@dataclass(frozen=True)
class Untied:
    """Something recorded figures depend on whose digest today is not the one recorded (it changed), or
    that the recording holds no digest of (missing)."""

    what: str  # "kernel scale", "case add", "program file bench/add.py of case add"
    missing: bool = False
    detail: str = ""  # what a change may have been

    def __str__(self) -> str:
        if self.missing:
            return f"the recording holds no digest of {self.what}"
        return f"{self.what} changed since it was recorded" + (f" ({self.detail})" if self.detail else "")


@dataclass(frozen=True)
class Staleness:
    """What a replay makes of a file's untied figures: warnings, stale cases (-> why), or the file's
    one line refusing them."""

    warnings: list[str] = field(default_factory=list)
    stale: dict[str, str] = field(default_factory=dict)
    refused: str | None = None


def staleness(
    spec: Spec,
    key: str,
    builds: Mapping[str, KernelBuild],
    provenance: Provenance,
    claims: Iterable[Claim],
    where: Path,
    allow_stale: bool,
) -> Staleness:
    """The file's figures in the recording whose provenance (at where) is given, against today's
    kernels, cases and program files; claims are those to be judged on the recorded figures."""
    kernels_changed, kernels_missing = compared(
        recorded_of(provenance.kernels, key), {name: build.source_digest for name, build in builds.items()}
    )
    cases_changed, cases_missing = compared(recorded_of(provenance.cases, key), case_digests(spec))
    # each change, with the cases whose figures it makes stale: a case's own after its kernel's
    changes = [
        (
            [name for name, case in spec.content.cases.items() if case.kernel == kernel],
            Untied(f"kernel {kernel}"),
        )
        for kernel in kernels_changed
    ]
    changes += [([name], Untied(f"case {name}", detail=CASE_CHANGES)) for name in cases_changed]
    warnings = [f"{untied}: its figures may be stale" for _, untied in changes]
    stale = {name: str(untied) for names, untied in changes for name in names}
    read = _read_cases(spec, claims)
    refusals = [
        *_untied_kernels(spec, read, kernels_missing),
        *_untied_programs(spec, key, read, provenance, cases_missing),
    ]
    if allow_stale:
        return Staleness(warnings + [f"{untied}: its figures may be stale" for untied in refusals])
    return Staleness(warnings, stale, refused(where, refusals))


def compared(recorded: Mapping[str, str], today: Mapping[str, str]) -> tuple[list[str], list[str]]:
    """The names whose digest today differs from the recorded one, and those with no recorded digest."""
    changed = sorted(name for name, digest in today.items() if recorded.get(name, digest) != digest)
    return changed, sorted(name for name in today if name not in recorded)


def recorded_of(recorded: Mapping[str, str], key: str) -> dict[str, str]:
    """The digests a provenance keeps (`<file>::<name>` -> digest) of the file key's names."""
    found = {}
    for name, digest in recorded.items():
        try:
            identity = QualifiedCase.parse(name)
        except ValueError:  # a recording's name of nothing: no digest of the file's
            continue
        if identity.file == key:
            found[str(identity.in_file(None))] = digest
    return found


def refused(where: Path, refusals: list[Untied]) -> str | None:
    """The file's one line, naming the first of what ties its figures to nothing of today's."""
    if not refusals:
        return None
    more = f" (and {len(refusals) - 1} more)" if len(refusals) > 1 else ""
    return (
        f"{where}: {refusals[0]}{more}: its recorded figures may not be today's; record them again"
        " (check --save-profile), or pass --allow-stale to judge them anyway"
    )


def _read_cases(spec: Spec, claims: Iterable[Claim]) -> set[str]:
    """The cases whose recorded figures the claims read: with a step of a sequence, the steps before
    it; for a launch of a program case (add#2), that case."""
    read = {launch_of(name)[0] for name in claim_needs(list(claims))}
    return {step for name in read for step in spec.content.sequence_steps(name)}


def _untied_kernels(spec: Spec, read: set[str], missing: list[str]) -> list[Untied]:
    """The kernel of each case read that the recording holds no digest of, each once, in file order."""
    found: dict[str, Untied] = {}
    for name, case in spec.content.cases.items():
        if name in read and case.kernel in missing and case.kernel not in found:
            found[case.kernel] = Untied(f"kernel {case.kernel} of case {name}", missing=True)
    return list(found.values())


def _untied_programs(
    spec: Spec, key: str, read: set[str], provenance: Provenance, cases_missing: list[str]
) -> list[Untied]:
    """For each program case read: its launch or its files without a recorded digest, and each of its
    files whose digest differs from the recorded one, or that it no longer runs."""
    untied: list[Untied] = []
    for name, today in program_file_digests(spec, read).items():
        if name in cases_missing:
            untied.append(Untied(f"case {name}", missing=True))
        recorded = provenance.program_files.get(str(QualifiedCase(key, name)))
        if recorded is None:
            untied.append(Untied(f"the files of program case {name}", missing=True))
            continue
        changed, missing = compared(recorded, today)
        gone = sorted(path for path in recorded if path not in today)
        untied += [Untied(_program_file(path, name)) for path in changed]
        untied += [Untied(_program_file(path, name), missing=True) for path in missing]
        untied += [Untied(_program_file(path, name), detail=GONE) for path in gone]
    return untied


def _program_file(path: str, case: str) -> str:
    """A program's file as a message names it: a recorded path is the recording's text, shown safely."""
    return f"program file {shown_output(path, 200)} of case {case}"
