"""OpenAI Chat Completions (qwen-code, opencode, fast-agent): ``/v1/chat/completions``."""

from __future__ import annotations

import json
from typing import Any

from .script import Answer, Conversation
from .sse import chunks, sse


def read(body: dict[str, Any]) -> Conversation:
    tools = [t.get("function", {}).get("name", "") for t in body.get("tools") or []]
    called: list[str] = []
    for message in body.get("messages", []):
        if message.get("role") == "user":
            called = []
        for call in message.get("tool_calls") or []:
            called.append(call.get("function", {}).get("name", ""))
    schema = None
    response_format = body.get("response_format") or {}
    if response_format.get("type") == "json_schema":
        schema = response_format.get("json_schema", {}).get("schema")
    return Conversation(tools, called, schema)


def write(answer: Answer, body: dict[str, Any], n: int) -> tuple[str, bytes]:
    base = {"id": f"chatcmpl-{n}", "created": 1700000000, "model": body.get("model", "m")}
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    call = None
    if answer.call is not None:
        name, arguments = answer.call
        call = {
            "id": f"call_{n}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)},
        }
    finish = "tool_calls" if call else "stop"
    if not body.get("stream"):
        message: dict[str, Any] = {"role": "assistant", "content": None if call else answer.text}
        if call:
            message["tool_calls"] = [call]
        choice = {"index": 0, "message": message, "finish_reason": finish}
        reply = {**base, "object": "chat.completion", "choices": [choice], "usage": usage}
        return "application/json", json.dumps(reply).encode()

    def chunk(
        delta: dict[str, Any], finish_reason: str | None = None
    ) -> tuple[None, dict[str, Any]]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish_reason}
        return None, {**base, "object": "chat.completion.chunk", "choices": [choice]}

    events: list[tuple[str | None, dict[str, Any]]] = [chunk({"role": "assistant", "content": ""})]
    if call:
        events.append(chunk({"tool_calls": [{"index": 0, **call}]}))
    else:
        events += [chunk({"content": piece}) for piece in chunks(answer.text)]
    events.append(chunk({}, finish))
    if (body.get("stream_options") or {}).get("include_usage"):
        events.append(
            (None, {**base, "object": "chat.completion.chunk", "choices": [], "usage": usage})
        )
    return "text/event-stream", sse(events, done=True)
