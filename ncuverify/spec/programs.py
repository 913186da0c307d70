"""A program case: kernels that a program of the project launches (a PyTorch script, a Triton benchmark,
a built executable), picked from its launches by name, NVTX range and launch number."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, model_validator

from ncuverify.names import QualifiedCase, outside_project
from ncuverify.spec.claims import Claim
from ncuverify.spec.fields import Float, Int, StrictModel, Text
from ncuverify.spec.kernels import kernel_pattern
from ncuverify.spec.program_env import env_refusal
from ncuverify.spec.yaml_reader import Location

MAX_COMMAND_WORDS = 256
MAX_ENV_ENTRIES = 64
MAX_TIMEOUT_S = 24 * 3600.0
MAX_LAUNCH_COUNT = 1000
# The model's field for program cases, named so that no file's key is taken for it: a file writes
# program cases among its `cases`.
PROGRAMS_FIELD = "cases (programs)"


def _word(value: str) -> str:
    if "\0" in value:
        raise ValueError("a command's word or an environment value holds no NUL character")
    return value


Word = Annotated[Text, AfterValidator(_word)]


def _env_name(value: str) -> str:
    refusal = env_refusal(value)
    if refusal is not None:
        raise ValueError(refusal)
    return value


EnvName = Annotated[str, AfterValidator(_env_name)]


class ProgramSpec(StrictModel):
    """How to run the program: its command (a list of words, never a shell line), folder and environment."""

    command: list[Word] = Field(
        min_length=1,
        max_length=MAX_COMMAND_WORDS,
        description="the program and its arguments; a first word without / is looked up on the PATH,"
        " one with / is relative to the expectation file",
    )
    cwd: Text | None = Field(
        None, description="where it runs, relative to the expectation file and inside the project"
    )
    env: dict[EnvName, Word] = Field(
        default_factory=dict,
        max_length=MAX_ENV_ENTRIES,
        description="added to a minimal environment (PATH, HOME, LC_ALL=C)",
    )
    timeout_s: Float = Field(600.0, gt=0, le=MAX_TIMEOUT_S, description="the whole run under ncu")


class ProgramCase(StrictModel):
    """A case whose launches a program makes: `program` instead of a kernel, grid and arguments."""

    program: ProgramSpec
    kernel: Text | None = Field(
        None, description="an RE2 regular expression searched in the demangled kernel name"
    )
    kernel_exact: Text | None = Field(None, description="instead of kernel: the demangled name, exactly")
    nvtx_include: list[Text] = Field(default_factory=list, max_length=16, description="ncu --nvtx-include")
    nvtx_exclude: list[Text] = Field(default_factory=list, max_length=16, description="ncu --nvtx-exclude")
    launch_skip: Int = Field(0, ge=0, le=10**9, description="matching launches to pass over first")
    launch_count: Int = Field(1, ge=1, le=MAX_LAUNCH_COUNT, description="matching launches to profile")
    target_processes: Literal["all", "application-only"] = Field(
        "all", description="all: the program's child processes too (ncu's default)"
    )
    combine: Literal["first", "last", "median", "max", "each"] = Field(
        "first", description="how the profiled launches make the case's values; each: case#1, case#2, ..."
    )

    @model_validator(mode="after")
    def _one_kernel(self) -> ProgramCase:
        if (self.kernel is None) == (self.kernel_exact is None):
            raise ValueError("give exactly one of 'kernel' (a regular expression) or 'kernel_exact' (a name)")
        if self.kernel is not None:
            kernel_pattern(self.kernel)  # refused here with RE2's reason
        return self

    def matches(self, name: str) -> bool:
        """Whether a launch ncu reports (by its demangled name) is one this case selects."""
        if self.kernel_exact is not None:
            return name == self.kernel_exact
        return kernel_pattern(self.kernel or "").search(name) is not None


def is_program_case(value: object) -> bool:
    """Whether a case as written in the file is a program case (it gives `program`)."""
    return isinstance(value, dict) and "program" in value


def split_programs(data: dict[Any, Any], none: object) -> dict[Any, Any]:
    """The file's data with its program cases moved from `cases` to PROGRAMS_FIELD. Where every case
    runs a program, `cases` (and `kernels`, if left out) become none: the file needs no other."""
    if PROGRAMS_FIELD in data:
        raise ValueError(f"unknown key {PROGRAMS_FIELD!r}")
    cases = data.get("cases")
    if not isinstance(cases, dict):
        return data
    programs = {name: case for name, case in cases.items() if is_program_case(case)}
    if not programs:
        return data
    built = {name: case for name, case in cases.items() if name not in programs}
    split = {**data, "cases": built or none, PROGRAMS_FIELD: programs}
    if not built and "kernels" not in data:
        split["kernels"] = none
    return split


def each_name(case: str, number: int) -> str:
    """`combine: each`: the launches of case add are the cases add#1, add#2, ... (and a claim's, claim#1)."""
    return str(replace(QualifiedCase.parse(case), launch=number))


