"""Arguments as the profile stage plans them for the runner, from the expectation file's form
({buffer: float32, count: 8}): the spec's model gives each field its default."""

from collections.abc import Iterable
from pathlib import Path

from pydantic import TypeAdapter

from ncuverify.profile.plan import planned_argument
from ncuverify.runner.plan import PlannedArgument, PlannedBuffer
from ncuverify.spec.arguments import Argument

_ARGUMENT: TypeAdapter[Argument] = TypeAdapter(Argument)


def planned_arg(given: dict, folder: Path = Path()) -> PlannedArgument:
    return planned_argument(_ARGUMENT.validate_python(given), folder)


def planned_args(given: Iterable[dict]) -> list[PlannedArgument]:
    return [planned_arg(arg) for arg in given]


def planned_buffer(given: dict) -> PlannedBuffer:
    arg = planned_arg(given)
    assert isinstance(arg, PlannedBuffer), given
    return arg
