"""The JSON Schema of expectation files."""

from __future__ import annotations

from typing import Any

from ncuverify.spec.expectation_file import ExpectationFile
from ncuverify.spec.programs import PROGRAMS_FIELD

SCHEMA_ID = "https://ncuverify.dev/schema/expectations.schema.json"


def json_schema() -> dict[str, Any]:
    """The JSON Schema of expectation files, from the model, for editors with a YAML language server."""
    schema = _with_program_cases(_keys_as_property_names(ExpectationFile.model_json_schema()))
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
