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

import json
import sys
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..client.render import portable
from ..protocol.jsonrpc import Observer, TraceEvent
from .answers import md_cell
from .tools.endpoint import DIRECTORY as TOOLS_DIRECTORY

_SUMMARY_CHARS = 100
_VOLATILE_KEYS = frozenset({"updatedAt"})
#: How many messages the log keeps (the oldest go first).
LOG_LIMIT = 5000


class MessageLog:
    """The last JSON-RPC messages of every agent of the notebook, as (agent, event).

    Agents append on the agent loop thread; the inspector reads a copy on any thread.
    """

    def __init__(self, limit: int = LOG_LIMIT) -> None:
        self.limit = limit
        self._events: list[tuple[str, TraceEvent]] = []
        self._lock = threading.Lock()

    def observer(self, agent: str) -> Observer:
        """What a connection to ``agent`` reports its messages to."""

        def record(event: TraceEvent) -> None:
            with self._lock:
                self._events.append((agent, event))
                del self._events[: -self.limit]

        return record

    def events(self) -> list[tuple[str, TraceEvent]]:
        with self._lock:
            return list(self._events)


@dataclass(frozen=True)
class Message:
    number: int
    agent: str
    event: TraceEvent
    #: For a response: the method of the request it answers.
    answers: str | None = None

    @property
    def direction(self) -> str:
        return self.event.direction

    @property
    def raw(self) -> dict[str, Any] | None:
        return self.event.message

    @property
    def kind(self) -> str:
        message = self.event.message
        if message is None:
            return "invalid"
        if "method" in message:
            return "request" if "id" in message else "notification"
        return "error" if "error" in message else "response"

    @property
    def method(self) -> str | None:
        message = self.event.message or {}
        method = message.get("method")
        return method if isinstance(method, str) else self.answers


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


def pair_responses(events: Iterable[tuple[str, TraceEvent]]) -> list[Message]:
    """Number the messages and name the method each response answers."""
    pending: dict[tuple[str, str, Any], str] = {}
    out: list[Message] = []
    for number, (agent, event) in enumerate(events, 1):
        message = event.message or {}
        answers = None
        request_id = json.dumps(message.get("id"))
        if "method" in message and "id" in message:
            pending[(agent, event.direction, request_id)] = str(message["method"])
        elif "id" in message and ("result" in message or "error" in message):
            other = "recv" if event.direction == "send" else "send"
            answers = pending.pop((agent, other, request_id), None)
        out.append(Message(number, agent, event, answers))
    return out


class MessageTable:
    """A filtered, numbered view of JSON-RPC messages that renders in a notebook."""

    def __init__(self, messages: Sequence[Message], *, cwd: str | None = None) -> None:
        self.messages = list(messages)
        self.cwd = cwd

    def __len__(self) -> int:
        return len(self.messages)

    def __getitem__(self, index: int) -> Message:
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
            if (
                method is None
                or msg.method == method
                or ((msg.method or "").startswith(method.rstrip("*")) and method.endswith("*"))
            )
            and (direction is None or msg.direction == direction)
            and (kind is None or msg.kind == kind)
            and (agent is None or msg.agent == agent)
        ]
        if last is not None:
            chosen = chosen[-last:]
        return MessageTable(chosen, cwd=self.cwd)

    def step(self, number: int) -> MessageDetail:
        """Message ``number`` (as numbered in the table) in full."""
        for msg in self.messages:
            if msg.number == number:
                return MessageDetail(msg, self.cwd)
        raise IndexError(f"No message number {number} here.")

    def save(self, path: str) -> int:
        """Write the messages as JSON Lines in the CLI's ``--trace`` format; the count written."""
        with open(path, "w", encoding="utf-8") as handle:
            for msg in self.messages:
                handle.write(json.dumps(msg.event.to_json(), ensure_ascii=False) + "\n")
        return len(self.messages)

    # ------------------------------------------------------------------ rendering

    def summary(self, msg: Message) -> str:
        message = _redact(msg.raw, self.cwd) if msg.raw is not None else None
        if message is None:
            return f"(not JSON-RPC) {msg.event.invalid or ''}"[:_SUMMARY_CHARS]
        body = message.get("params", message.get("result", message.get("error")))
        text = json.dumps(body, ensure_ascii=False, sort_keys=True) if body is not None else ""
        return text if len(text) <= _SUMMARY_CHARS else text[: _SUMMARY_CHARS - 1] + "…"

    def rows(self) -> list[tuple[str, ...]]:
        rows: list[tuple[str, ...]] = []
        for msg in self.messages:
            arrow = "client → agent" if msg.direction == "send" else "agent → client"
            ident = msg.raw.get("id") if msg.raw else None
            what = msg.kind + (f" {json.dumps(ident)}" if ident is not None else "")
            rows.append((str(msg.number), arrow, what, msg.method or "", self.summary(msg)))
        return rows

    def _repr_markdown_(self) -> str:
        if not self.messages:
            return "*No messages.*"
        lines = ["| # | direction | kind | method | content |", "|---|---|---|---|---|"]
        for row in self.rows():
            cells = [md_cell(cell) for cell in row]
            cells[3] = f"`{cells[3]}`" if cells[3] else ""
            cells[4] = f"`{cells[4]}`" if cells[4] else ""
            lines.append("| " + " | ".join(cells) + " |")
        return "\n".join(lines)

    def __repr__(self) -> str:
        if not self.messages:
            return "No messages."
        return "\n".join("  ".join(row) for row in self.rows())


class MessageDetail:
    """One message in full, as pretty JSON."""

    def __init__(self, msg: Message, cwd: str | None) -> None:
        self.msg = msg
        self.cwd = cwd

    def json(self) -> str:
        if self.msg.raw is None:
            return self.msg.event.invalid or ""
        return json.dumps(_redact(self.msg.raw, self.cwd), indent=2, ensure_ascii=False)

    def _repr_markdown_(self) -> str:
        arrow = "client → agent" if self.msg.direction == "send" else "agent → client"
        head = f"**#{self.msg.number}** {arrow} · {self.msg.kind}" + (
            f" · `{self.msg.method}`" if self.msg.method else ""
        )
        return f"{head}\n\n```json\n{self.json()}\n```"

    def __repr__(self) -> str:
        return self.json()