def launch_of(name: str) -> tuple[str, int | None]:
    """A case's name split from its launch number where it names one (`add#2`: add, 2; `add`: add, None;
    qualified, `f::add#2`: f::add, 2)."""
    try:
        identity = QualifiedCase.parse(name)
    except ValueError:
        return name, None
    if identity.launch is None:
        return name, None
    return str(identity.without_launch()), identity.launch


def claims_per_launch(claims: list[Claim], programs: dict[str, ProgramCase], cases: set[str]) -> list[Claim]:
    """The claims, each on a case with `combine: each` made one per launch measured: claim#1 on
    case#1, claim#2 on case#2, ... (a case that did not run keeps its one claim, to fail with why)."""
    expanded: list[Claim] = []
    for claim in claims:
        case = programs.get(claim.case or "")
        count = 0
        while case is not None and case.combine == "each" and each_name(str(claim.case), count + 1) in cases:
            count += 1
        if count == 0:
            expanded.append(claim)
        for number in range(1, count + 1):
            update = {"id": each_name(claim.id, number), "case": each_name(str(claim.case), number)}
            expanded.append(claim.model_copy(update=update))
    return expanded


def not_on_a_program(index: int, name: str, case: str) -> tuple[Location, str]:
    """A claim on a program case reads what ncu measures: nothing was built, no buffer is read back."""
    return (
        ("claims", index, "metric"),
        f"{name}: case {case} runs a program, which ncuverify neither builds nor reads buffers of;"
        " its claims read what ncu measures",
    )


def program_path_problems(
    programs: dict[str, ProgramCase], folder: Path, root: Path
) -> Iterable[tuple[Location, str]]:
    """A program runs in a folder of the project, and a program named by a path lies in it (it may be
    built later: whether it is there is asked when it runs)."""
    for name, case in programs.items():
        cwd = (folder / (case.program.cwd or ".")).resolve()
        if not cwd.is_relative_to(root):
            yield (("cases", name, "program", "cwd"), f"{case.program.cwd} lies {outside_project(root)}")
        elif not cwd.is_dir():
            yield (("cases", name, "program", "cwd"), f"no such folder: {case.program.cwd}")
        first = case.program.command[0]
        if "/" in first:
            program = (folder / first).resolve()
            if not program.is_relative_to(root):
                yield (("cases", name, "program", "command", 0), f"{first} lies {outside_project(root)}")


def named_files(program: ProgramSpec, folder: Path, root: Path) -> list[Path]:
    """The files of the project (root) that the program's command words name, resolved, each once: the
    first word where it holds a / (relative to the expectation file's folder, as it is run; a first
    word without one is looked up on the PATH, outside the project), and every later word that is the
    path of a regular file from the folder the program runs in (an interpreter's script, a data file).
    Nothing beyond whole words is read for paths: not `--input=x.bin`, not `-m module`, not what the
    files themselves load, not the environment."""
    first, *rest = program.command
    cwd = folder / (program.cwd or ".")
    candidates = ([folder / first] if "/" in first else []) + [cwd / word for word in rest if word]
    found: list[Path] = []
    for candidate in candidates:
        try:
            resolved = candidate.resolve()
            is_file = resolved.is_file()
        except (OSError, RuntimeError):  # a name too long for the OS, a loop of links
            continue
        if is_file and resolved.is_relative_to(root) and resolved not in found:
            found.append(resolved)
    return found
