"""Schema checks of whole JSON-RPC messages (acp_notebook.protocol.conformance)."""

from __future__ import annotations

import json
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from acp_notebook.protocol import models as m
from acp_notebook.protocol.conformance import (
    load_schema,
    method_types,
    payload_errors,
    schema_errors,
    validator_available,
)

from .test_models import GOLDEN, load_golden

META = Path(__file__).resolve().parents[2] / "acp_notebook/protocol/schema/v1/meta.json"

CHUNK = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}}


def request(method: str, params: Any, id_: Any = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "method": method, "params": params}


def note(method: str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": params}


def result(value: Any, id_: Any = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "result": value}


VALID: list[tuple[str, dict[str, Any], str, str | None]] = [
    ("update", note("session/update", {"sessionId": "s", "update": CHUNK}), "agent", None),
    ("new session", request("session/new", {"cwd": "/w", "mcpServers": []}), "client", None),
    ("new session result", result({"sessionId": "s"}), "agent", "session/new"),
    ("prompt result", result({"stopReason": "end_turn"}, "abc"), "agent", "session/prompt"),
    ("init", request("initialize", {"protocolVersion": 1}, 0), "client", None),
    (
        "permission",
        request(
            "session/request_permission",
            {
                "sessionId": "s",
                "toolCall": {"toolCallId": "c"},
                "options": [{"optionId": "a", "name": "Allow", "kind": "allow_once"}],
            },
        ),
        "agent",
        None,
    ),
    (
        "permission answer",
        result({"outcome": {"outcome": "cancelled"}}),
        "client",
        "session/request_permission",
    ),
    ("write answer", result({}), "client", "fs/write_text_file"),
    ("cancel", note("session/cancel", {"sessionId": "s"}), "client", None),
    ("cancel request, client", note("$/cancel_request", {"requestId": 7}), "client", None),
    ("cancel request, agent", note("$/cancel_request", {"requestId": "r"}), "agent", None),
    (
        "error",
        {"jsonrpc": "2.0", "id": 2, "error": {"code": -32000, "message": "auth", "data": {}}},
        "agent",
        "session/new",
    ),
    (
        "error, null id",
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse"}},
        "client",
        None,
    ),
    ("extension request", request("_zed.dev/anything", {"free": ["form"]}), "client", None),
    ("extension notification", note("_x/y", None), "agent", None),
    ("logout without params", {"jsonrpc": "2.0", "id": 5, "method": "logout"}, "client", None),
    (
        "elicitation",
        request(
            "elicitation/create",
            {
                "mode": "url",
                "message": "Sign in",
                "elicitationId": "e",
                "url": "https://x",
                "sessionId": "s",
            },
        ),
        "agent",
        None,
    ),
    ("response to an unknown request", result({"anything": 1}), "agent", None),
]


@pytest.mark.parametrize(("label", "message", "sender", "method"), VALID, ids=[v[0] for v in VALID])
def test_valid_messages_pass(
    label: str, message: dict[str, Any], sender: Any, method: str | None
) -> None:
    assert schema_errors(message, sender=sender, request_method=method) == []


INVALID: list[tuple[str, Any, str, str | None, str]] = [
    (
        "missing sessionId",
        note("session/update", {"update": CHUNK}),
        "agent",
        None,
        "'sessionId' is a required property",
    ),
    (
        "wrong stopReason",
        result({"stopReason": "done"}),
        "agent",
        "session/prompt",
        "result.stopReason",
    ),
    (
        "jsonrpc missing",
        {"id": 1, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}},
        "client",
        None,
        "jsonrpc",
    ),
    (
        "jsonrpc wrong",
        {**note("session/cancel", {"sessionId": "s"}), "jsonrpc": "1.0"},
        "client",
        None,
        "jsonrpc",
    ),
    (
        "wrong direction",
        note("session/update", {"sessionId": "s", "update": CHUNK}),
        "client",
        None,
        "sent by the agent",
    ),
    (
        "notification sent as request",
        request("session/cancel", {"sessionId": "s"}),
        "client",
        None,
        "is a notification",
    ),
    ("unknown method", request("session/teleport", {}), "client", None, "unknown method"),
    (
        "result and error",
        {**result({}), "error": {"code": 1, "message": "x"}},
        "client",
        "fs/write_text_file",
        "exactly one",
    ),
    ("no result nor error", {"jsonrpc": "2.0", "id": 1}, "client", None, "exactly one"),
    (
        "fractional id",
        request("session/new", {"cwd": "/", "mcpServers": []}, 1.5),
        "client",
        None,
        "id:",
    ),
    ("boolean id", result({}, True), "client", "fs/write_text_file", "id:"),
    (
        "error without message",
        {"jsonrpc": "2.0", "id": 1, "error": {"code": -32601}},
        "agent",
        None,
        "'message' is a required",
    ),
    ("null result for an object type", result(None), "client", "fs/write_text_file", "result"),
    (
        "unknown sessionUpdate",
        note("session/update", {"sessionId": "s", "update": {"sessionUpdate": "x"}}),
        "agent",
        None,
        "sessionUpdate",
    ),
    (
        "missing params",
        {"jsonrpc": "2.0", "id": 1, "method": "session/prompt"},
        "client",
        None,
        "sessionId",
    ),
    ("not an object", ["batch"], "client", None, "JSON object"),
    ("extension without jsonrpc", {"method": "_x", "params": {}}, "agent", None, "jsonrpc"),
    (
        "answering a method the agent handles",
        result({}),
        "client",
        "session/new",
        "does not answer",
    ),
]


