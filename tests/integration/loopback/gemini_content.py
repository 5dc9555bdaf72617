"""Gemini (gemini-cli): ``/v1beta/models/M:generateContent`` and ``:streamGenerateContent``."""

from __future__ import annotations

import json
from typing import Any

from .script import Answer, Conversation
from .sse import sse


def read(body: dict[str, Any]) -> Conversation:
    tools = [
        d.get("name", "")
        for t in body.get("tools") or []
        for d in t.get("functionDeclarations") or t.get("function_declarations") or []
    ]
    called: list[str] = []
    for content in body.get("contents", []):
        parts = content.get("parts", [])
        if content.get("role") == "user" and not any("functionResponse" in p for p in parts):
            called = []
        called += [p["functionCall"].get("name", "") for p in parts if "functionCall" in p]
    config = body.get("generationConfig") or {}
    schema = config.get("responseJsonSchema") or config.get("responseSchema")
    return Conversation(tools, called, schema if isinstance(schema, dict) else None)


def write(answer: Answer, stream: bool) -> tuple[str, bytes]:
    if answer.call is not None:
        name, arguments = answer.call
        parts: list[dict[str, Any]] = [{"functionCall": {"name": name, "args": arguments}}]
    else:
        parts = [{"text": answer.text}]
    usage = {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}
    reply = {
        "candidates": [
            {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": usage,
        "modelVersion": "mock-model",
    }
    if not stream:
        return "application/json", json.dumps(reply).encode()
    return "text/event-stream", sse([(None, reply)])
