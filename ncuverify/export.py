"""Results as files for machines and reviewers: JSON (everything), JUnit XML (one test case per claim,
for CI systems) and Markdown (a summary fit for a pull-request comment or a CI step summary).

The JSON is also what `ncuverify merge` reads back from the shards of a run. Those files come from
other machines and may have been edited, so the reader checks every field it takes, and the merge
takes only the shards of one whole run: one suite (the same expectation files, with the same
contents), each of its N shares exactly once. JUnit and Markdown carry text from expectation files,
kernel sources and ncu; every piece of it is made printable and escaped, so that the XML is well-formed
and a pull-request comment shows that text rather than rendering it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import re
import xml.etree.ElementTree as ElementTree
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, cast

import pandas as pd
from pydantic import ValidationError

from ncuverify import __version__
from ncuverify.errors import ExitCode, InputError
from ncuverify.explain import Explanation, RuleFinding, SourceLine, claim_lines
from ncuverify.files import Unreadable, parse_json, read_json, read_plain
from ncuverify.judge import describe, format_number
from ncuverify.measurements import MEASUREMENT_COLUMNS, Measurements
from ncuverify.provenance import Provenance
from ncuverify.results import ClaimResult, FileResult, Verdict, exit_code
from ncuverify.spec import MAX_FILE_BYTES, Claim, project_root
from ncuverify.text import one_line, printable

# What a claim's verdict is for a CI system reading JUnit.
_FAILING = (Verdict.FAILED, Verdict.XPASSED)
_NOT_RUN = (Verdict.SKIPPED, Verdict.OTHER_ARCH)

# The whole suite's results are about 6 MB; a file ten times that is not a result ncuverify wrote.
MAX_RESULT_BYTES = 64 * 2**20
MAX_SHARDS = 10_000


# --- the run's identity ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ShardOf:
    """Which share of which suite a run judged: the K-th of N (1/1 for a whole run)."""

    k: int
    n: int
    suite: str  # suite_digest of the run's expectation files
    missing: tuple[str, ...] = ()  # a merge --partial: the shares it lacked ("2/3"), so it stays partial

    def __str__(self) -> str:
        return f"{self.k}/{self.n}"


def suite_digest(paths: Sequence[Path]) -> str:
    """The identity of a suite: each expectation file's path relative to its project root and the
    sha256 of its bytes, sorted, so that the same files with the same contents give the same digest on
    every machine. A file that cannot be read contributes its path only."""
    entries = sorted(_suite_entry(path) for path in paths)
    return hashlib.sha256(json.dumps(entries).encode()).hexdigest()


def _suite_entry(path: Path) -> tuple[str, str]:
    try:
        folder = path.parent.resolve()
        name = (folder / path.name).relative_to(project_root(folder)).as_posix()
    except (OSError, RuntimeError):  # a folder that cannot be searched; a loop of symbolic links
        name = path.as_posix()
    return name, _content_digest(path)


def _content_digest(path: Path) -> str:
    """sha256 of a regular file's bytes; "" for anything else (a FIFO would block, a device never end)
    and for a file larger than any expectation file may be (it is refused when the run reads it)."""
    try:
        return hashlib.sha256(read_plain(path, MAX_FILE_BYTES)).hexdigest()
    except Unreadable:
        return ""


# --- writing -----------------------------------------------------------------------------------------


def _exit_code(results: Sequence[FileResult]) -> ExitCode:
    """The run's exit code; never "every claim holds" where ncuverify itself failed on a file."""
    code = exit_code(results)
    if code is ExitCode.OK and any(result.internal_error is not None for result in results):
        return ExitCode.INTERNAL_ERROR
    return code


def _number(value: float | None) -> float | None:
    """A measured value for JSON: NaN and infinities, which JSON cannot hold, as null."""
    return None if value is None or not math.isfinite(value) else value


def _label(value: Any) -> str:
    """A table's text cell for JSON: pandas' missing values as ""."""
    return value if isinstance(value, str) else "" if value is None or pd.isna(value) else str(value)


