"""What ``session/load`` replays of a turn: its updates, compacted.

A replay is the conversation as it ended, not as it streamed: the client that loads a
session rebuilds the same transcript from far fewer messages.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from .content import text_content
from .edits import fence

__all__ = ["compact"]

Wire = dict[str, Any]


def compact(records: Sequence[Wire], terminal_outputs: dict[str, str] | None = None) -> list[Wire]:
    """The updates of a turn as ``session/load`` replays them.

    Consecutive text chunks of one message become one chunk, each tool call becomes one
    ``tool_call`` in its final state (embedded terminals replaced by their captured
    output), and only the last plan of the turn is kept. Mode, config, usage and title
    updates are not history.
    """
    outputs = terminal_outputs or {}
    out: list[Wire] = []
    texts: dict[int, list[str]] = {}  # index in out -> text pieces of a merged chunk
    calls: dict[str, Wire] = {}
    plan: Wire | None = None
    open_text: int | None = None  # index of the text chunk the next one may extend
    for record in records:
        kind = record.get("sessionUpdate")
        if kind == "plan":
            # Plans live beside the conversation: a message interleaved with plan updates
            # (like /plan's) is still one message.
            if plan is None:
                plan = copy.deepcopy(record)
                out.append(plan)
            else:
                plan["entries"] = copy.deepcopy(record["entries"])
            continue
        content = record.get("content") or {}
        is_text = (
            kind in ("agent_message_chunk", "agent_thought_chunk") and content.get("type") == "text"
        )
        if (
            is_text
            and open_text is not None
            and out[open_text]["sessionUpdate"] == kind
            and out[open_text].get("messageId") == record.get("messageId")
        ):
            texts[open_text].append(content["text"])
            continue
        open_text = None
        if kind in ("agent_message_chunk", "agent_thought_chunk", "user_message_chunk"):
            out.append(copy.deepcopy(record))
            if is_text:
                open_text = len(out) - 1
                texts[open_text] = [content["text"]]
        elif kind == "tool_call":
            call = copy.deepcopy(record)
            calls[call["toolCallId"]] = call
            out.append(call)
        elif kind == "tool_call_update":
            target = calls.get(record["toolCallId"])
            if target is None:  # an update of a call we never started: keep it as a call
                target = calls[record["toolCallId"]] = {
                    "sessionUpdate": "tool_call",
                    "title": "Tool call",
                }
                out.append(target)
            for key, value in record.items():
                # spec: present non-null fields replace, absent or null ones stay unchanged
                if key != "sessionUpdate" and value is not None:
                    target[key] = copy.deepcopy(value)
    for index, pieces in texts.items():
        out[index]["content"]["text"] = "".join(pieces)
    for call in calls.values():
        content = call.get("content")
        if content:
            call["content"] = [
                text_content(fence(outputs.get(item["terminalId"]) or "(no output)"))
                if item.get("type") == "terminal"
                else item
                for item in content
            ]
    return out
