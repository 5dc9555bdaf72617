"""What an observer of a peer sees: one :class:`TraceEvent` per message, either way.

Trace files, the notebook's message log and inspector, and tests read these; the peer
(:mod:`~acp_notebook.protocol.jsonrpc`) makes them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["ACP", "DECISION", "INVALID_EXCERPT", "Observer", "TraceEvent"]

#: How much of a line that is not a message an event keeps.
INVALID_EXCERPT = 1024
#: The channel of the ACP connection itself.
ACP = "acp"
#: The channel of the client's own decisions about the calls its MCP servers receive.
DECISION = "decision"


@dataclass(frozen=True)
class TraceEvent:
    """One JSON-RPC message seen by a peer, in either direction.

    ``direction`` is from this peer's point of view: ``send`` is a message it wrote,
    ``recv`` one it read. A received line that is not a JSON object has
    ``message=None`` and the line (truncated to 1 KB) in ``invalid``.
    """

    direction: Literal["send", "recv"]
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
    def received_invalid(cls, line: bytes) -> TraceEvent:
        """A received line that is not a message (kept as its first bytes, decoded)."""
        excerpt = line[:INVALID_EXCERPT].decode("utf-8", "replace")
        return cls("recv", time.time(), None, excerpt, size=len(line))


Observer = Callable[[TraceEvent], None]
