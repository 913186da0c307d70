"""The references between an expectation file's kernels, cases, claims, buffers and static facts."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from ncuverify import expression
from ncuverify.names import BUFFER_PREFIX, STATIC_FACTS, STATIC_PREFIX, is_static
from ncuverify.spec.arguments import BufferArg, StructArg, UseArg
from ncuverify.spec.claims import Claim
from ncuverify.spec.expectation_file import ExpectationFile
from ncuverify.spec.problems import suggest
from ncuverify.spec.programs import launch_of, not_on_a_program
from ncuverify.spec.yaml_reader import Location


def reference_problems(content: ExpectationFile) -> Iterable[tuple[Location, str]]:
    for case_name, case in content.cases.items():
        if case.kernel not in content.kernels:
            yield (
                ("cases", case_name, "kernel"),
                f"no kernel named {case.kernel!r}{suggest(case.kernel, content.kernels)}",
            )
        elif content.kernels[case.kernel].match is not None:
            yield (
                ("cases", case_name, "kernel"),
                f"kernel {case.kernel!r} is every kernel its 'match' selects: a case launches one, named by 'entry'",
            )
    yield from _sequence_problems(content)
    seen: dict[str, int] = {}
    for index, claim in enumerate(content.claims):
        if claim.id in seen:
            yield (
                ("claims", index, "id"),
                f"duplicate claim id {claim.id!r} (also claims[{seen[claim.id]}])",
            )
        seen.setdefault(claim.id, index)
        cases = {**content.cases, **content.programs}
        if claim.case is not None and claim.case not in cases:
            yield from _launch_problems(content, ("claims", index, "case"), claim.case, cases)
        yield from _control_problems(content, index, claim)
        if claim.kernels is not None:
            yield from _kernels_problems(content, index, claim)
            continue
        for ref in expression.references(claim.expression):
            yield from _static_fact_problems(index, ref.name)
            on = ref.case or claim.case
            if on in content.programs and (is_static(ref.name) or ref.name.startswith(BUFFER_PREFIX)):
                yield not_on_a_program(index, ref.name, on)
            if ref.name.startswith(BUFFER_PREFIX):
                yield from _buffer_problems(content, index, ref.name, ref.case or claim.case)
            if ref.case is None and claim.case is None:
                yield (
                    ("claims", index, "metric"),
                    f"{ref.name} names no case: set the claim's 'case' or write {ref.name}@CASE",
                )
            elif ref.case is not None and ref.case not in cases:
                yield from _launch_problems(content, ("claims", index, "metric"), ref.case, cases)

    yield from _allow_problems(content)


def _static_fact_problems(index: int, name: str) -> Iterable[tuple[Location, str]]:
    if name.startswith(STATIC_PREFIX) and name not in STATIC_FACTS:
        known = ", ".join(sorted(STATIC_FACTS))
        yield (
            ("claims", index, "metric"),
            f"no static fact {name}{suggest(name, STATIC_FACTS)}; known: {known}",
        )


def _kernels_problems(content: ExpectationFile, index: int, claim: Claim) -> Iterable[tuple[Location, str]]:
    """A claim over a set names a kernel entry and reads only its kernels' static facts."""
    assert claim.kernels is not None
    if claim.kernels not in content.kernels:
        yield (
            ("claims", index, "kernels"),
            f"no kernel named {claim.kernels!r}{suggest(claim.kernels, content.kernels)}",
        )
    for ref in expression.references(claim.expression):
        if ref.name.startswith(STATIC_PREFIX):
            yield from _static_fact_problems(index, ref.name)
        elif not is_static(ref.name):
            yield (
                ("claims", index, "metric"),
                f"claim {claim.id} reads 'kernels': its metric reads static facts only (static__*, sass(...)),"
                f" not {ref.name}",
            )
        if is_static(ref.name) and ref.case is not None:
            yield (
                ("claims", index, "metric"),
                f"claim {claim.id} reads 'kernels': {ref.name}@{ref.case} names a case; write {ref.name}",
            )


def _allow_problems(content: ExpectationFile) -> Iterable[tuple[Location, str]]:
    """An allow entry's claim is a claim of the file, and its metric a static fact or a claim's metric."""
    ids = [claim.id for claim in content.claims]
    metrics = {*STATIC_FACTS, *(claim.metric for claim in content.claims)}
    metrics |= {ref.name for claim in content.claims for ref in expression.references(claim.expression)}
    for index, entry in enumerate(content.allow):
        if entry.claim is not None and entry.claim not in ids:
            yield (("allow", index, "claim"), f"no claim {entry.claim!r}{suggest(entry.claim, ids)}")
        if entry.metric is not None and entry.metric not in metrics:
            yield (
                ("allow", index, "metric"),
                f"{entry.metric!r} is no static fact and no metric a claim reads{suggest(entry.metric, metrics)}",
            )


def _launch_problems(
    content: ExpectationFile, where: Location, case: str, cases: Mapping[str, object]
) -> Iterable[tuple[Location, str]]:
    """A case a claim names that is not the file's: fine where it is a launch (`add#2`) of a program
    case that profiles each launch; otherwise no such case."""
    program, launch = launch_of(case)
    if launch is None or program in content.sequences:
        yield (where, _no_case(content, case, cases))
    elif program not in content.programs:
        yield (where, f"no program case named {program!r}{suggest(program, content.programs)}")
    elif content.programs[program].combine != "each":
        yield (
            where,
            f"{case}: program case {program} gives one value (combine: {content.programs[program].combine});"
            " only `combine: each` makes a case of each launch",
        )
    elif launch > content.programs[program].launch_count:
        count = content.programs[program].launch_count
        yield (where, f"{case}: program case {program} profiles {count} launches (launch_count: {count})")