def claim_record(result: ClaimResult) -> dict[str, Any]:
    claim = result.claim
    return {
        "id": claim.id,
        "case": claim.case,
        "metric": claim.metric,
        "expected": describe(claim.expect),
        "expect": claim.expect.model_dump(exclude_none=True),
        "measured": _number(result.measured),
        "verdict": result.verdict.value,
        "reason": result.reason,
        "control": claim.control,
        "control_measured": _number(result.control_measured),
        "cite": claim.cite.model_dump(),
        "note": claim.note,
        "xfail": claim.xfail.model_dump() if claim.xfail is not None else None,
        "arch": claim.arch,
    }


def file_record(result: FileResult) -> dict[str, Any]:
    measurements = []
    if result.measurements is not None:
        for row in result.measurements.frame.itertuples(index=False):
            measurements.append(
                {
                    "case": _label(row.case),
                    "kernel": _label(row.kernel),
                    "metric": _label(row.metric),
                    "value": _number(cast(float, row.value)),
                    "unit": _label(row.unit),
                }
            )
    return {
        "path": str(result.path),
        "key": result.key,
        "input_error": result.input_error,
        "internal_error": result.internal_error,
        "not_run": result.not_run,
        "seconds": round(result.seconds, 3),
        "replayed": result.replayed,
        "provenance": asdict(result.provenance) if result.provenance is not None else None,
        "warnings": result.warnings,
        "counts": {verdict.value: result.count(verdict) for verdict in Verdict},
        "claims": [claim_record(claim) for claim in result.claims],
        "measurements": measurements,
        "explanations": {claim_id: e.to_dict() for claim_id, e in result.explanations.items()},
    }


def to_json(results: Sequence[FileResult], code: ExitCode | None = None, shard: ShardOf | None = None) -> str:
    """Everything the run found, and which run it was: without shard, the whole (1/1) of the suite of
    the results' files."""
    code = _exit_code(results) if code is None else code
    shard = shard or ShardOf(1, 1, suite_digest([result.path for result in results]))
    document = {
        "ncuverify": __version__,
        "exit_code": int(code),
        "run": _run_record(shard),
        "counts": {verdict.value: sum(r.count(verdict) for r in results) for verdict in Verdict},
        "files": [file_record(result) for result in results],
    }
    return json.dumps(document, indent=1)


def _run_record(shard: ShardOf) -> dict[str, Any]:
    record: dict[str, Any] = {"suite": shard.suite, "shard": [shard.k, shard.n]}
    if shard.missing:
        record["missing"] = list(shard.missing)
    return record


# --- reading back ------------------------------------------------------------------------------------

_NOT_A_RESULT = "a result of check --json"


@dataclass(frozen=True)
class Shard:
    """One file written by check --json: its results, and which share of which suite they are (None
    where it was written before the JSON said so)."""

    path: Path
    results: list[FileResult]
    shard: ShardOf | None


class _Malformed(Exception):
    """A field of the document that is not what check --json writes there."""

    def __init__(self, where: str, problem: str) -> None:
        super().__init__(f"{where}: {problem}" if where else problem)


def read_shard(path: Path) -> Shard:
    """A file written by check --json; InputError naming the file and the field for anything else."""
    shown = one_line(str(path))
    try:
        document = read_json(path, MAX_RESULT_BYTES)
    except FileNotFoundError:
        raise InputError(f"{shown}: no such file") from None
    except OSError as error:
        raise InputError(f"{shown}: cannot be read ({error.strerror or error})") from None
    except ValueError as error:
        raise InputError(f"{shown}: not {_NOT_A_RESULT}: {error}") from None
    results, shard = _document(document, str(path))
    return Shard(path, results, shard)


def from_json(text: str, source: str = "the JSON results") -> list[FileResult]:
    """The file results of a JSON document written by check --json; InputError for anything else."""
    try:
        document = parse_json(text)
    except ValueError as error:
        raise InputError(one_line(f"{source}: not {_NOT_A_RESULT}: {error}")) from None
    return _document(document, source)[0]


def _document(document: Any, source: str) -> tuple[list[FileResult], ShardOf | None]:
    try:
        return _results(document)
    except _Malformed as error:
        raise InputError(one_line(f"{source}: not {_NOT_A_RESULT}: {error}")) from None


