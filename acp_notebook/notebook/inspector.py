"""The protocol inspector: the JSON-RPC messages of the notebook's agents, to read,
filter, step through and save.

    acp.messages()                          # every message, numbered, as a table
    acp.messages(method="session/update")   # one method (requests, their answers, notifications)
    acp.messages().step(3)                  # message 3 in full
    acp.messages().save("trace.jsonl")      # the CLI's --trace format

Rendering is deterministic (no timestamps; the notebook's working directory is
shown as ``$CWD``), so a saved notebook shows the same thing on every machine.
"""

from __future__ import annotations

import functools
import json
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..client.formatting import code_span, fence, md_cell
from ..client.render import portable
from ..client.timeline import Row, Timeline, method_matches
from ..client.trace import open_private, trace_line
from ..protocol.bounds import abridged
from ..protocol.jsonrpc import Observer, TraceEvent
from .tools.endpoint import DIRECTORY as TOOLS_DIRECTORY

_SUMMARY_CHARS = 100
_VOLATILE_KEYS = frozenset({"updatedAt"})
#: How many messages the log keeps (the oldest go first) ...
LOG_LIMIT = 5000
#: ... and how many bytes of them (their size on the wire), so cheap requests for huge
#: answers (40 ``terminal/output`` of 32 MB) cannot pin gigabytes in the kernel.
LOG_BYTES = 32 << 20
#: A message larger than this is kept abridged to this size (with its original size).
MESSAGE_BYTES = 256 << 10


@dataclass(frozen=True)
class Dropped:
    """What the log let go of to stay within its bounds."""

    messages: int = 0
    bytes: int = 0

    def __str__(self) -> str:
        return f"{self.messages} earlier messages / {_megabytes(self.bytes)} dropped"


def _megabytes(size: int) -> str:
    return f"{size / (1 << 20):.1f} MB"


