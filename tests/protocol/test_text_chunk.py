"""The text chunk read without the models (protocol/text_chunk.py): it reads exactly what the
models read, and only where they could neither fail nor repair anything; every other shape
is left to the models' lenient path."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from acp_notebook.protocol import models as m
from acp_notebook.protocol.text_chunk import CHUNK_UPDATES, TextChunk, text_chunk


def params(
    kind: str = "agent_message_chunk", text: Any = "Hello", **update_keys: Any
) -> dict[str, Any]:
    update = {"sessionUpdate": kind, "content": {"type": "text", "text": text}, **update_keys}
    return {"sessionId": "s-1", "update": update}


READ = [
    params(),
    params("agent_thought_chunk", "thinking…"),
    params("user_message_chunk", "replayed by session/load"),
    params(text=""),
    params(text="naïve ✓ \n\t ``` <b>"),
    params(messageId="msg-1"),
    params(messageId=None),
]


@pytest.mark.parametrize("raw", READ)
def test_a_text_chunk_is_read_as_the_models_read_it(raw: dict[str, Any]) -> None:
    repairs: list[str] = []
    model = m.SessionNotification.parse(copy.deepcopy(raw), repairs=repairs)
    assert repairs == []
    update = model.update
    assert isinstance(update, m.ContentChunk) and isinstance(update.content, m.TextContentBlock)
    assert text_chunk(raw) == TextChunk(
        model.session_id, update.session_update, update.content.text, update.message_id
    )


def _with(raw: dict[str, Any], where: str, key: str, value: Any) -> dict[str, Any]:
    raw = copy.deepcopy(raw)
    target = {"params": raw, "update": raw["update"], "content": raw["update"]["content"]}[where]
    target[key] = value
    return raw


LEFT = {
    "not an object": ["a", "list"],
    "null params": None,
    "no update": {"sessionId": "s-1"},
    "update not an object": {"sessionId": "s-1", "update": "text"},
    "sessionId a number": _with(params(), "params", "sessionId", 7),
    "_meta on the params": _with(params(), "params", "_meta", {"k": 1}),
    "_meta on the update": _with(params(), "update", "_meta", {"k": 1}),
    "_meta on the block": _with(params(), "content", "_meta", {"k": 1}),
    "annotations on the block": _with(params(), "content", "annotations", {"priority": 1}),
    "an unknown key": _with(params(), "update", "extra", True),
    "messageId a number": params(messageId=3),
    "text a number": params(text=3),
    "text null": params(text=None),
    "no text": {
        "sessionId": "s-1",
        "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text"}},
    },
    "text misspelt": {
        "sessionId": "s-1",
        "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "txt": ""}},
    },
    "type not text": _with(params(), "content", "type", "Text"),
    "an image block": {
        "sessionId": "s-1",
        "update": {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "image", "data": "", "mimeType": "image/png"},
        },
    },
    "content not an object": _with(params(), "update", "content", "Hello"),
    "a tool call": {
        "sessionId": "s-1",
        "update": {"sessionUpdate": "tool_call", "toolCallId": "t", "title": "x"},
    },
    "an unknown sessionUpdate": params("agent_message_chunk_v2"),
    "sessionUpdate a list": params(["agent_message_chunk"]),
    "sessionUpdate missing": {"sessionId": "s-1", "update": {"content": {"type": "text"}}},
}


@pytest.mark.parametrize("raw", LEFT.values(), ids=LEFT.keys())
def test_any_other_shape_is_left_to_the_models(raw: Any) -> None:
    assert text_chunk(raw) is None


def test_the_chunk_updates_are_the_content_chunk_variants() -> None:
    variants = {cls.__acp_tag__ for cls in m.ContentChunk.__subclasses__()}
    assert variants == CHUNK_UPDATES
