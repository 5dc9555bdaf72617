"""What an observer of a peer sees: one :class:`TraceEvent` per message, either way.

The one record of an observed message: trace files, the timeline, the notebook's message
log and inspector, the protocol lab and tests read these; the peer
(:mod:`~acp_notebook.protocol.jsonrpc`) and the notebook tools' transport make them. What a
message is (its category, method, id, ``sessionUpdate`` kind, session, payload) is read from
it here when asked: recording a message costs no more than keeping it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "ACP",
    "DECISION",
    "INVALID_EXCERPT",
    "Category",
    "Direction",
    "Observer",
    "TraceEvent",
    "message_category",
]

#: How much of a line that is not a message an event keeps.
INVALID_EXCERPT = 1024
#: The channel of the ACP connection itself.
ACP = "acp"
#: The channel of the client's own decisions about the calls its MCP servers receive.
DECISION = "decision"

#: From the observing peer's point of view: ``send`` is a message it wrote, ``recv`` one it read.
Direction = Literal["send", "recv"]
#: What a message is; ``invalid``: a line that was not a message; ``decision``: no message
#: at all, the client deciding one of its MCP servers' calls.
Category = Literal["request", "notification", "response", "error", "invalid", "decision"]


def message_category(message: dict[str, Any] | None) -> Category:
    """What one JSON-RPC message is (None: a line that was not a message)."""
    if message is None:
        return "invalid"
    if "method" in message:
        return "request" if "id" in message else "notification"
    return "error" if "error" in message else "response"


@dataclass(frozen=True)
class TraceEvent:
    """One JSON-RPC message seen by a peer, in either direction.

    ``direction`` is from this peer's point of view: ``send`` is a message it wrote,
    ``recv`` one it read. A received line that is not a JSON object has
    ``message=None`` and the line (truncated to 1 KB) in ``invalid``.
    """

    direction: Direction
    time: float
    message: dict[str, Any] | None = None
    invalid: str | None = None
    #: The message's size on the wire in bytes (its line, without the newline).
    size: int = 0
    #: Set by a keeper that stored ``message`` abridged (long strings and lists cut):
    #: the size of the message it stands for.
    abridged_from: int | None = None
    #: The connection it travelled on: :data:`ACP` (client and agent), ``mcp:NAME`` (an MCP
    #: server the client itself serves to its agent, the notebook tools), or
    #: :data:`DECISION` (no wire: the client deciding one of those servers' calls).
    channel: str = ACP

    @property
    def category(self) -> Category:
        if self.channel == DECISION and self.message is not None:
            return "decision"
        return message_category(self.message)

    @property
    def method(self) -> str | None:
        """The method of a request or notification, the tool of a decision; None for a
        response (its request's method is known only by pairing: ``client/timeline.py``)."""
        if self.message is None:
            return None
        method = self.message.get("tool" if self.channel == DECISION else "method")
        if self.channel == DECISION:
            return str(method) if method else None
        return method if isinstance(method, str) else None

    @property
    def id(self) -> Any:
        """The request id of a request or response (None without one)."""
        return self.message.get("id") if self.message is not None else None

    @property
    def update_kind(self) -> str | None:
        """The ``sessionUpdate`` of a ``session/update`` notification, else None."""
        if self.method != "session/update" or self.message is None:
            return None
        params = self.message.get("params")
        update = params.get("update") if isinstance(params, dict) else None
        kind = update.get("sessionUpdate") if isinstance(update, dict) else None
        return kind if isinstance(kind, str) else None

    @property
    def session_id(self) -> str | None:
        """The ``sessionId`` its params or result name (a response to ``session/new``
        names the session it made)."""
        for key in ("params", "result"):
            body = (self.message or {}).get(key)
            if isinstance(body, dict) and isinstance(body.get("sessionId"), str):
                return str(body["sessionId"])
        return None

    @property
    def payload(self) -> Any:
        """What the message carries: its params, result or error (None: nothing)."""
        message = self.message or {}
        for key in ("params", "result", "error"):
            if key in message:
                return message[key]
        return None

    def to_json(self) -> dict[str, Any]:
        record: dict[str, Any] = {"direction": self.direction, "time": self.time}
        if self.message is not None:
            record["message"] = self.message
        else:
            record["invalid"] = self.invalid
        if self.abridged_from is not None:
            record["abridgedFrom"] = self.abridged_from
        if self.channel != ACP:
            record["channel"] = self.channel
        return record

    @classmethod
    def from_json(cls, record: dict[str, Any], size: int = 0) -> TraceEvent:
        """The event a trace line (:meth:`to_json`) records; ``size``: the line's."""
        return cls(
            "send" if record.get("direction") == "send" else "recv",
            float(record.get("time", 0.0)),
            record.get("message"),
            record.get("invalid"),
            size,
            record.get("abridgedFrom"),
            str(record.get("channel") or ACP),
        )

    @classmethod
    def received_invalid(cls, line: bytes) -> TraceEvent:
        """A received line that is not a message (kept as its first bytes, decoded)."""
        excerpt = line[:INVALID_EXCERPT].decode("utf-8", "replace")
        return cls("recv", time.time(), None, excerpt, size=len(line))


Observer = Callable[[TraceEvent], None]
