"""Claims over a sweep: a claim whose case is swept becomes one claim per case of the sweep, its id
suffixed as the case is (`sectors__n_1048576`). Its control and the cases its metric names with
`@` are read at the same point: a swept case there stands for its case whose variables agree."""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ncuverify.expression import MAX_LENGTH, ExpressionError
from ncuverify.expression.tokens import tokenize
from ncuverify.spec.points import Point
from ncuverify.spec.programs import launch_of
from ncuverify.spec.sweeps import SweepPoint, point_suffix
from ncuverify.spec.variables import VariableProblem

MAX_CLAIMS = 16384  # the claims of a file once its sweeps are expanded

Sweeps = Mapping[str, tuple[SweepPoint, ...]]


@dataclass(frozen=True)
class ExpandedClaims:
    """The claims once expanded, and for each the index of the claim written and its sweep's point
    (() for a claim written plain)."""

    claims: list[Any]
    origin: tuple[int, ...]
    points: tuple[Point, ...]


def expand_claims(claims: list[Any], sweeps: Sweeps) -> ExpandedClaims:
    expanded: list[Any] = []
    origin: list[int] = []
    points: list[Point] = []
    for index, claim in enumerate(claims):
        made = _claims_of(claim, index, sweeps)
        if len(expanded) + len(made) > MAX_CLAIMS:
            raise VariableProblem(("claims", index), f"the file's sweeps make more than {MAX_CLAIMS} claims")
        expanded += [made_claim for made_claim, _ in made]
        origin += [index] * len(made)
        points += [point for _, point in made]
    return ExpandedClaims(expanded, tuple(origin), tuple(points))


def _claims_of(claim: Any, index: int, sweeps: Sweeps) -> list[tuple[Any, Point]]:
    """The claims made of claim, each with its point."""
    if not isinstance(claim, dict):
        return [(claim, ())]
    case, step = _step_split(claim.get("case"))
    named = _metric_cases(claim.get("metric"))  # read once: the metric is the same at every point
    if isinstance(case, str) and case in sweeps:
        return [
            (_at_point(claim, index, case, point, sweeps, named, step), point.values)
            for point in sweeps[case]
        ]
    control, _ = _step_split(claim.get("control"))
    if isinstance(control, str) and control in sweeps:
        raise VariableProblem(("claims", index, "control"), _name_one(control, sweeps))
    for _, name in named:
        if name in sweeps:
            raise VariableProblem(("claims", index, "metric"), _name_one(name, sweeps))
    return [(claim, ())]


def _name_one(case: str, sweeps: Sweeps) -> str:
    names = [point.case for point in sweeps[case]]
    shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
    return f"case {case} is swept: name one of its cases ({shown}), or give the claim a swept case"


def _at_point(
    claim: dict[str, Any],
    index: int,
    case: str,
    point: SweepPoint,
    sweeps: Sweeps,
    named: list[tuple[int, str]],
    step: str,
) -> Any:
    made = dict(claim)
    if isinstance(claim.get("id"), str):
        made["id"] = claim["id"] + point_suffix(point.values)
    made["case"] = point.case + step
    control = claim.get("control")
    if isinstance(control, str):
        made["control"] = _same_point(control, case, point, sweeps, ("claims", index, "control"))
    metric = claim.get("metric")
    if isinstance(metric, str):
        made["metric"] = _metric_at(metric, named, case, point, sweeps, index)
    return made


def _same_point(name: str, case: str, point: SweepPoint, sweeps: Sweeps, where: tuple[str | int, ...]) -> str:
    """The case that `name` stands for at this point of the claim's sweep (a step of a swept
    sequence, `reduce#2`, the same step of its case there)."""
    name, step = _step_split(name)
    assert isinstance(name, str)
    if name == case:
        return point.case + step
    if name not in sweeps:
        return name + step
    values = dict(point.values)
    matches = [other.case for other in sweeps[name] if other.agrees(values)]
    if len(matches) != 1:
        found = f"{len(matches)} of its cases" if matches else "none of its cases"
        at = ", ".join(f"{k}={v}" for k, v in point.values)
        raise VariableProblem(
            where, f"case {name} is swept: at {case}'s {at}, {found} agree; name one of its cases"
        )
    return matches[0] + step


def _step_split(name: Any) -> tuple[Any, str]:
    """`reduce#2` -> (reduce, #2): a step of a sequence is swept with its case; other names as they are."""
    if not isinstance(name, str):
        return name, ""
    base, number = launch_of(name)
    return (base, name[len(base) :]) if number is not None else (name, "")


def _metric_cases(metric: Any) -> list[tuple[int, str]]:
    """The case names the metric gives after `@`, each with where it starts (0-based)."""
    if not isinstance(metric, str) or len(metric) > MAX_LENGTH:
        return []  # validation refuses a metric too long to parse
    try:
        tokens = tokenize(metric)
    except ExpressionError:
        return []  # validation says what is wrong with it
    return [
        (after.column - 1, after.text)
        for at, after in itertools.pairwise(tokens)
        if at.kind == "op" and at.text == "@" and after.kind == "name"
    ]


def _metric_at(
    metric: str, named: list[tuple[int, str]], case: str, point: SweepPoint, sweeps: Sweeps, index: int
) -> str:
    """The metric with every swept case it names replaced by that case's case at this point; the rest
    of its text as written."""
    text = metric
    for start, name in reversed(named):
        if name == case or name in sweeps:
            chosen = _same_point(name, case, point, sweeps, ("claims", index, "metric"))
            text = text[:start] + chosen + text[start + len(name) :]
    return text