BUFFER_STATISTICS = ("first", "sum", "mean", "min", "max", "median")


def buffer_metric(name: str) -> tuple[str, str] | None:
    """`buffer__cycles.mean` -> ("cycles", "mean"); None for other names."""
    if not name.startswith(BUFFER_PREFIX):
        return None
    buffer, _, statistic = name.removeprefix(BUFFER_PREFIX).partition(".")
    return buffer, statistic


def _buffer_problems(
    content: ExpectationFile, index: int, name: str, case: str | None
) -> Iterable[tuple[Location, str]]:
    buffer, statistic = buffer_metric(name) or ("", "")
    where = ("claims", index, "metric")
    if statistic not in BUFFER_STATISTICS:
        yield (
            where,
            f"{name}: say which statistic of the buffer: {', '.join(BUFFER_PREFIX + buffer + '.' + s for s in BUFFER_STATISTICS)}",
        )
    if case is None or case not in content.cases:
        return
    named = [a.name for a in content.cases[case].args if isinstance(a, BufferArg | UseArg) and a.name]
    if buffer not in named:
        yield (
            where,
            f"case {case} has no buffer named {buffer!r}{suggest(buffer, named)} (give a buffer `name:` to read it back)",
        )


def _no_case(content: ExpectationFile, case: str, cases: Mapping[str, object]) -> str:
    """Why a claim cannot name this case: a sequence is named by its steps; else there is none."""
    steps = content.sequences.get(case)
    if steps is not None:
        shown = ", ".join(steps[:3]) + (", ..." if len(steps) > 3 else "")
        return f"case {case} is a sequence of {len(steps)} launches: name one of its steps ({shown})"
    base, _ = launch_of(case)
    if base in content.sequences:
        return f"no case named {case!r}: case {base} has {len(content.sequences[base])} steps"
    return f"no case named {case!r}{suggest(case, cases)}"


def _sequence_problems(content: ExpectationFile) -> Iterable[tuple[Location, str]]:
    """Each case's pointer fields and buffers; a step's `use` names a buffer an earlier step of its
    sequence made, and no step makes a buffer of a name an earlier one made."""
    made: dict[str, set[str]] = {}  # per sequence, the buffers its steps made so far
    pointed_by: dict[str, set[str]] = {}  # per sequence, the buffers its steps' pointer fields name
    for case_name, case in content.cases.items():
        sequence = content.sequence_of(case_name)
        earlier = made.setdefault(sequence, set()) if sequence is not None else set()
        if sequence is None:
            pointed = _pointed(content, [case_name])
        else:
            if sequence not in pointed_by:
                pointed_by[sequence] = _pointed(content, content.sequences[sequence])
            pointed = pointed_by[sequence]
        yield from _pointer_problems(case_name, case.args, pointed)
        for index, arg in enumerate(case.args):
            where = ("cases", case_name, "args", index)
            if isinstance(arg, UseArg) and sequence is None:
                yield (
                    where,
                    f"{{use: {arg.use}}} passes a buffer of an earlier step: only a case with steps has those",
                )
            elif isinstance(arg, UseArg) and arg.use not in earlier:
                yield (
                    (*where, "use"),
                    f"no earlier step of {sequence} makes a buffer named {arg.use!r}"
                    f"{suggest(arg.use, earlier)} (give the buffer `name: {arg.use}` there)",
                )
            elif isinstance(arg, BufferArg) and arg.name in earlier:
                yield (
                    (*where, "name"),
                    f"an earlier step of {sequence} makes a buffer named {arg.name!r}: pass it with"
                    f" {{use: {arg.name}}}, or name this one otherwise",
                )
        earlier.update(a.name for a in case.args if isinstance(a, BufferArg) and a.name)


def _pointed(content: ExpectationFile, cases: Sequence[str]) -> set[str]:
    """The buffers the pointer fields of these cases name: of a case, or of every step of a sequence
    (a buffer one step does not pass, a later one's struct may point to)."""
    return {
        buffer
        for name in cases
        for arg in content.cases[name].args
        if isinstance(arg, StructArg)
        for buffer in arg.pointers()
    }


def _pointer_problems(case: str, args: Sequence[object], pointed: set[str]) -> Iterable[tuple[Location, str]]:
    """A struct's pointer fields name buffers of its own case, by their `name:`; a buffer that is not
    passed is one that a pointer field names (else the kernel could not reach it)."""
    named = [a.name for a in args if isinstance(a, BufferArg | UseArg) and a.name]
    for index, arg in enumerate(args):
        for buffer in arg.pointers() if isinstance(arg, StructArg) else []:
            if buffer not in named:
                yield (
                    ("cases", case, "args", index),
                    f"a pointer field names {buffer!r}, but case {case} has no buffer of that name"
                    f"{suggest(buffer, named)} (give the buffer `name: {buffer}`)",
                )
    for index, arg in enumerate(args):
        if isinstance(arg, BufferArg | UseArg) and not arg.passed and arg.name not in pointed:
            yield (
                ("cases", case, "args", index, "passed"),
                f"buffer {arg.name!r} is not passed and no struct's pointer field names it: the kernel"
                " could not reach it (pass it, or name it in a pointer field)",
            )


def _control_problems(content: ExpectationFile, index: int, claim: Claim) -> Iterable[tuple[Location, str]]:
    if claim.control is None:
        return
    where = ("claims", index, "control")
    cases = {**content.cases, **content.programs}
    if claim.control not in cases:
        yield (where, _no_case(content, claim.control, cases))
    elif claim.control == claim.case:
        yield (where, "the control must be another case than the claim's own")
    elif all(ref.case is not None for ref in expression.references(expression.parse(claim.metric))):
        yield (where, "every metric names its case with @, so nothing would be read from the control")
