"""Loading an expectation file: read it, validate it, check its references and paths."""

from __future__ import annotations

import itertools
from pathlib import Path

from pydantic import ValidationError

from ncuverify.errors import InputError
from ncuverify.files import CannotRead, NotRegular, TooLarge, read_plain
from ncuverify.names import outside_project
from ncuverify.spec.expansion import expand
from ncuverify.spec.expectation_file import ExpectationFile, Spec
from ncuverify.spec.lines import spec_lines
from ncuverify.spec.points import SweepPoints
from ncuverify.spec.problems import MAX_PROBLEMS, describe, pydantic_problems
from ncuverify.spec.project import path_problems, project_root
from ncuverify.spec.references import reference_problems
from ncuverify.spec.variables import VariableProblem
from ncuverify.spec.yaml_reader import read_yaml

# What reading one file may cost, first: its size (the reader bounds the rest).
MAX_FILE_BYTES = 4 * 1024 * 1024


def read_text(path: Path) -> str:
    """The text of an expectation file: a regular file inside its project, of at most MAX_FILE_BYTES."""
    root = project_root(path.parent)
    if path.exists() and not path.resolve().is_relative_to(root):
        raise InputError(f"{path}: links to {path.resolve()}, {outside_project(root)}")
    try:
        data = read_plain(path, MAX_FILE_BYTES)
    except CannotRead as problem:
        if isinstance(problem.error, FileNotFoundError):
            raise InputError(f"{path}: no such expectation file") from None
        raise InputError(f"{path}: cannot read it ({problem.error.strerror})") from None
    except NotRegular:
        raise InputError(f"{path}: not a regular file") from None
    except TooLarge:
        raise InputError(f"{path}: larger than {MAX_FILE_BYTES} bytes (4 MiB); refusing to read it") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(f"{path}: cannot read it ({error})") from None


def load(path: Path) -> Spec:
    """Read and validate an expectation file; raise InputError naming every problem with its line."""
    text = read_text(path)
    try:
        data, lines = read_yaml(text)
    except InputError as error:
        raise InputError(f"{path}: {error}") from None
    if not isinstance(data, dict):
        raise InputError(f"{path}:1: the file must be a mapping with kernels, cases and claims")
    try:
        expanded = expand(data, lines)  # vars and sweeps: plain cases and claims from here on
    except VariableProblem as problem:
        raise InputError(describe(path, lines, [(problem.where, problem.message)])) from None
    data, lines = expanded.data, expanded.lines
    try:
        content = ExpectationFile.model_validate(data)
    except ValidationError as error:
        raise InputError(describe(path, lines, expanded.written(pydantic_problems(error)))) from None
    found = expanded.written(
        itertools.chain(reference_problems(content), path_problems(content, path.parent))
    )
    problems = list(itertools.islice(found, MAX_PROBLEMS + 1))  # found lazily: no more than are shown
    if problems:
        raise InputError(describe(path, lines, problems))
    claim_ids = [claim.id for claim in content.claims]
    where = spec_lines(
        claim_ids,
        list(content.cases),
        lines,
        expanded.claim_origin,
        expanded.step_origin,
        list(content.kernels),
    )
    # claim_points is () where no claim was swept, else one per claim
    points = zip(claim_ids, expanded.claim_points, strict=False)
    swept = {claim_id: point for claim_id, point in points if point}
    return Spec(path=path, content=content, lines=where, points=SweepPoints(expanded.case_points, swept))