def _results(document: Any) -> tuple[list[FileResult], ShardOf | None]:
    record = _object(document, "", {"ncuverify", "exit_code", "counts", "files"}, {"run"})
    _text(record["ncuverify"], "ncuverify")
    _integer(record["exit_code"], "exit_code", 0, max(ExitCode))
    _counts(record["counts"], "counts")
    files = _list(record["files"], "files")
    results = [_file_result(item, f"files[{i}]") for i, item in enumerate(files)]
    return results, _shard_of(record["run"], "run") if "run" in record else None


def _shard_of(value: Any, where: str) -> ShardOf:
    record = _object(value, where, {"suite", "shard"}, {"missing"})
    suite = _text(record["suite"], f"{where}.suite")
    if not re.fullmatch("[0-9a-f]{64}", suite):
        raise _Malformed(f"{where}.suite", f"{_shown(suite)} is not a suite's digest")
    pair = _list(record["shard"], f"{where}.shard")
    if len(pair) != 2:
        raise _Malformed(f"{where}.shard", "not a pair [K, N]")
    n = _integer(pair[1], f"{where}.shard[1]", 1, MAX_SHARDS)
    k = _integer(pair[0], f"{where}.shard[0]", 1, n)
    missing = [
        _text(m, f"{where}.missing[{i}]")
        for i, m in enumerate(_list(record.get("missing", []), f"{where}.missing"))
    ]
    if len(missing) > MAX_SHARDS or not all(re.fullmatch("[0-9?]{1,5}/[0-9?]{1,5}", m) for m in missing):
        raise _Malformed(f"{where}.missing", "not a list of shares such as 2/3")
    return ShardOf(k, n, suite, tuple(missing))


_FILE_KEYS = {
    "path",
    "input_error",
    "seconds",
    "replayed",
    "provenance",
    "warnings",
    "counts",
    "claims",
    "measurements",
}
# absent from older versions' files
_LATER_FILE_KEYS = {"internal_error", "not_run", "explanations", "key"}


def _file_result(value: Any, where: str) -> FileResult:
    record = _object(value, where, _FILE_KEYS, _LATER_FILE_KEYS)
    _counts(record["counts"], f"{where}.counts")
    claims = [
        _claim_result(item, f"{where}.claims[{i}]")
        for i, item in enumerate(_list(record["claims"], f"{where}.claims"))
    ]
    _unique_ids(claims, f"{where}.claims")
    explanations = _object(record.get("explanations", {}), f"{where}.explanations")
    ids = {result.claim.id for result in claims}
    for claim_id in explanations:
        if claim_id not in ids:
            raise _Malformed(f"{where}.explanations", f"no claim {_shown(claim_id)} in this file")
    provenance = record["provenance"]
    return FileResult(
        Path(_text(record["path"], f"{where}.path")),
        claims,
        input_error=_optional(_text, record["input_error"], f"{where}.input_error"),
        internal_error=_optional(_text, record.get("internal_error"), f"{where}.internal_error"),
        seconds=_finite(record["seconds"], f"{where}.seconds", low=0.0),
        provenance=None if provenance is None else _provenance(provenance, f"{where}.provenance"),
        replayed=_boolean(record["replayed"], f"{where}.replayed"),
        warnings=_texts(record["warnings"], f"{where}.warnings"),
        measurements=_measurements(record["measurements"], f"{where}.measurements"),
        not_run=_optional(_text, record.get("not_run"), f"{where}.not_run"),
        explanations={
            claim_id: _explanation(item, _at(f"{where}.explanations", claim_id))
            for claim_id, item in explanations.items()
        },
        key=_optional(_text, record.get("key"), f"{where}.key") or "",  # older files: from the path
    )


def _unique_ids(claims: Sequence[ClaimResult], where: str) -> None:
    seen: dict[str, int] = {}
    for index, result in enumerate(claims):
        if result.claim.id in seen:
            raise _Malformed(
                f"{where}[{index}].id",
                f"duplicate claim id {_shown(result.claim.id)} (also {where}[{seen[result.claim.id]}])",
            )
        seen[result.claim.id] = index


