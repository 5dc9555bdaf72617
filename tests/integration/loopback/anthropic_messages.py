"""Anthropic Messages (claude-agent-acp): ``/v1/messages``."""

from __future__ import annotations

import json
from typing import Any

from .script import Answer, Conversation
from .sse import chunks, sse


def read(body: dict[str, Any]) -> Conversation:
    tools = [t.get("name", "") for t in body.get("tools") or []]
    called: list[str] = []
    for message in body.get("messages", []):
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        kinds = {b.get("type") for b in blocks}
        if message.get("role") == "user" and "tool_result" not in kinds:
            called = []
        if message.get("role") == "assistant":
            called += [b.get("name", "") for b in blocks if b.get("type") == "tool_use"]
    return Conversation(tools, called)


def write(answer: Answer, body: dict[str, Any], n: int) -> tuple[str, bytes]:
    usage = {"input_tokens": 10, "output_tokens": 5}
    if answer.call is not None:
        name, arguments = answer.call
        block: dict[str, Any] = {
            "type": "tool_use",
            "id": f"toolu_{n}",
            "name": name,
            "input": arguments,
        }
        stop = "tool_use"
    else:
        block = {"type": "text", "text": answer.text}
        stop = "end_turn"
    message = {
        "id": f"msg_{n}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "m"),
        "content": [block],
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": usage,
    }
    if not body.get("stream"):
        return "application/json", json.dumps(message).encode()
    start = {**message, "content": [], "stop_reason": None}
    events: list[tuple[str | None, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": start})
    ]
    if answer.call is not None:
        events.append(
            (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {**block, "input": {}},
                },
            )
        )
        delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        events.append(
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta})
        )
    else:
        events.append(
            (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "text", "text": ""},
                },
            )
        )
        for piece in chunks(answer.text):
            delta = {"type": "text_delta", "text": piece}
            events.append(
                ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta})
            )
    events += [
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 5},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return "text/event-stream", sse(events)
