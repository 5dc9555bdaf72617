"""OpenAI Responses (codex-acp): ``/v1/responses``."""

from __future__ import annotations

import json
from typing import Any

from .script import Answer, Conversation
from .sse import chunks, sse


def read(body: dict[str, Any]) -> Conversation:
    # Codex offers an MCP server's tools in a namespace (``mcp__notebook``) and names a
    # call of one by both: read as ``mcp__notebook__run_code``.
    tools = []
    for tool in body.get("tools") or []:
        if tool.get("type") == "namespace":
            tools += [f"{tool['name']}__{t.get('name', '')}" for t in tool.get("tools") or []]
        else:
            tools.append(tool.get("name") or tool.get("type", ""))
    called: list[str] = []
    for item in body.get("input", []):
        if item.get("type", "message") == "message" and item.get("role") == "user":
            called = []
        elif item.get("type") == "function_call":
            space = item.get("namespace")
            called.append(f"{space}__{item.get('name', '')}" if space else item.get("name", ""))
    return Conversation(tools, called)


def write(answer: Answer, body: dict[str, Any], n: int) -> tuple[str, bytes]:
    if answer.call is not None:
        name, arguments = answer.call
        spaces = [t["name"] for t in body.get("tools") or [] if t.get("type") == "namespace"]
        space = next((sp for sp in spaces if name.startswith(sp + "__")), None)
        item: dict[str, Any] = {
            "type": "function_call",
            "id": f"fc_{n}",
            "call_id": f"call_{n}",
            "name": name,
            "arguments": json.dumps(arguments),
            "status": "completed",
        }
        if space is not None:
            item.update(name=name[len(space) + 2 :], namespace=space)
    else:
        item = {
            "type": "message",
            "id": f"msg_{n}",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": answer.text, "annotations": []}],
        }
    usage = {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 5,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 15,
    }
    response = {
        "id": f"resp_{n}",
        "object": "response",
        "status": "completed",
        "model": body.get("model", "m"),
        "output": [item],
        "usage": usage,
    }
    if not body.get("stream"):
        return "application/json", json.dumps(response).encode()
    events: list[tuple[str | None, dict[str, Any]]] = [
        (
            "response.created",
            {
                "type": "response.created",
                "response": {**response, "status": "in_progress", "output": []},
            },
        ),
        (
            "response.output_item.added",
            {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": {**item, "status": "in_progress"},
            },
        ),
    ]
    if answer.call is None:
        for piece in chunks(answer.text):
            events.append(
                (
                    "response.output_text.delta",
                    {
                        "type": "response.output_text.delta",
                        "item_id": item["id"],
                        "output_index": 0,
                        "content_index": 0,
                        "delta": piece,
                    },
                )
            )
    events += [
        (
            "response.output_item.done",
            {"type": "response.output_item.done", "output_index": 0, "item": item},
        ),
        ("response.completed", {"type": "response.completed", "response": response}),
    ]
    return "text/event-stream", sse(events)
