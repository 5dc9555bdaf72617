"""The check of a message of an MCP server the client serves to its agent (the notebook
tools) against MCP's own types, for the inspector.

The check reads the official ``mcp_types`` models: the JSON-RPC envelope of every message,
and the params of a request or notification of a method MCP defines. Results are checked
for their envelope only (MCP's result types are a union that accepts any object). Without
``mcp_types`` nothing is checked (the notebook tools need it, so it is there when they are).
"""

from __future__ import annotations

from typing import Any

from .spec_pages import MCP_SPEC

__all__ = ["mcp_errors"]

_MAX_ERRORS = 5


def mcp_errors(message: dict[str, Any]) -> list[str]:
    """Why ``message`` is not a valid MCP message, one line each (empty: it is)."""
    try:
        import mcp_types
        from pydantic import ValidationError
    except ImportError:
        return []
    try:
        mcp_types.jsonrpc_message_adapter.validate_python(message, by_name=False)
    except ValidationError as exc:
        return _lines(exc.errors())[:_MAX_ERRORS] or ["not a JSON-RPC 2.0 message"]
    method = message.get("method")
    if not isinstance(method, str) or method not in MCP_SPEC:
        return []
    body = {"method": method, **({"params": message["params"]} if "params" in message else {})}
    errors: list[str] = []
    for adapter in _adapters(mcp_types, "id" in message):
        try:
            adapter.validate_python(body, by_name=False)
            return []
        except ValidationError as exc:
            errors += _lines(_of_method(exc.errors()))
    return errors[:_MAX_ERRORS]


def _adapters(mcp_types: Any, request: bool) -> list[Any]:
    if request:
        return [mcp_types.client_request_adapter, mcp_types.server_request_adapter]
    return [mcp_types.client_notification_adapter, mcp_types.server_notification_adapter]


def _of_method(errors: list[Any]) -> list[Any]:
    """The errors of the union's member for this method: members whose ``method`` literal
    did not match are not what the message meant to be."""
    other = {
        error["loc"][0]
        for error in errors
        if error["type"] == "literal_error" and tuple(error["loc"][1:]) == ("method",)
    }
    return [error for error in errors if not error["loc"] or error["loc"][0] not in other]


def _lines(errors: list[Any]) -> list[str]:
    lines = []
    for error in errors:
        # The union member's name leads the location: the reader wants the field.
        loc = [str(part) for part in error["loc"][1:]] or [str(part) for part in error["loc"]]
        lines.append(f"{'.'.join(loc) or 'message'}: {error['msg']}")
    return list(dict.fromkeys(lines))