_CLAIM_FIELDS = ("id", "case", "metric", "expect", "cite", "note", "control", "xfail", "arch")
_CLAIM_KEYS = {*_CLAIM_FIELDS, "expected", "measured", "verdict", "reason", "control_measured"}
_VERDICTS = {verdict.value: verdict for verdict in Verdict}


def _claim_result(value: Any, where: str) -> ClaimResult:
    record = _object(value, where, _CLAIM_KEYS)
    verdict = record["verdict"]
    if not isinstance(verdict, str) or verdict not in _VERDICTS:
        raise _Malformed(f"{where}.verdict", f"{_shown(verdict)} is not a verdict")
    _text(record["expected"], f"{where}.expected")  # written for readers; rebuilt from expect
    return ClaimResult(
        claim=_claim(record, where),
        verdict=_VERDICTS[verdict],
        measured=_optional(_finite, record["measured"], f"{where}.measured"),
        reason=_optional(_text, record["reason"], f"{where}.reason"),
        control_measured=_optional(_finite, record["control_measured"], f"{where}.control_measured"),
    )


def _claim(record: Mapping[str, Any], where: str) -> Claim:
    """The claim as the expectation file's schema has it, validated as strictly as JSON allows."""
    given = {k: record[k] for k in _CLAIM_FIELDS if record[k] is not None}
    _no_infinities(given, where, depth=0)
    try:
        return Claim.model_validate_json(json.dumps(given), strict=True)
    except RecursionError:  # the metric's parser follows parentheses only so deep
        raise _Malformed(f"{where}.metric", "nested too deeply") from None
    except ValidationError as error:
        item = error.errors(include_url=False)[0]
        loc = item["loc"]
        message = item["msg"].removeprefix("Value error, ")
        if item["type"] == "extra_forbidden":
            loc, message = loc[:-1], f"unknown key {_shown(loc[-1])}"
        field = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc)
        raise _Malformed(where + field, message) from None


def _no_infinities(value: Any, where: str, depth: int) -> None:
    """JSON has no NaN or infinity; Python's reader accepts them, and so would the schema."""
    if depth > 8:
        raise _Malformed(where, "nested too deeply")
    if isinstance(value, float) and not math.isfinite(value):
        raise _Malformed(where, "not a finite number")
    if isinstance(value, dict):
        for key, item in value.items():
            _no_infinities(item, _at(where, key), depth + 1)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _no_infinities(item, f"{where}[{index}]", depth + 1)


def _measurements(value: Any, where: str) -> Measurements:
    rows = []
    for index, item in enumerate(_list(value, where)):
        at = f"{where}[{index}]"
        record = _object(item, at, set(MEASUREMENT_COLUMNS))
        rows.append(
            [_text(record[column], f"{at}.{column}") for column in ("case", "kernel", "metric")]
            + [_optional(_finite, record["value"], f"{at}.value"), _text(record["unit"], f"{at}.unit")]
        )
    frame = pd.DataFrame(rows, columns=MEASUREMENT_COLUMNS).astype({"value": float})
    return Measurements(frame=frame)


def _explanation(value: Any, where: str) -> Explanation:
    record = _object(value, where, {"kernel", "topic"}, {"rules", "lines", "line_info"})
    _text(record["kernel"], f"{where}.kernel")
    _text(record["topic"], f"{where}.topic")
    for key, kind in (("rules", RuleFinding), ("lines", SourceLine)):
        for index, item in enumerate(_list(record.get(key, []), f"{where}.{key}")):
            _dataclass_fields(kind, item, f"{where}.{key}[{index}]")
    _boolean(record.get("line_info", True), f"{where}.line_info")
    return Explanation.from_dict(record)


def _provenance(value: Any, where: str) -> Provenance:
    return Provenance(**_dataclass_fields(Provenance, value, where))


def _dataclass_fields(kind: type, value: Any, where: str) -> dict[str, Any]:
    """A JSON object holding exactly a dataclass's fields (those with defaults may be absent), each of
    the field's type."""
    fields = dataclasses.fields(kind)
    required = {f.name for f in fields if _required(f)}
    record = _object(value, where, required, {f.name for f in fields} - required)
    checked = {}
    for f in fields:
        if f.name in record:
            check = _FIELD_CHECKS[str(f.type)]
            checked[f.name] = check(record[f.name], f"{where}.{f.name}")
    return checked