@pytest.mark.parametrize(
    ("label", "message", "sender", "method", "expected"), INVALID, ids=[v[0] for v in INVALID]
)
def test_invalid_messages_report_errors(
    label: str, message: Any, sender: Any, method: str | None, expected: str
) -> None:
    errors = schema_errors(message, sender=sender, request_method=method)
    assert errors, label
    assert any(expected in e for e in errors), errors


def test_errors_point_into_the_discriminated_variant() -> None:
    update = {
        "sessionUpdate": "tool_call",
        "toolCallId": "c",
        "title": "t",
        "content": [{"type": "diff", "path": "/a"}],
    }
    errors = schema_errors(
        note("session/update", {"sessionId": "s", "update": update}), sender="agent"
    )
    assert errors == [
        "params.update.content[0]: 'newText' is a required property [SessionNotification]"
    ]


def test_method_tables_follow_meta_json() -> None:
    meta = json.loads(META.read_text(encoding="utf-8"))
    client_sends = set(method_types("client", "request")) | set(
        method_types("client", "notification")
    )
    agent_sends = set(method_types("agent", "request")) | set(method_types("agent", "notification"))
    protocol = set(meta["protocolMethods"].values())
    assert client_sends == set(meta["agentMethods"].values()) | protocol
    assert agent_sends == set(meta["clientMethods"].values()) | protocol
    assert set(method_types("agent", "result")) == set(method_types("client", "request"))
    assert method_types("client", "notification")["$/cancel_request"] == "CancelRequestNotification"
    assert method_types("agent", "notification")["session/update"] == "SessionNotification"
    assert method_types("client", "request")["session/new"] == "NewSessionRequest"
    assert method_types("agent", "result")["session/new"] == "NewSessionResponse"


def test_payload_errors_for_unknown_type() -> None:
    assert payload_errors({}, "NoSuchType") == ["<payload>: no type 'NoSuchType' in the schema"]


def test_method_tables_agree_with_the_models() -> None:
    for table, sender, result_sender in (
        (m.AGENT_METHODS, "client", "agent"),
        (m.CLIENT_METHODS, "agent", "client"),
    ):
        for method, spec in table.items():
            kind = "request" if spec.result is not None else "notification"
            assert method_types(sender, kind)[method] == _name(spec.params)  # type: ignore[arg-type]
            if spec.result is not None:
                assert method_types(result_sender, "result")[method] == _name(spec.result)  # type: ignore[arg-type]


def _name(tp: Any) -> str:
    """The model class's name, or the alias name of a union (looked up in the models module)."""
    if isinstance(tp, type):
        return tp.__name__
    return next(name for name, value in vars(m).items() if value is tp)


# --- the fast checks give the verdicts of plain jsonschema ---------------------------------------


@cache
def _plain_validator(def_name: str) -> Any:
    """Reference: stock Draft 2020-12 on the schema file, references resolved the usual way."""
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    uri = "urn:acp-schema"
    resource = Resource.from_contents(load_schema(), default_specification=DRAFT202012)
    return Draft202012Validator(
        {"$ref": f"{uri}#/$defs/{def_name}"}, registry=Registry().with_resource(uri, resource)
    )


def _plain_errors(payload: Any, def_name: str) -> list[str]:
    return [e.message for e in _plain_validator(def_name).iter_errors(payload)]


def _variants(payload: Any) -> list[Any]:
    """The payload and, for each of its keys and of its first nested object's keys, the payload
    with that key removed, nulled, or given a value of the wrong type."""
    out = [payload]
    if not isinstance(payload, dict):
        return out
    for key in payload:
        for value in (None, 12345, "?", [], {}):
            out.append({**payload, key: value})
        out.append({k: v for k, v in payload.items() if k != key})
        inner = payload[key]
        if isinstance(inner, dict):
            out += [{**payload, key: v} for v in _variants_flat(inner)]
    return out


def _variants_flat(payload: dict[str, Any]) -> list[dict[str, Any]]:
    out = [{k: v for k, v in payload.items() if k != key} for key in payload]
    out += [{**payload, key: 12345} for key in payload]
    return out


def _golden_cases() -> list[tuple[str, Any, str]]:
    return [(name, load_golden(name), GOLDEN[name][0]) for name in sorted(GOLDEN)]


@pytest.mark.parametrize(
    ("name", "payload", "def_name"), _golden_cases(), ids=lambda v: str(v)[:40]
)
def test_fast_checks_agree_with_plain_jsonschema(name: str, payload: Any, def_name: str) -> None:
    for variant in _variants(payload):
        fast = payload_errors(variant, def_name)
        plain = _plain_errors(variant, def_name)
        assert bool(fast) == bool(plain), (name, variant, fast, plain)


def test_checks_say_when_jsonschema_is_missing() -> None:
    code = """
import sys
sys.modules["jsonschema"] = None  # as if it were not installed
from acp_notebook.protocol import conformance
print(conformance.validator_available())
try:
    conformance.schema_errors({"jsonrpc": "2.0", "method": "_x"}, sender="agent")
except conformance.ValidatorUnavailable as exc:
    print(exc)
"""
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.splitlines() == [
        "False",
        "Checking messages against the ACP schema needs the jsonschema package (4.0 or newer),"
        " which is not installed here: pip install jsonschema.",
    ]
    assert validator_available()
