"""The JSON results read back, as `ncuverify merge` reads a run's shards. Those files come from other
machines and may have been edited, so the reader checks every field it takes (fields.py) and refuses
the document, naming the field, where one is not what check --json writes there."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from ncuverify import json_fields as fields
from ncuverify.errors import ExitCode, InputError
from ncuverify.explain import Explanation, RuleFinding, SourceLine
from ncuverify.export.results_json import BASELINE_SECTION_VERSION
from ncuverify.export.run_identity import MAX_SHARDS, ShardOf
from ncuverify.files import parse_json
from ncuverify.json_fields import Malformed, shown
from ncuverify.measurements import MEASUREMENT_COLUMNS, Measurements, Row
from ncuverify.provenance import Provenance, ReusedFrom
from ncuverify.results import ClaimResult, FileResult, KernelOutcome, KernelVerdict, Verdict
from ncuverify.spec import Claim
from ncuverify.spec.points import Point
from ncuverify.text import one_line

if TYPE_CHECKING:  # names only: the baseline reads exported fields (a cycle)
    from ncuverify.baseline.ratchet import Comparison
    from ncuverify.baseline.snapshot import Change

NOT_A_RESULT = "a result of check --json"


def from_json(text: str, source: str = "the JSON results") -> list[FileResult]:
    """The file results of a JSON document written by check --json; InputError for anything else."""
    try:
        document = parse_json(text)
    except ValueError as error:
        raise InputError(one_line(f"{source}: not {NOT_A_RESULT}: {error}")) from None
    return read_document(document, source)[0]


def read_document(document: Any, source: str) -> tuple[list[FileResult], ShardOf | None]:
    """The results of a parsed document written by check --json, and which run they are (None where
    it was written before the JSON said so); InputError naming source and the field for anything else."""
    try:
        return _results(document)
    except Malformed as error:
        raise InputError(one_line(f"{source}: not {NOT_A_RESULT}: {error}")) from None


def _results(document: Any) -> tuple[list[FileResult], ShardOf | None]:
    record = fields.json_object(
        document,
        "",
        {"ncuverify", "exit_code", "counts", "files"},
        {"run", "set_aside", "problem", "baseline"},
    )
    fields.text(record["ncuverify"], "ncuverify")
    fields.integer(record["exit_code"], "exit_code", 0, max(ExitCode))
    _counts(record["counts"], "counts")
    # written for readers, recomputed from the files: only their form is checked
    fields.integer(record.get("set_aside", 0), "set_aside", 0, 2**31)
    fields.optional(fields.text, record.get("problem"), "problem")
    if "baseline" in record:  # what moved against the baseline: read by baseline_of
        _baseline_section(record["baseline"], "baseline")
    files = fields.json_list(record["files"], "files")
    results = [_file_result(item, f"files[{i}]") for i, item in enumerate(files)]
    return results, _shard_of(record["run"], "run") if "run" in record else None


# The lists of a baseline section, and whether a change in each is a growth.
_CHANGE_LISTS = {"regressed": True, "allowed": True, "improved": False}
_MOVE_LISTS = {"added": True, "removed": False}


def baseline_of(document: Any, source: str) -> tuple[Comparison | None, str | None]:
    """What a document written by check --json says moved against its baseline, and the line saying
    the comparison failed; (None, None) where the run was not compared. InputError naming source and
    the field for anything check does not write there."""
    try:
        record = fields.json_object(document, "")
        return _baseline_section(record["baseline"], "baseline") if "baseline" in record else (None, None)
    except Malformed as error:
        raise InputError(one_line(f"{source}: not {NOT_A_RESULT}: {error}")) from None


def _baseline_section(value: Any, where: str) -> tuple[Comparison | None, str | None]:
    from ncuverify.baseline.ratchet import Comparison, KernelMove  # late: the baseline reads exported fields

    record = fields.json_object(
        value, where, {"version", "error", *_CHANGE_LISTS, *_MOVE_LISTS}, optional={"toolkits"}
    )
    fields.integer(record["version"], f"{where}.version", 1, BASELINE_SECTION_VERSION)
    error = fields.optional(fields.text, record["error"], f"{where}.error")
    changes = [
        _change(item, f"{where}.{key}[{index}]", worse, key == "allowed")
        for key, worse in _CHANGE_LISTS.items()
        for index, item in enumerate(fields.json_list(record[key], f"{where}.{key}"))
    ]
    moves = []
    for key, added in _MOVE_LISTS.items():
        for index, item in enumerate(fields.json_list(record[key], f"{where}.{key}")):
            at = f"{where}.{key}[{index}]"
            move = fields.json_object(item, at, {"file", "case"})
            moves.append(
                KernelMove(
                    fields.text(move["file"], f"{at}.file"), fields.text(move["case"], f"{at}.case"), added
                )
            )
    toolkits = fields.optional(fields.text, record.get("toolkits"), f"{where}.toolkits")
    compared = Comparison(changes, moves, toolkits) if error is None or changes or moves else None
    return compared, error


def _change(value: Any, where: str, worse: bool, allowed: bool) -> Change:
    from ncuverify.baseline.snapshot import Change  # late: the baseline reads exported fields

    record = fields.json_object(
        value, where, {"file", "path", "line", "case", "metric", "before", "after", "allowed"}
    )
    fields.optional(fields.text, record["path"], f"{where}.path")
    fields.optional(lambda line, at: fields.integer(line, at, 1, 2**31), record["line"], f"{where}.line")
    reason = fields.optional(fields.text, record["allowed"], f"{where}.allowed")
    if (reason is not None) is not allowed:
        raise Malformed(f"{where}.allowed", "a reason in the allowed list, null in the others")
    return Change(
        fields.text(record["file"], f"{where}.file"),
        fields.text(record["case"], f"{where}.case"),
        fields.text(record["metric"], f"{where}.metric"),
        fields.finite(record["before"], f"{where}.before"),
        fields.finite(record["after"], f"{where}.after"),
        worse,
        allowed=reason,
    )


def _shard_of(value: Any, where: str) -> ShardOf:
    record = fields.json_object(value, where, {"suite", "shard"}, {"missing"})
    suite = fields.text(record["suite"], f"{where}.suite")
    if not re.fullmatch("[0-9a-f]{64}", suite):
        raise Malformed(f"{where}.suite", f"{shown(suite)} is not a suite's digest")
    pair = fields.json_list(record["shard"], f"{where}.shard")
    if len(pair) != 2:
        raise Malformed(f"{where}.shard", "not a pair [K, N]")
    n = fields.integer(pair[1], f"{where}.shard[1]", 1, MAX_SHARDS)
    k = fields.integer(pair[0], f"{where}.shard[0]", 1, n)
    missing = [
        fields.text(m, f"{where}.missing[{i}]")
        for i, m in enumerate(fields.json_list(record.get("missing", []), f"{where}.missing"))
    ]
    if len(missing) > MAX_SHARDS or not all(re.fullmatch("[0-9?]{1,5}/[0-9?]{1,5}", m) for m in missing):
        raise Malformed(f"{where}.missing", "not a list of shares such as 2/3")
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
_LATER_FILE_KEYS = {"internal_error", "not_run", "explanations", "key", "set_aside", "reused_from"}


def _file_result(value: Any, where: str) -> FileResult:
    record = fields.json_object(value, where, _FILE_KEYS, _LATER_FILE_KEYS)
    _counts(record["counts"], f"{where}.counts")
    claims = [
        _claim_result(item, f"{where}.claims[{i}]")
        for i, item in enumerate(fields.json_list(record["claims"], f"{where}.claims"))
    ]
    _unique_ids(claims, f"{where}.claims")
    explanations = fields.json_object(record.get("explanations", {}), f"{where}.explanations")
    ids = {result.claim.id for result in claims}
    for claim_id in explanations:
        if claim_id not in ids:
            raise Malformed(f"{where}.explanations", f"no claim {shown(claim_id)} in this file")
    provenance = record["provenance"]
    return FileResult(
        Path(fields.text(record["path"], f"{where}.path")),
        claims,
        input_error=fields.optional(fields.text, record["input_error"], f"{where}.input_error"),
        internal_error=fields.optional(fields.text, record.get("internal_error"), f"{where}.internal_error"),
        seconds=fields.finite(record["seconds"], f"{where}.seconds", low=0.0),
        provenance=None if provenance is None else _provenance(provenance, f"{where}.provenance"),
        replayed=fields.boolean(record["replayed"], f"{where}.replayed"),
        reused_from=fields.optional(_reused_from, record.get("reused_from"), f"{where}.reused_from"),
        warnings=fields.texts(record["warnings"], f"{where}.warnings"),
        measurements=_measurements(record["measurements"], f"{where}.measurements"),
        not_run=fields.optional(fields.text, record.get("not_run"), f"{where}.not_run"),
        explanations={
            claim_id: _explanation(item, fields.member(f"{where}.explanations", claim_id))
            for claim_id, item in explanations.items()
        },
        # older files: from the path
        key=fields.optional(fields.text, record.get("key"), f"{where}.key") or "",
        set_aside=fields.integer(record.get("set_aside", 0), f"{where}.set_aside", 0, 2**31),
    )


def _unique_ids(claims: Sequence[ClaimResult], where: str) -> None:
    seen: dict[str, int] = {}
    for index, result in enumerate(claims):
        if result.claim.id in seen:
            raise Malformed(
                f"{where}[{index}].id",
                f"duplicate claim id {shown(result.claim.id)} (also {where}[{seen[result.claim.id]}])",
            )
        seen[result.claim.id] = index


_CLAIM_FIELDS = ("id", "case", "metric", "expect", "cite", "note", "control", "xfail", "arch")
_CLAIM_KEYS = {*_CLAIM_FIELDS, "expected", "measured", "verdict", "reason", "control_measured"}
# a claim over kernels (absent from claims on a case and from older versions' files)
_SET_FIELDS = ("kernels", "match")
_SET_KEYS = {*_SET_FIELDS, "per_kernel"}
_LATER_FIELDS = ("why",)  # absent from older versions' files
_SWEPT_KEYS = {"point"}  # a claim of a sweep (absent from other claims and from older versions' files)
_VERDICTS = {verdict.value: verdict for verdict in Verdict}
_KERNEL_VERDICTS = {verdict.value: verdict for verdict in KernelVerdict}


def _claim_result(value: Any, where: str) -> ClaimResult:
    record = fields.json_object(value, where, _CLAIM_KEYS, {*_SET_KEYS, *_LATER_FIELDS, *_SWEPT_KEYS})
    verdict = record["verdict"]
    if not isinstance(verdict, str) or verdict not in _VERDICTS:
        raise Malformed(f"{where}.verdict", f"{shown(verdict)} is not a verdict")
    fields.text(record["expected"], f"{where}.expected")  # written for readers; rebuilt from expect
    return ClaimResult(
        claim=_claim(record, where),
        verdict=_VERDICTS[verdict],
        measured=fields.optional(fields.finite, record["measured"], f"{where}.measured"),
        reason=fields.optional(fields.text, record["reason"], f"{where}.reason"),
        control_measured=fields.optional(
            fields.finite, record["control_measured"], f"{where}.control_measured"
        ),
        kernels=tuple(
            _kernel_outcome(item, f"{where}.per_kernel[{i}]")
            for i, item in enumerate(fields.json_list(record.get("per_kernel", []), f"{where}.per_kernel"))
        ),
        point=_point(record.get("point", {}), f"{where}.point"),
    )


def _point(value: Any, where: str) -> Point:
    """A claim's sweep point: each variable's whole value, by name, in the sweep's order."""
    record = fields.json_object(value, where)
    return tuple(
        (name, fields.integer(number, fields.member(where, name), -(2**63), 2**63))
        for name, number in record.items()
    )