class MessageLog:
    """The last JSON-RPC messages of every agent of the notebook, as (agent, event),
    bounded in count and in bytes; huge messages are kept abridged.

    Agents append on the agent loop thread; the inspector reads a copy on any thread.
    """

    def __init__(
        self,
        limit: int = LOG_LIMIT,
        max_bytes: int = LOG_BYTES,
        message_bytes: int = MESSAGE_BYTES,
    ) -> None:
        self.limit = limit
        self.max_bytes = max_bytes
        self.message_bytes = message_bytes
        self._events: deque[tuple[str, TraceEvent]] = deque()
        self._bytes = 0
        self._dropped = Dropped()
        self._lock = threading.Lock()
        #: Called after each message is recorded (live views poke their coalescer).
        self._listeners: list[Callable[[], None]] = []

    def _kept(self, event: TraceEvent) -> TraceEvent:
        if event.message is None or event.size <= self.message_bytes:
            return event
        message = abridged(event.message, self.message_bytes)
        size = len(json.dumps(message, ensure_ascii=False).encode())
        return replace(event, message=message, size=size, abridged_from=event.size)

    def record(self, agent: str, event: TraceEvent) -> None:
        kept = self._kept(event)
        with self._lock:
            self._events.append((agent, kept))
            self._bytes += kept.size
            dropped, dropped_bytes = self._dropped.messages, self._dropped.bytes
            while len(self._events) > self.limit or self._bytes > self.max_bytes:
                _, old = self._events.popleft()
                self._bytes -= old.size
                dropped += 1
                dropped_bytes += old.abridged_from or old.size
            if dropped != self._dropped.messages:
                self._dropped = Dropped(dropped, dropped_bytes)
        for listener in self._listeners:
            listener()

    def subscribe(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call ``listener()`` after every message recorded (on the thread recording it:
        the agent loop); returns the function that unsubscribes it."""
        self._listeners = [*self._listeners, listener]

        def unsubscribe() -> None:
            self._listeners = [other for other in self._listeners if other is not listener]

        return unsubscribe

    def observer(self, agent: str) -> Observer:
        """What a connection to ``agent`` reports its messages to."""
        return functools.partial(self.record, agent)

    def events(self) -> list[tuple[str, TraceEvent]]:
        with self._lock:
            return list(self._events)

    @property
    def dropped(self) -> Dropped:
        return self._dropped

    @property
    def size(self) -> int:
        """The bytes kept (messages as stored, abridged ones at their abridged size)."""
        return self._bytes


def _redact(value: Any, cwd: str | None) -> Any:
    """The working directory as ``$CWD``, the notebook tools' relay as ``$PYTHON`` in
    ``$NOTEBOOK_TOOLS`` (its private directory); times that change from run to run as "…"."""
    if isinstance(value, dict):
        return {k: ("…" if k in _VOLATILE_KEYS else _redact(v, cwd)) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact(v, cwd) for v in value]
    if isinstance(value, str):
        value = TOOLS_DIRECTORY.sub("$NOTEBOOK_TOOLS", value)
        if value == sys.executable:
            value = "$PYTHON"
    return portable(value, cwd, "$CWD")


def pair_responses(events: Iterable[tuple[str, TraceEvent]]) -> list[Row]:
    """The messages numbered, each response paired with the request it answers (the
    timeline's rows: ``client/timeline.py``)."""
    return Timeline.of(events).rows


class MessageTable:
    """A filtered, numbered view of JSON-RPC messages (the timeline's rows) that renders
    in a notebook."""

    def __init__(
        self,
        messages: Sequence[Row],
        *,
        cwd: str | None = None,
        dropped: Dropped = Dropped(),
    ) -> None:
        self.messages = list(messages)
        self.cwd = cwd
        #: What the log dropped before these messages (to bound its memory).
        self.dropped = dropped

    def __len__(self) -> int:
        return len(self.messages)

    def __getitem__(self, index: int) -> Row:
        return self.messages[index]

    def filter(
        self,
        *,
        method: str | None = None,
        direction: str | None = None,
        kind: str | None = None,
        agent: str | None = None,
        last: int | None = None,
    ) -> MessageTable:
        chosen = [
            msg
            for msg in self.messages
            if (method is None or method_matches(msg.method, method))
            and (direction is None or msg.direction == direction)
            and (kind is None or msg.category == kind)
            and (agent is None or msg.agent == agent)
        ]
        if last is not None:
            chosen = chosen[-last:]
        return MessageTable(chosen, cwd=self.cwd, dropped=self.dropped)

    def step(self, number: int) -> MessageDetail:
        """Message ``number`` (as numbered in the table) in full."""
        for msg in self.messages:
            if msg.number == number:
                return MessageDetail(msg, self.cwd)
        raise IndexError(f"No message number {number} here.")

    def save(self, path: str) -> int:
        """Write the messages as JSON Lines in the CLI's ``--trace`` format; the count written."""
        with open_private(path) as handle:
            for msg in self.messages:
                handle.write(trace_line(msg.event))
        return len(self.messages)

    # ------------------------------------------------------------------ rendering

    def summary(self, msg: Row) -> str:
        message = _redact(msg.message, self.cwd) if msg.message is not None else None
        if message is None:
            return f"(not JSON-RPC) {msg.event.invalid or ''}"[:_SUMMARY_CHARS]
        body = message.get("params", message.get("result", message.get("error")))
        text = json.dumps(body, ensure_ascii=False, sort_keys=True) if body is not None else ""
        if msg.event.abridged_from is not None:
            text = f"(abridged from {_megabytes(msg.event.abridged_from)}) {text}"
        return text if len(text) <= _SUMMARY_CHARS else text[: _SUMMARY_CHARS - 1] + "…"

    def rows(self) -> list[tuple[str, ...]]:
        rows: list[tuple[str, ...]] = []
        for msg in self.messages:
            ident = msg.event.id
            what = msg.category + (f" {json.dumps(ident)}" if ident is not None else "")
            rows.append((str(msg.number), msg.route, what, msg.method or "", self.summary(msg)))
        return rows

    def _dropped_note(self) -> list[str]:
        return [f"*{self.dropped} to bound memory.*", ""] if self.dropped.messages else []

    def _repr_markdown_(self) -> str:
        if not self.messages:
            return "\n".join([*self._dropped_note(), "*No messages.*"])
        lines = [*self._dropped_note()]
        lines += ["| # | direction | kind | method | content |", "|---|---|---|---|---|"]
        for row in self.rows():
            cells = [md_cell(cell, code=i >= 3) for i, cell in enumerate(row)]
            lines.append("| " + " | ".join(cells) + " |")
        return "\n".join(lines)

    def __repr__(self) -> str:
        lines = [line.strip("*") for line in self._dropped_note()[:1]]
        if not self.messages:
            return "\n".join([*lines, "No messages."])
        return "\n".join(lines + ["  ".join(row) for row in self.rows()])


class MessageDetail:
    """One message in full, as pretty JSON."""

    def __init__(self, msg: Row, cwd: str | None) -> None:
        self.msg = msg
        self.cwd = cwd

    def json(self) -> str:
        if self.msg.message is None:
            return self.msg.event.invalid or ""
        return json.dumps(_redact(self.msg.message, self.cwd), indent=2, ensure_ascii=False)

    def _repr_markdown_(self) -> str:
        head = f"**#{self.msg.number}** {self.msg.route} · {self.msg.category}" + (
            f" · {code_span(self.msg.method)}" if self.msg.method else ""
        )
        if self.msg.event.abridged_from is not None:
            head += f" · abridged from {_megabytes(self.msg.event.abridged_from)}"
        return f"{head}\n\n{fence(self.json(), 'json')}"

    def __repr__(self) -> str:
        return self.json()