def _required(f: dataclasses.Field[Any]) -> bool:
    return f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise _Malformed(where, "not text")
    return value


def _texts(value: Any, where: str) -> list[str]:
    return [_text(item, f"{where}[{index}]") for index, item in enumerate(_list(value, where))]


def _text_table(value: Any, where: str) -> dict[str, str]:
    return {key: _text(item, _at(where, key)) for key, item in _object(value, where).items()}


def _boolean(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise _Malformed(where, "not true or false")
    return value


def _integer(value: Any, where: str, low: int, high: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise _Malformed(where, "not a whole number")
    if not low <= value <= high:
        raise _Malformed(where, f"{_shown(value)} is not between {low} and {high}")
    return value


def _finite(value: Any, where: str, low: float | None = None) -> float:
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise _Malformed(where, "not a number")
    try:
        number = float(value)
    except OverflowError:  # a whole number beyond any float
        number = math.inf
    if not math.isfinite(number):
        raise _Malformed(where, "not a finite number")
    if low is not None and number < low:
        raise _Malformed(where, f"{_shown(value)} is less than {low:g}")
    return number


def _optional(check: Callable[[Any, str], Any], value: Any, where: str) -> Any:
    return None if value is None else check(value, where)


def _list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise _Malformed(where, "not a list")
    return value


def _object(
    value: Any,
    where: str,
    required: set[str] | None = None,
    optional: frozenset[str] | set[str] = frozenset(),
) -> dict[str, Any]:
    """A JSON object; with required, one holding those keys, and none but those and the optional."""
    if not isinstance(value, dict):
        raise _Malformed(where, "not an object")
    if required is not None:
        for key in value:
            if key not in required and key not in optional:
                raise _Malformed(where, f"unknown key {_shown(key)}")
        for key in sorted(required):
            if key not in value:
                raise _Malformed(where, f"missing {key!r}")
    return value


def _counts(value: Any, where: str) -> None:
    """Counts per verdict: written for readers, recomputed from the claims, so only their form is checked."""
    for key, count in _object(value, where).items():
        if key not in _VERDICTS:
            raise _Malformed(where, f"{_shown(key)} is not a verdict")
        _integer(count, f"{where}.{key}", 0, 2**31)


_FIELD_CHECKS: dict[str, Callable[[Any, str], Any]] = {
    "str": _text,
    "str | None": lambda value, where: _optional(_text, value, where),
    "int": lambda value, where: _integer(value, where, 0, 2**31),
    "float": _finite,
    "float | None": lambda value, where: _optional(_finite, value, where),
    "bool": _boolean,
    "list[str]": _texts,
    "dict[str, str]": _text_table,
}


def _at(where: str, key: str) -> str:
    """The name of an object's member: where.key for a plain key, else where['key'] (quoted, escaped)."""
    plain = re.fullmatch(r"[\w.:@-]{1,80}", key, flags=re.ASCII)
    return f"{where}.{key}" if plain else f"{where}[{_shown(key)}]"


def _shown(value: Any) -> str:
    """A value in a message: its repr (which escapes control characters), cut short."""
    text = repr(value)
    return one_line(text if len(text) <= 60 else text[:57] + "...")


# --- merging the shards of a run ---------------------------------------------------------------------


def merge(shards: Sequence[Shard], partial: bool = False) -> tuple[list[FileResult], list[str]]:
    """One result per file from the shards of one run, every claim once, in the first shard's file
    order; and warning lines. InputError unless the shards are one whole run: one suite, one N, each
    share 1..N exactly once. With partial, an incomplete run, or shards written before the JSON named
    its run, are merged too, and the warnings say what is missing or could not be checked."""
    if not shards:
        raise InputError("merge: no shards given")
    warnings = [_unchecked(shard, partial) for shard in shards if shard.shard is None]
    warnings += [
        _incomplete(shard, shard.shard, partial) for shard in shards if shard.shard and shard.shard.missing
    ]
    runs = [(shard, shard.shard) for shard in shards if shard.shard is not None]
    if runs:
        _one_run(runs)
        n = runs[0][1].n
        missing = [f"{k}/{n}" for k in range(1, n + 1) if k not in {of.k for _, of in runs}]
        if missing:
            what = f"shard{'s' if len(missing) > 1 else ''} {', '.join(missing)} missing"
            count = f"{len(runs)} of {n}"
            if not partial:
                given = ", ".join(_name(shard.path) for shard, _ in runs)
                raise InputError(
                    f"merge: {what}: {given} {'is' if len(runs) == 1 else 'are'} {count} shards of the run"
                    " (merge --partial merges them anyway)"
                )
            warnings.append(f"merge: {what}: the results are those of {count} shards of the run")
    return _merged(shards), warnings


def _incomplete(shard: Shard, of: ShardOf, partial: bool) -> str:
    what = f"{_name(shard.path)}: a partial merge, without shard{'s' if len(of.missing) > 1 else ''} {', '.join(of.missing)}"
    if not partial:
        raise InputError(f"{what} (merge --partial merges it anyway)")
    return what


def _unchecked(shard: Shard, partial: bool) -> str:
    what = f"{_name(shard.path)}: written by an earlier ncuverify, without the run it belongs to"
    if not partial:
        raise InputError(
            f"{what}: cannot check that the shards make one run (merge --partial merges it anyway)"
        )
    return f"{what}: not checked to be a shard of this run"


def _one_run(runs: Sequence[tuple[Shard, ShardOf]]) -> None:
    """InputError unless the shards are of one suite, split the same way, each share once, over the
    same files."""
    first, first_of = runs[0]
    seen: dict[int, Shard] = {}
    for shard, of in runs:
        name = _name(shard.path)
        if of.suite != first_of.suite:
            raise InputError(
                f"{name}: run.suite: a shard of another suite than {_name(first.path)}"
                " (other expectation files, or edited ones)"
            )
        if of.n != first_of.n:
            raise InputError(
                f"{name}: run.shard: shard {of}, but {_name(first.path)} is shard {first_of}:"
                " not shards of one run"
            )
        if of.k in seen:
            raise InputError(f"{name}: run.shard: shard {of} again (also {_name(seen[of.k].path)})")
        seen[of.k] = shard
        files = {result.key for result in shard.results}
        expected = {result.key for result in first.results}
        if files != expected:
            odd = one_line(min(files - expected or expected - files))
            raise InputError(
                f"{name}: files: not the files of {_name(first.path)} ({odd} is in one of them only;"
                " run every shard from the same folder on the same files)"
            )


def _merged(shards: Sequence[Shard]) -> list[FileResult]:
    merged: dict[str, FileResult] = {}
    judged_by: dict[tuple[str, str], int] = {}  # file key and claim id -> the shard that judged it
    for index, shard in enumerate(shards):
        for result in shard.results:
            for claim_result in result.claims:
                earlier = judged_by.setdefault((result.key, claim_result.claim.id), index)
                if earlier != index:
                    raise InputError(
                        f"{_name(shard.path)}: claim {claim_result.claim.id} of {_name(result.path)}"
                        f" is also in {_name(shards[earlier].path)}"
                    )
            known = merged.get(result.key)
            merged[result.key] = result if known is None else _both_results(known, result)
    return list(merged.values())


def _name(path: Path) -> str:
    """A path in a message: on one line, whatever it holds."""
    return one_line(str(path))


def _both_results(known: FileResult, result: FileResult) -> FileResult:
    return replace(
        known,
        claims=[*known.claims, *result.claims],
        input_error=known.input_error or result.input_error,
        internal_error=known.internal_error or result.internal_error,
        not_run=known.not_run if result.not_run is None else result.not_run,
        seconds=known.seconds + result.seconds,
        provenance=known.provenance or result.provenance,
        warnings=[*known.warnings, *result.warnings],
        measurements=_both(known.measurements, result.measurements),
        explanations={**known.explanations, **result.explanations},
    )


def _both(first: Measurements | None, second: Measurements | None) -> Measurements | None:
    if first is None or second is None:
        return first or second
    return first.combined(second)


# --- JUnit -------------------------------------------------------------------------------------------


def to_junit(results: Sequence[FileResult]) -> str:
    """One <testsuite> per file, one <testcase> per claim; wrong input and ncuverify's own failure on a
    file are <error>s of the file, a file not run a skipped case. Every text is made printable first:
    XML 1.0 cannot hold most control characters, whatever the escaping."""
    suites = ElementTree.Element("testsuites", name="ncuverify")
    for result in results:
        suite = _element(suites, "testsuite", name=str(result.path))
        failures = errors = skipped = 0
        classname = result.key
        if result.input_error is not None:
            case = _element(suite, "testcase", classname=classname, name="input")
            _element(case, "error", result.input_error, message="the expectation file is wrong")
            errors += 1
        if result.internal_error is not None:
            case = _element(suite, "testcase", classname=classname, name="internal")
            _element(case, "error", result.internal_error, message="ncuverify failed on this file")
            errors += 1
        if result.not_run is not None:
            case = _element(suite, "testcase", classname=classname, name="not run")
            _element(case, "skipped", message=result.not_run)
            skipped += 1
        for claim_result in result.claims:
            case = _element(suite, "testcase", classname=classname, name=claim_result.claim.id, time="0")
            message = _message(claim_result)
            if claim_result.verdict in _FAILING:
                details = _details(claim_result, result.explanations.get(claim_result.claim.id))
                _element(case, "failure", details, message=message)
                failures += 1
            elif claim_result.verdict is Verdict.ERROR:
                _element(case, "error", _details(claim_result), message=message)
                errors += 1
            elif claim_result.verdict in (*_NOT_RUN, Verdict.XFAILED):
                _element(case, "skipped", message=message)
                skipped += 1
            else:
                _element(case, "system-out", message)
        suite.set("tests", str(len(suite)))
        suite.set("failures", str(failures))
        suite.set("errors", str(errors))
        suite.set("skipped", str(skipped))
        suite.set("time", f"{result.seconds:.3f}")
    ElementTree.indent(suites)
    return ElementTree.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def _element(
    parent: ElementTree.Element, tag: str, text: str | None = None, **attributes: str
) -> ElementTree.Element:
    """A child element whose attributes are one printable line each and whose text is printable."""
    element = ElementTree.SubElement(parent, tag, {k: one_line(v) for k, v in attributes.items()})
    if text is not None:
        element.text = printable(text)
    return element


def _message(result: ClaimResult) -> str:
    measured = format_number(result.measured) if result.measured is not None else "not measured"
    text = f"{result.claim.metric}: measured {measured}, expected {describe(result.claim.expect)}"
    return f"{text} ({result.reason})" if result.reason else text


def _details(result: ClaimResult, explanation: Explanation | None = None) -> str:
    cite = result.claim.cite
    lines = [_message(result), f"source: {cite.document} §{cite.section}: {cite.figure}"]
    if result.claim.note:
        lines.append(f"note: {result.claim.note}")
    if explanation is not None:
        lines += claim_lines(result.claim.id, explanation)
    return "\n".join(lines)


# --- Markdown ----------------------------------------------------------------------------------------

# Characters that Markdown (GitHub's flavour: tables, strikethrough, math) reads as markup anywhere in a
# line; each is written with a backslash, which Markdown reads as "this character, as text".
_INLINE_MARKUP = re.compile(r"[\\`*_\[\]~|$]")
# What makes a line a heading, a list item, a rule or a quote when it starts the line.
_LINE_MARKUP = re.compile(r"[-+=#]|\d+[.)]")
# Text that a code span shows as it is: nothing in it could end the span or the table cell.
_PLAIN = re.compile(r"[\w./:+-]{1,200}", flags=re.ASCII)


def _inline(text: str) -> str:
    """Untrusted text as Markdown that shows it as it is, on one line: control characters as visible
    escapes, <, > and & as entities (so that no HTML is ever written), markup characters escaped."""
    text = one_line(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _INLINE_MARKUP.sub(lambda match: "\\" + match.group(), text)


def _code(text: str) -> str:
    """A name as code where it is plainly a name; anything else as escaped text."""
    return f"`{text}`" if _PLAIN.fullmatch(text) else _inline(text)


def _lead(text: str) -> str:
    """A name that starts a line: as code where it is plainly a name, else as a line of text."""
    return f"`{text}`" if _PLAIN.fullmatch(text) else _line(text)


def _line(text: str) -> str:
    """Untrusted text that starts a line: escaped, and never a heading, list item, rule or quote."""
    escaped = _inline(text.lstrip())
    marker = _LINE_MARKUP.match(escaped)
    if marker is None:
        return escaped
    end = marker.end()
    return escaped[: end - 1] + "\\" + escaped[end - 1 :]


def _items(lines: Sequence[str]) -> list[str]:
    """Untrusted lines as a list, one item per line (lines indented by two or more nested), each on
    one line whatever it holds."""
    return [("  - " if line.startswith("  ") else "- ") + _line(line) for line in lines if line.strip()]


def _row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def to_markdown(results: Sequence[FileResult]) -> str:
    """A summary: the counts, where the figures come from, and every claim that did not pass. Every
    text from a file or from ncu is escaped: the summary is shown as a pull-request comment."""
    code = _exit_code(results)
    lines = [f"## ncuverify: {_headline(code)}", ""]
    lines += [
        "| file | passed | failed | errors | skipped | other |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for result in results:
        trouble = (
            "input error"
            if result.input_error is not None
            else "internal error"
            if result.internal_error is not None
            else "not run"
            if result.not_run is not None
            else None
        )
        if trouble is not None:
            lines.append(_row([_code(str(result.path)), trouble, "", "", "", ""]))
            continue
        other = (
            result.count(Verdict.XFAILED) + result.count(Verdict.XPASSED) + result.count(Verdict.OTHER_ARCH)
        )
        counts = [result.count(v) for v in (Verdict.PASSED, Verdict.FAILED, Verdict.ERROR, Verdict.SKIPPED)]
        lines.append(_row([_code(str(result.path)), *(str(c) for c in [*counts, other])]))
    lines.append("")
    for result in results:
        name = _lead(result.path.name)
        if result.provenance is not None:
            how = "replayed from a recording made" if result.replayed else "measured"
            lines.append(f"- {name}: {how} on {_inline(result.provenance.describe())}")
        lines += [f"- {name}: warning: {_inline(w)}" for w in result.warnings]
    problems = [(r, c) for r in results for c in r.claims if c.verdict in (*_FAILING, Verdict.ERROR)]
    broken = [r for r in results if r.input_error is not None or r.internal_error is not None]
    if problems or broken:
        lines += [
            "",
            "### What did not hold",
            "",
            "| file | claim | measured | expected | verdict | why |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for result, claim_result in problems:
            measured = format_number(claim_result.measured) if claim_result.measured is not None else "-"
            cells = [
                _code(result.path.name),
                _code(claim_result.claim.id),
                _inline(measured),
                _inline(describe(claim_result.claim.expect)),
                claim_result.verdict.value,
                _inline(claim_result.reason or ""),
            ]
            lines.append(_row(cells))
        for result in broken:
            for error, what in (
                (result.input_error, "input error"),
                (result.internal_error, "internal error"),
            ):
                if error is not None:
                    lines += ["", f"{_lead(str(result.path))}: {what}", "", *_items(error.split("\n"))]
        explained = [(r, claim_id, e) for r in results for claim_id, e in r.explanations.items()]
        if explained:
            lines += ["", "### What ncu says about them", ""]
            for result, claim_id, explanation in explained:
                lines += [
                    _lead(result.path.name),
                    "",
                    *_items(claim_lines(claim_id, explanation)),
                    "",
                ]
    return "\n".join(lines) + "\n"


def _headline(code: ExitCode) -> str:
    return {
        ExitCode.OK: "every claim holds",
        ExitCode.CLAIM_FAILED: "claims failed",
        ExitCode.BAD_INPUT: "an expectation file is wrong",
        ExitCode.NOT_MEASURABLE: "some claims could not be measured here",
        ExitCode.INTERNAL_ERROR: "ncuverify failed on a file",
    }[code]