def _kernel_outcome(value: Any, where: str) -> KernelOutcome:
    record = fields.json_object(value, where, {"kernel", "value", "verdict", "reason"})
    verdict = record["verdict"]
    if not isinstance(verdict, str) or verdict not in _KERNEL_VERDICTS:
        raise Malformed(f"{where}.verdict", f"{shown(verdict)} is not a kernel's verdict")
    return KernelOutcome(
        fields.text(record["kernel"], f"{where}.kernel"),
        fields.optional(fields.finite, record["value"], f"{where}.value"),
        _KERNEL_VERDICTS[verdict],
        fields.optional(fields.text, record["reason"], f"{where}.reason"),
    )


def _claim(record: Mapping[str, Any], where: str) -> Claim:
    """The claim as the expectation file's schema has it, validated as strictly as JSON allows."""
    given = {
        k: record.get(k) for k in (*_CLAIM_FIELDS, *_SET_FIELDS, *_LATER_FIELDS) if record.get(k) is not None
    }
    fields.no_infinities(given, where, depth=0)
    try:
        return Claim.model_validate_json(json.dumps(given), strict=True)
    except RecursionError:  # the metric's parser follows parentheses only so deep
        raise Malformed(f"{where}.metric", "nested too deeply") from None
    except ValidationError as error:
        item = error.errors(include_url=False)[0]
        loc = item["loc"]
        message = item["msg"].removeprefix("Value error, ")
        if item["type"] == "extra_forbidden":
            loc, message = loc[:-1], f"unknown key {shown(loc[-1])}"
        field = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc)
        raise Malformed(where + field, message) from None


