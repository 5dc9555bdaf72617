"""The timeline of a connection's JSON-RPC messages: what the live inspector, the CLI and the
step-through show, derived once from the recorded events.

Each :class:`Row` is one recorded message (the :class:`TraceEvent` itself, which says what
the message is: its direction, category, method, ``sessionUpdate`` kind, session) in its
place on the timeline: its number, its agent, the request it answers (a response is named
after that request's method and session) or the response that answered it and the time
between the two; and how it reads: who sent it to whom, the spec page that defines it.

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
from functools import cached_property
from typing import Any, Generic, Literal, TypeVar, overload

from ..protocol.conformance import ValidatorUnavailable, schema_errors
from ..protocol.trace_event import ACP, DECISION, Category, Direction, TraceEvent
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
    "check",
    "method_matches",
    "spec_link",
    "trace_events",
    "warm_up",
]


def trace_events(lines: Iterable[str]) -> list[TraceEvent]:
    """The events of a trace in the ``--trace`` format (JSON Lines), as recorded."""
    return [
        TraceEvent.from_json(json.loads(line), len(line.encode())) for line in lines if line.strip()
    ]


def method_matches(method: str | None, pattern: str) -> bool:
    """Whether ``method`` is ``pattern``, or starts with it when it ends with ``*``
    (``session/*``)."""
    name = method or ""
    return name == pattern or (pattern.endswith("*") and name.startswith(pattern[:-1]))


#: Who sent a message: the client, its agent, or the MCP server the client serves to its
#: agent (the notebook tools), which lives in the client's process.
Sender = Literal["client", "agent", "tools"]


@dataclass(frozen=True)
class Row:
    """One message of the timeline (see the module docstring). What the filters read
    (method, ``sessionUpdate`` kind, session) is read from the event once, when first asked."""

    number: int
    agent: str
    event: TraceEvent
    #: A response or error: the request it answers, when the timeline saw it.
    request: TraceEvent | None = None
    #: A request: the number of the row that answered it; a response: the request's.
    paired: int | None = None
    #: Seconds between a request and its response (on both rows).
    latency: float | None = None

    @property
    def direction(self) -> Direction:
        return self.event.direction

    @property
    def channel(self) -> str:
        return self.event.channel

    @property
    def message(self) -> dict[str, Any] | None:
        return self.event.message

    @property
    def category(self) -> Category:
        return self.event.category

    @cached_property
    def method(self) -> str | None:
        """Its method; a response's is the method of the request it answers."""
        if self.request is not None:
            return self.request.method
        return self.event.method

    @cached_property
    def update_kind(self) -> str | None:
        return self.event.update_kind

    @cached_property
    def session_id(self) -> str | None:
        """The session it concerns; a response's, when it names none, is its request's."""
        if self.event.session_id is None and self.request is not None:
            return self.request.session_id
        return self.event.session_id

    @property
    def request_id(self) -> str | None:
        """The JSON of its request id (requests and their responses)."""
        message = self.event.message
        if message is None or "id" not in message or self.event.channel == DECISION:
            return None
        return json.dumps(message["id"])

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


RowT = TypeVar("RowT", bound=Row)


class TimelineBuilder(Generic[RowT]):
    """Rows built as messages come, for a view that follows a bounded log: :meth:`sync`
    adds only the messages it has not seen and forgets the rows the log dropped, so a
    refresh costs what arrived since the last one, not the whole log. Rows hold the log's
    own events (nothing is copied); ``row``: the class of the rows (a :class:`Row` that
    reads them for someone in particular, the lab's learner)."""

    @overload
    def __init__(self: TimelineBuilder[Row]) -> None: ...
    @overload
    def __init__(self, row: type[RowT]) -> None: ...
    def __init__(self, row: type[Any] = Row) -> None:
        self._make: type[RowT] = row
        self._reset()

    def _reset(self) -> None:
        self._rows: dict[int, RowT] = {}
        #: (agent, channel, direction of the request, id) -> the request's row (kept when
        #: the log drops it, so its late answer still names its method)
        self._open: dict[tuple[str, str, str, str], RowT] = {}
        self._flags: dict[int, list[str]] = {}
        #: Messages numbered so far (dropped ones included).
        self.total = 0
        self.dropped = 0
        self.dropped_bytes = 0

    def add(self, agent: str, event: TraceEvent) -> RowT:
        self.total += 1
        row = self._row(self.total, agent, event)
        self._rows[row.number] = row
        return row

    def row(self, number: int) -> RowT:
        """Row ``number`` as it is now (a request's row is remade when it is answered)."""
        return self._rows[number]

    def _row(self, number: int, agent: str, event: TraceEvent) -> RowT:
        row = self._make(number, agent, event)
        category, request_id = row.category, row.request_id
        if request_id is None:
            return row
        if category == "request":
            self._open[(agent, event.channel, event.direction, request_id)] = row
        elif category in ("response", "error"):
            other = "recv" if event.direction == "send" else "send"
            request = self._open.pop((agent, event.channel, other, request_id), None)
            if request is not None:
                latency = max(0.0, event.time - request.event.time)
                if request.number in self._rows:
                    self._rows[request.number] = replace(request, paired=number, latency=latency)
                row = replace(row, request=request.event, paired=request.number, latency=latency)
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
            found = self._flags[row.number] = check(row)
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


def check(row: Row) -> list[str]:
    """Why ``row``'s message breaks the schema (the ACP schema, or MCP's shape on a tools
    channel); empty: it conforms, or it could not be checked."""
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
