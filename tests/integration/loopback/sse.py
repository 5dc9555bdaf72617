"""A streamed answer as the formats stream it: server-sent events, the text in pieces."""

from __future__ import annotations

import json
from typing import Any


def sse(events: list[tuple[str | None, dict[str, Any]]], done: bool = False) -> bytes:
    out = []
    for event, data in events:
        head = f"event: {event}\n" if event else ""
        out.append(f"{head}data: {json.dumps(data)}\n\n")
    if done:
        out.append("data: [DONE]\n\n")
    return "".join(out).encode()


def chunks(text: str) -> list[str]:
    """The reply in a few pieces, as a model streams it."""
    words = text.split(" ")
    size = max(1, len(words) // 3)
    return [
        " ".join(words[i : i + size]) + (" " if i + size < len(words) else "")
        for i in range(0, len(words), size)
    ]
