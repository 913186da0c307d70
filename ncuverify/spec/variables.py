"""A case's variables: its `vars` computed, and its geometry, counts and scalars written over them made
plain numbers, on the file's raw mapping (before validation, so that every later stage sees numbers)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ncuverify import expression
from ncuverify.spec.fields import MAX_ID_LENGTH, SCALAR_TYPES
from ncuverify.spec.integers import FUNCTIONS, MAX_VALUE, IntegerExpressionError, evaluate
from ncuverify.spec.yaml_reader import Location

MAX_VARIABLES = 32  # per case, sweep variables included
_NAME = re.compile(expression.ID, re.ASCII)

# The fields of a case and of its arguments that may be written as expressions.
CASE_FIELDS = ("grid", "block", "shared_bytes", "repeat")
BUFFER_FIELDS = ("count", "offset")


class VariableProblem(ValueError):
    """A case whose variables or expressions cannot be computed: where, in the file, and why."""

    def __init__(self, where: Location, message: str) -> None:
        super().__init__(message)
        self.where = where
        self.message = message


def uses_variables(case: Any) -> bool:
    return isinstance(case, dict) and ("vars" in case or "sweep" in case)


def variable_name(name: Any, where: Location) -> str:
    """A variable is named like an id (it becomes part of case names), and not like a call."""
    if not isinstance(name, str) or len(name) > MAX_ID_LENGTH or not _NAME.fullmatch(name):
        raise VariableProblem(
            where, f"{name!r} is no variable name: letters, digits and _, not first a digit"
        )
    if name in FUNCTIONS:
        raise VariableProblem(
            where, f"{name!r} is a function ({', '.join(FUNCTIONS)}); name the variable otherwise"
        )
    return name


def number(value: Any, names: Mapping[str, int], where: Location) -> int:
    """A whole number as written, or the value of an expression over names."""
    if isinstance(value, int) and not isinstance(value, bool):
        if abs(value) > MAX_VALUE:
            raise VariableProblem(where, f"{value} is larger than 2**63")
        return int(value)
    if not isinstance(value, str):
        raise VariableProblem(where, f"{value!r} is neither a whole number nor an expression")
    try:
        return evaluate(value, names)
    except IntegerExpressionError as error:
        raise VariableProblem(where, str(error)) from None


def case_variables(case: dict[str, Any], where: Location, given: Mapping[str, int]) -> dict[str, int]:
    """The case's variables: those given (a sweep's point), then its `vars` in order, each of which may
    use those before it."""
    written = case.get("vars", {})
    if not isinstance(written, dict):
        raise VariableProblem((*where, "vars"), "vars is a mapping of names to numbers or expressions")
    if len(written) + len(given) > MAX_VARIABLES:
        raise VariableProblem((*where, "vars"), f"at most {MAX_VARIABLES} variables a case")
    names = dict(given)
    for name, value in written.items():
        at = (*where, "vars", name)
        variable_name(name, at)
        if name in given:
            raise VariableProblem(at, f"{name} is swept; it cannot be in vars too")
        names[name] = number(value, names, at)
    return names


def substituted(case: dict[str, Any], where: Location, names: Mapping[str, int]) -> dict[str, Any]:
    """The case with its expressions replaced by their values, its `vars` by theirs and no `sweep`."""
    result = _launch_substituted(case, where, names)
    result = {key: value for key, value in result.items() if key != "sweep"}
    result["vars"] = dict(names)
    steps = case.get("steps")
    if isinstance(steps, list):  # a launch sequence: each step's numbers over the case's variables
        result["steps"] = [
            _launch_substituted(step, (*where, "steps", index), names) if isinstance(step, dict) else step
            for index, step in enumerate(steps)
        ]
    return result


def _launch_substituted(launch: dict[str, Any], where: Location, names: Mapping[str, int]) -> dict[str, Any]:
    """One launch (a case, or a step of one) with its geometry and arguments computed."""
    result = dict(launch)
    for field in CASE_FIELDS:
        if field in launch:
            result[field] = _field(launch[field], names, (*where, field))
    args = launch.get("args")
    if isinstance(args, list):
        result["args"] = [_argument(arg, names, (*where, "args", index)) for index, arg in enumerate(args)]
    return result


def _field(value: Any, names: Mapping[str, int], where: Location) -> Any:
    """Texts become numbers; anything else is left for validation to judge, as written."""
    if isinstance(value, list):
        return [_field(item, names, (*where, index)) for index, item in enumerate(value)]
    return number(value, names, where) if isinstance(value, str) else value


def _argument(arg: Any, names: Mapping[str, int], where: Location) -> Any:
    if not isinstance(arg, dict):
        return arg
    fields = [*BUFFER_FIELDS] if "buffer" in arg else [key for key in arg if key in SCALAR_TYPES]
    return {
        key: number(value, names, (*where, key)) if key in fields and isinstance(value, str) else value
        for key, value in arg.items()
    }
