"""The timeline of a connection's JSON-RPC messages: what the live inspector, the CLI and the
step-through show, derived once from the recorded events.

Each :class:`Row` is one message with what a reader wants to know about it: its direction
(who sent it), its category (request, notification, response, error), its method (a response
is named after the request it answers), the ``sessionUpdate`` kind of a ``session/update``,
the session it concerns, the request it answers (or the response that answered it) and the
time between the two, and the spec page that defines it.

Validation against the schema is lazy and cached (:meth:`Timeline.flags`): importing
``jsonschema`` and checking a message costs far more than recording it, so it never runs on
the path that records messages; a view checks the rows it shows, or a batch after a turn.

Pure: no Jupyter, no I/O; the same events always give the same timeline.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from ..protocol.conformance import ValidatorUnavailable, schema_errors
from ..protocol.jsonrpc import TraceEvent
from ..protocol.trace_event import ACP, DECISION
from .mcp_check import mcp_errors
from .spec_pages import METHOD_SPEC, SPEC_ROOT, UPDATE_SPEC, mcp_spec_link, spec_link

__all__ = [
    "METHOD_SPEC",
    "SPEC_ROOT",
    "UPDATE_SPEC",
    "Category",
    "Row",
    "Timeline",
    "TimelineBuilder",
    "message_category",
    "method_matches",
    "spec_link",
    "trace_events",
    "warm_up",
]


def trace_events(lines: Iterable[str]) -> list[TraceEvent]:
    """The events of a trace in the ``--trace`` format (JSON Lines), as recorded."""
    events = []
    for line in lines:
        if not line.strip():
            continue
        record = json.loads(line)
        events.append(
            TraceEvent(
                "send" if record.get("direction") == "send" else "recv",
                float(record.get("time", 0.0)),
                record.get("message"),
                record.get("invalid"),
                len(line.encode()),
                record.get("abridgedFrom"),
                str(record.get("channel") or ACP),
            )
        )
    return events


def method_matches(method: str | None, pattern: str) -> bool:
    """Whether ``method`` is ``pattern``, or starts with it when it ends with ``*``
    (``session/*``)."""
    name = method or ""
    return name == pattern or (pattern.endswith("*") and name.startswith(pattern[:-1]))


Category = Literal["request", "notification", "response", "error", "invalid", "decision"]
#: Who sent a message: the client, its agent, or the MCP server the client serves to its
#: agent (the notebook tools), which lives in the client's process.
Sender = Literal["client", "agent", "tools"]


@dataclass(frozen=True)
class Row:
    """One message of the timeline (see the module docstring)."""

    number: int
    agent: str
    event: TraceEvent
    category: Category
    method: str | None
    #: The ``sessionUpdate`` of a ``session/update`` notification.
    update_kind: str | None
    session_id: str | None
    #: The JSON of the request id (requests and their responses).
    request_id: str | None
    #: A request: the number of the row that answered it; a response: the request's.
    paired: int | None = None
    #: Seconds between a request and its response (on both rows).
    latency: float | None = None

    @property
    def direction(self) -> Literal["send", "recv"]:
        return self.event.direction

    @property
    def channel(self) -> str:
        return self.event.channel

    @property
    def sender(self) -> Sender:
        """Who sent it: the log is the client's, so what it sent is the client's, or its
        MCP server's on that server's channel; a decision is the client's own, made for
        its server (drawn on the server's lane)."""
        if self.channel == ACP:
            return "client" if self.event.direction == "send" else "agent"
        return "tools" if self.event.direction == "send" or self.channel == DECISION else "agent"

    @property
    def receiver(self) -> Sender:
        """Who it went to (a decision stays with the server it was made for)."""
        if self.channel == DECISION:
            return "tools"
        if self.sender == "agent":
            return "client" if self.channel == ACP else "tools"
        return "agent"

    @property
    def route(self) -> str:
        """Who sent it to whom, in words ("agent → tools"); a decision is the client's."""
        if self.category == "decision":
            return "the client decides"
        return f"{self.sender} → {self.receiver}"

    @property
    def message(self) -> dict[str, Any] | None:
        return self.event.message

    @property
    def spec(self) -> str | None:
        if self.channel == DECISION:
            return None
        if self.channel != ACP:
            return mcp_spec_link(self.method)
        return spec_link(self.method, self.update_kind)

    @property
    def error(self) -> str | None:
        """An error response's code and message, in one line."""
        if self.category != "error" or self.message is None:
            return None
        error = self.message.get("error")
        if not isinstance(error, dict):
            return str(error)
        return f"{error.get('code')}: {error.get('message')}"

    @property
    def decision(self) -> str:
        """A decision row's outcome in words ("allowed by the policy allow")."""
        if self.category != "decision" or self.message is None:
            return ""
        outcome, by = self.message.get("outcome"), self.message.get("by")
        return f"{outcome} by {by}" if by else str(outcome)

    @property
    def pending(self) -> bool:
        """A request never answered (yet)."""
        return self.category == "request" and self.paired is None


def message_category(message: dict[str, Any] | None) -> Category:
    """What one JSON-RPC message is (None: a line that was not a message). Every view of
    the traffic (the inspector, the message table, the lab) names messages with this."""
    if message is None:
        return "invalid"
    if "method" in message:
        return "request" if "id" in message else "notification"
    return "error" if "error" in message else "response"


_NONE3: tuple[None, None, None] = (None, None, None)


def _session_of(message: dict[str, Any]) -> str | None:
    for key in ("params", "result"):
        body = message.get(key)
        if isinstance(body, dict) and isinstance(body.get("sessionId"), str):
            return str(body["sessionId"])
    return None


def _update_kind(message: dict[str, Any]) -> str | None:
    params = message.get("params")
    update = params.get("update") if isinstance(params, dict) else None
    kind = update.get("sessionUpdate") if isinstance(update, dict) else None
    return kind if isinstance(kind, str) else None


class TimelineBuilder:
    """Rows built as messages come, for a view that follows a bounded log: :meth:`sync`
    adds only the messages it has not seen and forgets the rows the log dropped, so a
    refresh costs what arrived since the last one, not the whole log. Rows hold the log's
    own events (nothing is copied)."""

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self._rows: dict[int, Row] = {}
        #: (agent, channel, direction of the request, id) -> the request's row (kept when
        #: the log drops it, so its late answer still names its method)
        self._open: dict[tuple[str, str, str, str], Row] = {}
        self._flags: dict[int, list[str]] = {}
        #: Messages numbered so far (dropped ones included).
        self.total = 0
        self.dropped = 0
        self.dropped_bytes = 0

    def add(self, agent: str, event: TraceEvent) -> Row:
        self.total += 1
        row = self._row(self.total, agent, event)
        self._rows[row.number] = row
        return row

    def _row(self, number: int, agent: str, event: TraceEvent) -> Row:
        message = event.message
        category = message_category(message)
        if message is None:
            return Row(number, agent, event, category, None, None, None, None)
        if event.channel == DECISION:
            tool = message.get("tool")
            return Row(number, agent, event, "decision", str(tool) if tool else None, *_NONE3)
        method = message.get("method")
        method = method if isinstance(method, str) else None
        request_id = json.dumps(message["id"]) if "id" in message else None
        session = _session_of(message)
        kind = _update_kind(message) if method == "session/update" else None
        row = Row(number, agent, event, category, method, kind, session, request_id)
        if category == "request" and request_id is not None:
            self._open[(agent, event.channel, event.direction, request_id)] = row
        elif category in ("response", "error") and request_id is not None:
            other = "recv" if event.direction == "send" else "send"
            request = self._open.pop((agent, event.channel, other, request_id), None)
            if request is not None:
                latency = max(0.0, event.time - request.event.time)
                if request.number in self._rows:
                    self._rows[request.number] = replace(request, paired=number, latency=latency)
                row = replace(
                    row,
                    method=request.method,
                    session_id=session or request.session_id,
                    paired=request.number,
                    latency=latency,
                )
        return row

    def sync(
        self, events: Sequence[tuple[str, TraceEvent]], dropped: int = 0, dropped_bytes: int = 0
    ) -> int:
        """Catch up with a log that holds ``events`` after ``dropped`` earlier messages;
        returns how many rows were added."""
        if dropped + len(events) < self.total:  # a new log: start again
            self._reset()
        self.total = max(self.total, dropped)
        added = 0
        for agent, event in events[self.total - dropped :]:
            self.add(agent, event)
            added += 1
        if dropped > self.dropped:
            for number in [n for n in self._rows if n <= dropped]:
                del self._rows[number]
                self._flags.pop(number, None)
        self.dropped, self.dropped_bytes = dropped, dropped_bytes
        return added

    def timeline(self) -> Timeline:
        """The rows as they are now (a snapshot sharing the schema checks made)."""
        return Timeline(
            list(self._rows.values()),
            dropped=self.dropped,
            dropped_bytes=self.dropped_bytes,
            flags=self._flags,
        )


class Timeline:
    """The rows of some messages, with filters, lazy schema flags and a text fallback.

    ``dropped`` / ``dropped_bytes``: what the log let go of before these messages (it is
    bounded), said wherever the timeline is shown.
    """

    def __init__(
        self,
        rows: Sequence[Row],
        *,
        dropped: int = 0,
        dropped_bytes: int = 0,
        flags: dict[int, list[str]] | None = None,
    ) -> None:
        self.rows = list(rows)
        self.dropped = dropped
        self.dropped_bytes = dropped_bytes
        #: Row number -> schema errors, filled as rows are checked (shared with filtered
        #: timelines, so a row is checked once).
        self._flags: dict[int, list[str]] = flags if flags is not None else {}

    @classmethod
    def of(
        cls,
        events: Iterable[tuple[str, TraceEvent]],
        *,
        dropped: int = 0,
        dropped_bytes: int = 0,
    ) -> Timeline:
        """The timeline of ``(agent, event)`` pairs as a message log keeps them; rows are
        numbered from ``dropped + 1`` so numbers stay the same as older messages go."""
        builder = TimelineBuilder()
        builder.sync(list(events), dropped, dropped_bytes)
        return builder.timeline()

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Any:
        return iter(self.rows)

    def row(self, number: int) -> Row:
        for row in self.rows:
            if row.number == number:
                return row
        raise IndexError(f"No message number {number} here.")

    # ------------------------------------------------------------------ filters

    def filter(
        self,
        *,
        method: str | None = None,
        kind: str | None = None,
        session: str | None = None,
        agent: str | None = None,
        category: str | None = None,
        flagged: bool | None = None,
    ) -> Timeline:
        """The rows matching every given filter. ``method`` may end with ``*`` (a prefix);
        ``flagged`` checks the rows against the schema first."""

        def wanted(row: Row) -> bool:
            return (
                (method is None or method_matches(row.method, method))
                and (kind is None or row.update_kind == kind)
                and (session is None or row.session_id == session)
                and (agent is None or row.agent == agent)
                and (category is None or row.category == category)
                and (flagged is None or bool(self.flags(row)) == flagged)
            )

        return Timeline(
            [row for row in self.rows if wanted(row)],
            dropped=self.dropped,
            dropped_bytes=self.dropped_bytes,
            flags=self._flags,
        )

    def last(self, count: int) -> Timeline:
        """The last ``count`` rows (sharing the checks made)."""
        return Timeline(
            self.rows[-count:],
            dropped=self.dropped,
            dropped_bytes=self.dropped_bytes,
            flags=self._flags,
        )

    def methods(self) -> list[str]:
        """The methods present, in first-seen order (a filter's choices)."""
        return list(dict.fromkeys(row.method for row in self.rows if row.method))

    def kinds(self) -> list[str]:
        return list(dict.fromkeys(row.update_kind for row in self.rows if row.update_kind))

    def sessions(self) -> list[str]:
        return list(dict.fromkeys(row.session_id for row in self.rows if row.session_id))

    # ------------------------------------------------------------------ validation

    def flags(self, row: Row) -> list[str]:
        """Why ``row``'s message breaks the schema (empty: it conforms, or it could not be
        checked). Checked once, on first asking."""
        found = self._flags.get(row.number)
        if found is None:
            found = self._flags[row.number] = _check(row)
        return found

    def breaking(self, *, check: int | None = None) -> Timeline:
        """The rows that break the schema, checking (once each) at most the newest ``check``
        rows not checked yet (all of them without ``check``)."""
        for row in self.rows if check is None else self.rows[-check:]:
            self.flags(row)
        return Timeline(
            [row for row in self.rows if self.checked(row) and self.flags(row)],
            dropped=self.dropped,
            dropped_bytes=self.dropped_bytes,
            flags=self._flags,
        )

    def checked(self, row: Row) -> bool:
        return row.number in self._flags

    def check_all(self) -> dict[int, list[str]]:
        """Check every row (a batch, for after a turn); the flagged rows' errors."""
        return {row.number: errors for row in self.rows if (errors := self.flags(row))}

    # ------------------------------------------------------------------ text

    def dropped_note(self) -> str:
        if not self.dropped:
            return ""
        return (
            f"{self.dropped} earlier messages ({self.dropped_bytes / (1 << 20):.1f} MB)"
            " dropped to bound memory."
        )

    def markdown(self, *, limit: int | None = None) -> str:
        """A Markdown table (the saved and headless fallback of the live view); agent strings
        are escaped. Only rows already checked show their flags (no validation here)."""
        from .formatting import md_escape

        shown = self.rows[-limit:] if limit is not None else self.rows
        lines = [f"*{self.dropped_note()}*", ""] if self.dropped else []
        if limit is not None and len(self.rows) > limit:
            lines += [f"*The last {limit} of {len(self.rows)} messages.*", ""]
        if not shown:
            return "\n".join([*lines, "*No messages.*"])
        lines += [
            "| # | from | message | method | kind | session | paired | time | schema |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for row in shown:
            cells = [md_escape(cell.replace("\n", " ")) for cell in text_cells(row, self)]
            lines.append("| " + " | ".join(cells) + " |")
        return "\n".join(lines)

    def text(self) -> str:
        lines = [self.dropped_note()] if self.dropped else []
        lines += ["  ".join(text_cells(row, self)).rstrip() for row in self.rows]
        return "\n".join(lines) or "No messages."


def text_cells(row: Row, timeline: Timeline) -> list[str]:
    """The cells of one row as text: number, sender, category (with id), method, kind,
    session, the paired row, the latency, and the schema verdict when known."""
    what = row.category + (f" {row.request_id}" if row.request_id is not None else "")
    if row.category == "decision":
        what += f" ({row.decision})"
    if row.category == "error" and row.error:
        what += f" ({row.error})"
    paired = f"#{row.paired}" if row.paired is not None else ("unanswered" if row.pending else "")
    latency = f"{row.latency * 1000:.0f} ms" if row.latency is not None else ""
    verdict = ""
    if timeline.checked(row):
        errors = timeline.flags(row)
        verdict = "; ".join(errors) if errors else "ok"
    return [
        str(row.number),
        row.sender,
        what,
        row.method or "",
        row.update_kind or "",
        row.session_id or "",
        paired,
        latency,
        verdict,
    ]


def warm_up() -> None:
    """Import the validator and build the checks most messages need: seconds the first time
    (``jsonschema`` and its format checkers), so a view calls this on a thread of its own
    and its first check on the agent loop does not stall the loop."""
    notification = {"jsonrpc": "2.0", "method": "session/update", "params": {}}
    with contextlib.suppress(ValidatorUnavailable):
        schema_errors(notification, sender="agent")


def _check(row: Row) -> list[str]:
    if row.message is None:
        return [f"not a JSON-RPC message: {row.event.invalid or ''}"[:300]]
    if row.event.abridged_from is not None:
        return []  # kept abridged (a huge message): its cut copy proves nothing
    if row.channel == DECISION:
        return []  # not a message: nothing travelled
    if row.channel != ACP:
        return mcp_errors(row.message)
    request_method = row.method if row.category in ("response", "error") else None
    try:
        sender: Literal["client", "agent"] = "client" if row.sender == "client" else "agent"
        return schema_errors(row.message, sender=sender, request_method=request_method)
    except ValidatorUnavailable:
        return []
