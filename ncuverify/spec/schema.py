"""The JSON Schema of expectation files."""

from __future__ import annotations

import copy
from typing import Any

from ncuverify import expression
from ncuverify.spec.cases import EXPRESSION_SCHEMA
from ncuverify.spec.expectation_file import ExpectationFile
from ncuverify.spec.fields import MAX_ID_LENGTH, SCALAR_TYPES
from ncuverify.spec.programs import PROGRAMS_FIELD
from ncuverify.spec.sequences import MAX_STEPS, SEQUENCES_FIELD

SCHEMA_ID = "https://ncuverify.dev/schema/expectations.schema.json"


def json_schema() -> dict[str, Any]:
    """The JSON Schema of expectation files, from the model, for editors with a YAML language server."""
    schema = _with_program_cases(_keys_as_property_names(ExpectationFile.model_json_schema()))
    _cases_with_variables(schema["$defs"])
    _with_sequences(schema)
    _cite_as_written(schema["$defs"]["Claim"]["properties"])
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "ncuverify expectation file",
        **schema,
    }


def _keys_as_property_names(schema: Any) -> Any:
    """pydantic writes a mapping whose keys have a pattern as patternProperties, which lets a key that
    does not match (a case named a-b) pass unflagged; propertyNames flags it."""
    if isinstance(schema, list):
        return [_keys_as_property_names(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    schema = {key: _keys_as_property_names(value) for key, value in schema.items()}
    patterns = schema.get("patternProperties")
    if isinstance(patterns, dict) and len(patterns) == 1:
        ((pattern, values),) = patterns.items()
        del schema["patternProperties"]
        schema["additionalProperties"] = values
        schema["propertyNames"] = {**schema.get("propertyNames", {}), "pattern": pattern}
    return schema


def _with_program_cases(schema: dict[str, Any]) -> dict[str, Any]:
    """Program cases are written among the cases: a case that gives `program` is one; and a file whose
    every case is one needs no kernels."""
    properties = dict(schema["properties"])
    del properties[PROGRAMS_FIELD]
    cases = properties["cases"]
    built = cases["additionalProperties"]
    program = {"$ref": "#/$defs/ProgramCase"}
    properties["cases"] = {
        **cases,
        "additionalProperties": {"if": {"required": ["program"]}, "then": program, "else": built},
    }
    only_programs = {
        "required": ["cases"],
        "properties": {"cases": {"additionalProperties": {"required": ["program"]}}},
    }
    required = [name for name in schema["required"] if name != "kernels"]
    return {
        **schema,
        "properties": properties,
        "required": required,
        "anyOf": [{"required": ["kernels"]}, only_programs],
    }


def _cite_as_written(claim: dict[str, Any]) -> None:
    """`cite` may be left out, not written as null: the schema says so (and an editor then flags a
    citation's own mistakes, a missing figure, where they are)."""
    claim["cite"] = {key: value for key, value in claim["cite"].items() if key not in ("anyOf", "default")}
    claim["cite"]["$ref"] = "#/$defs/Citation"


def _with_sequences(schema: dict[str, Any]) -> None:
    """A case that gives `steps` is a launch sequence: its steps are launches, numbers in them may be
    expressions over the case's vars and sweep; the steps' names (CASE#N) are made, never written."""
    definitions = schema["$defs"]
    step = copy.deepcopy(definitions[f"CaseSpec{_WITH_VARS}"])
    variables = {field: step["properties"].pop(field) for field in ("vars", "sweep")}
    step["title"] = "Step"
    step["description"] = "one launch of a sequence, after the steps before it"
    definitions["Step"] = step
    definitions["SequenceCase"] = {
        "title": "SequenceCase",
        "description": "launches in order, on buffers their steps share ({use: NAME}); claims name a step:"
        " CASE#1, CASE#2, ...",
        "type": "object",
        "properties": {
            "steps": {
                "type": "array",
                "minItems": 1,
                "maxItems": MAX_STEPS,
                "items": {"$ref": "#/$defs/Step"},
            },
            **variables,
        },
        "required": ["steps"],
        "additionalProperties": False,
    }
    properties = schema["properties"]
    del properties[SEQUENCES_FIELD]
    cases = properties["cases"]
    cases["propertyNames"] = {"maxLength": MAX_ID_LENGTH, "pattern": f"^{expression.ID}$"}
    built = cases["additionalProperties"]["else"]
    cases["additionalProperties"]["else"] = {
        "if": {"required": ["steps"]},
        "then": {"$ref": "#/$defs/SequenceCase"},
        "else": built,
    }


# The numbers that a case with vars or a sweep may write as integer expressions (spec/variables.py).
_EXPRESSION_FIELDS = {
    "CaseSpec": ("grid", "block", "shared_bytes", "repeat"),
    "BufferArg": ("count", "offset"),
}
_WITH_VARS = "WithVars"


def _expression_fields(definitions: dict[str, Any]) -> dict[str, tuple[str, ...]]:
    """Those fields, and the value of every scalar argument (a model of one key, its type)."""
    fields = dict(_EXPRESSION_FIELDS)
    for name, model in definitions.items():
        keys = tuple(model.get("properties", {}))
        if len(keys) == 1 and keys[0] in SCALAR_TYPES:
            fields[name] = keys
    return fields


def _cases_with_variables(definitions: dict[str, Any]) -> None:
    """A case without vars or sweep takes numbers only, as it always did; one with them takes
    expressions too, in the copies of the models named ...WithVars."""
    relaxed = _expression_fields(definitions)
    for name, fields in relaxed.items():
        model = _renamed_refs(copy.deepcopy(definitions[name]), set(relaxed))
        for field in fields:
            model["properties"][field] = _or_expression(model["properties"][field])
        definitions[name + _WITH_VARS] = model
    plain = definitions.pop("CaseSpec")
    for field in ("vars", "sweep"):
        del plain["properties"][field]
    definitions["PlainCaseSpec"] = plain
    definitions["CaseSpec"] = {
        "if": {"anyOf": [{"required": ["vars"]}, {"required": ["sweep"]}]},
        "then": {"$ref": f"#/$defs/CaseSpec{_WITH_VARS}"},
        "else": {"$ref": "#/$defs/PlainCaseSpec"},
    }


def _renamed_refs(schema: Any, names: set[str]) -> Any:
    if isinstance(schema, list):
        return [_renamed_refs(item, names) for item in schema]
    if not isinstance(schema, dict):
        return schema
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.removeprefix("#/$defs/") in names:
        return {**schema, "$ref": ref + _WITH_VARS}
    return {key: _renamed_refs(value, names) for key, value in schema.items()}


def _or_expression(schema: dict[str, Any]) -> dict[str, Any]:
    """Every number the schema allows, or an expression in its place."""
    if schema.get("type") in ("integer", "number"):
        described: dict[str, Any] = {k: schema[k] for k in ("title", "description", "default") if k in schema}
        number = {key: value for key, value in schema.items() if key not in described}
        return {**described, "anyOf": [number, EXPRESSION_SCHEMA]}
    if "anyOf" in schema:
        return {**schema, "anyOf": [_or_expression(item) for item in schema["anyOf"]] + [EXPRESSION_SCHEMA]}
    if schema.get("type") == "array":
        return {**schema, "items": _or_expression(schema["items"])}
    return schema
