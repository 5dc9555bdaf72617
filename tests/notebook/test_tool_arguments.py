"""A tool call's arguments against the tool's JSON Schema (``argument_error``): fastjsonschema
where it reads the schema as jsonschema would, jsonschema for what draft 2020-12 (MCP's
default dialect) added or changed."""

from __future__ import annotations

from typing import Any

import pytest

from acp_notebook.notebook.tools.server import argument_error

CODE = {
    "type": "object",
    "properties": {"code": {"type": "string"}, "n": {"type": "integer", "minimum": 1}},
    "required": ["code"],
}


@pytest.mark.parametrize(
    ("arguments", "wrong"),
    [
        ({"code": "1 + 1"}, None),
        ({"code": "1 + 1", "n": 2}, None),
        ({}, "the arguments must contain ['code'] properties"),
        ({"code": ["x"]}, "code must be string"),
        ({"code": "x", "n": 0}, "n must be bigger than or equal to 1"),
        ({"code": "x", "n": "2"}, "n must be integer"),
    ],
)
def test_a_draft_7_schema_says_what_is_wrong_in_plain_words(arguments: Any, wrong: Any) -> None:
    assert argument_error(CODE, arguments) == wrong


@pytest.mark.parametrize(
    ("schema", "arguments"),
    [
        # 2020-12 tuples: a draft-7 validator ignores prefixItems and lets these through.
        (
            {"type": "object", "properties": {"pair": {"prefixItems": [{"type": "integer"}]}}},
            {"pair": ["one"]},
        ),
        (
            {"type": "object", "dependentRequired": {"start": ["end"]}},
            {"start": 1},
        ),
        (
            {
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "properties": {"a": {"type": "string"}},
                "unevaluatedProperties": False,
            },
            {"a": "x", "b": 1},
        ),
    ],
)
def test_keywords_draft_2020_12_added_are_still_enforced(schema: Any, arguments: Any) -> None:
    assert argument_error(schema, arguments) is not None


def test_a_schema_fastjsonschema_cannot_compile_goes_to_jsonschema() -> None:
    odd = {"type": "object", "properties": {"a": {"type": "nonsense"}}}
    with pytest.raises(Exception, match="'nonsense' is not valid under any of the given schemas"):
        argument_error(odd, {"a": 1})