def _measurements(value: Any, where: str) -> Measurements:
    rows: list[Row] = []
    for index, item in enumerate(fields.json_list(value, where)):
        at = f"{where}[{index}]"
        record = fields.json_object(item, at, set(MEASUREMENT_COLUMNS))
        case, kernel, metric = (
            fields.text(record[column], f"{at}.{column}") for column in ("case", "kernel", "metric")
        )
        value = fields.optional(fields.finite, record["value"], f"{at}.value")
        unit = fields.text(record["unit"], f"{at}.unit")
        rows.append((case, kernel, metric, math.nan if value is None else float(value), unit))
    return Measurements(tuple(rows))


def _explanation(value: Any, where: str) -> Explanation:
    record = fields.json_object(value, where, {"kernel", "topic"}, {"rules", "lines", "line_info"})
    fields.text(record["kernel"], f"{where}.kernel")
    fields.text(record["topic"], f"{where}.topic")
    for key, kind in (("rules", RuleFinding), ("lines", SourceLine)):
        for index, item in enumerate(fields.json_list(record.get(key, []), f"{where}.{key}")):
            fields.dataclass_fields(kind, item, f"{where}.{key}[{index}]")
    fields.boolean(record.get("line_info", True), f"{where}.line_info")
    return Explanation.from_dict(record)


def _provenance(value: Any, where: str) -> Provenance:
    return Provenance(**fields.dataclass_fields(Provenance, value, where))


def _reused_from(value: Any, where: str) -> ReusedFrom:
    record = fields.json_object(value, where, {"folder", "recorded_at", "gpu", "cases", "of"})
    return ReusedFrom(
        fields.text(record["folder"], f"{where}.folder"),
        fields.text(record["recorded_at"], f"{where}.recorded_at"),
        fields.text(record["gpu"], f"{where}.gpu"),
        tuple(fields.texts(record["cases"], f"{where}.cases")),
        fields.integer(record["of"], f"{where}.of", 0, 2**31),
    )


def _counts(value: Any, where: str) -> None:
    """Counts per verdict: written for readers, recomputed from the claims, so only their form is checked."""
    for key, count in fields.json_object(value, where).items():
        if key not in _VERDICTS:
            raise Malformed(where, f"{shown(key)} is not a verdict")
        fields.integer(count, f"{where}.{key}", 0, 2**31)
