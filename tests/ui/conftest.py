"""Fixtures for the widget tests: a recording comm, transcripts built from real models,
and a session/turn pair without a connection.

The recording comm replaces ``comm.create_comm`` the way ipywidgets' own tests do
(``ipywidgets/widgets/tests/utils.py``), so every ``comm_open`` and every state update a
widget would send to the browser is kept, with its JSON size.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import comm
import pytest
from markdown_it import MarkdownIt

from acp_notebook.client.elicitation import ElicitationBroker
from acp_notebook.client.permission_request import PermissionRequest
from acp_notebook.client.permissions import PermissionBroker
from acp_notebook.client.session import PromptTurn
from acp_notebook.client.terminals import TerminalSnapshot
from acp_notebook.client.transcript import MessageEntry, Transcript, TurnRecord
from acp_notebook.protocol import models as m
from acp_notebook.ui import layouts

CWD = "/work/proj"


@dataclass
class Message:
    kind: str  # "open", "update", "close"
    comm_id: str
    data: Any

    @property
    def size(self) -> int:
        return len(json.dumps(self.data, separators=(",", ":"), default=str))


@dataclass
class Wire:
    """Every message the widgets sent, in order."""

    messages: list[Message] = field(default_factory=list)

    def mark(self) -> int:
        return len(self.messages)

    def since(self, mark: int) -> list[Message]:
        return self.messages[mark:]

    def bytes_since(self, mark: int = 0) -> int:
        return sum(msg.size for msg in self.messages[mark:])

    def updates_since(self, mark: int = 0) -> list[Message]:
        return [msg for msg in self.messages[mark:] if msg.kind == "update"]


class RecordingComm:
    kernel = "recording"  # ipywidgets only sends when the comm has a kernel

    def __init__(self, wire: Wire, data: Any = None, **kwargs: Any) -> None:
        self.comm_id = kwargs.get("comm_id") or uuid.uuid4().hex
        self._wire = wire
        wire.messages.append(Message("open", self.comm_id, data))

    def open(self, *args: Any, **kwargs: Any) -> None:
        pass

    def on_msg(self, callback: Any) -> None:
        pass

    def send(self, data: Any = None, buffers: Any = None, **kwargs: Any) -> None:
        self._wire.messages.append(Message("update", self.comm_id, data))

    def close(self, *args: Any, **kwargs: Any) -> None:
        self._wire.messages.append(Message("close", self.comm_id, None))


@pytest.fixture
def wire(monkeypatch: pytest.MonkeyPatch) -> Wire:
    """The messages of every widget made from now on; the shared layouts and styles are
    made anew (on this wire), as in a fresh kernel."""
    recorded = Wire()
    monkeypatch.setattr(comm, "create_comm", lambda **kwargs: RecordingComm(recorded, **kwargs))
    monkeypatch.setattr(layouts, "_models", {})
    monkeypatch.setattr(layouts, "_ids", set())
    return recorded


# ---------------------------------------------------------------------------- models


def text(value: str) -> m.TextContentBlock:
    return m.TextContentBlock(text=value)


def agent_chunk(value: str, message_id: str | None = None) -> m.AgentMessageChunk:
    return m.AgentMessageChunk(content=text(value), message_id=message_id)


def thought_chunk(value: str) -> m.AgentThoughtChunk:
    return m.AgentThoughtChunk(content=text(value))


def update(raw: dict[str, Any]) -> Any:
    """A `session/update` payload parsed the way the client parses it (leniently)."""
    return m.parse(m.SessionUpdate, raw)


def tool_call(tool_call_id: str, title: str, kind: str = "other", **fields: Any) -> Any:
    return update(
        {
            "sessionUpdate": "tool_call",
            "toolCallId": tool_call_id,
            "title": title,
            "kind": kind,
            **fields,
        }
    )


def tool_update(tool_call_id: str, **fields: Any) -> Any:
    return update({"sessionUpdate": "tool_call_update", "toolCallId": tool_call_id, **fields})


def diff_item(path: str, old: str | None, new: str) -> dict[str, Any]:
    item: dict[str, Any] = {"type": "diff", "path": path, "newText": new}
    if old is not None:
        item["oldText"] = old
    return item


OPTIONS = [
    {"optionId": "yes", "name": "Yes, run it", "kind": "allow_once"},
    {"optionId": "always", "name": "Always allow `make`", "kind": "allow_always"},
    {"optionId": "no", "name": "No", "kind": "reject_once"},
    {"optionId": "never", "name": "Never", "kind": "reject_always"},
]


# ---------------------------------------------------------------------------- session


class FakeSession:
    """What the views read of a ``Session``, without an agent behind it."""

    def __init__(self, cwd: str = CWD) -> None:
        self.transcript = Transcript(cwd)
        self.permissions = PermissionBroker(
            "ask", interactive=True, on_change=lambda _r: self.transcript.changed()
        )
        self.elicitations = ElicitationBroker(
            interactive=True, on_change=lambda _r: self.transcript.changed()
        )
        self.turns: list[PromptTurn] = []
        self.terminals: dict[str, TerminalSnapshot] = {}
        #: How the agent runs, as the turn's header says it.
        self.sandbox = ""

    def terminal_view(self, terminal_id: str) -> TerminalSnapshot | None:
        return self.terminals.get(terminal_id)

    # -- driving it like Session does -------------------------------------------------

    def submit(self, prompt: str = "Do the thing") -> PromptTurn:
        turn = PromptTurn(self, [text(prompt)], timeout=None)  # type: ignore[arg-type]
        self.turns.append(turn)
        return turn

    def start(self, turn: PromptTurn) -> TurnRecord:
        turn.state = "running"
        turn.started = time.monotonic()
        turn.record = self.transcript.begin_turn(turn.blocks)
        return turn.record

    def end(
        self, turn: PromptTurn, stop_reason: str | None = "end_turn", error: str | None = None
    ) -> None:
        assert turn.record is not None
        turn.stop_reason = stop_reason
        turn.error = error
        self.transcript.end_turn(turn.record, stop_reason=stop_reason, error=error)
        turn._finish()

    def request_permission(
        self, tool_call: dict[str, Any], options: list[dict[str, Any]] = OPTIONS
    ) -> PermissionRequest:
        """What ``Session.request_permission`` does before it waits for the answer."""
        params = m.RequestPermissionRequest.parse(
            {"sessionId": "s1", "toolCall": tool_call, "options": options}
        )
        cwd = self.transcript.cwd or CWD
        return self.permissions.receive(
            params, self.transcript, cwd=cwd, roots=[cwd], sandbox=self.sandbox
        )


@pytest.fixture
def session() -> FakeSession:
    return FakeSession()


class Poster:
    """``post`` for tests: queues functions; ``run()`` plays the agent loop."""

    def __init__(self, immediate: bool = False) -> None:
        self.immediate = immediate
        self.queue: list[Callable[[], Any]] = []
        self.posted = 0

    def __call__(self, fn: Callable[[], Any]) -> None:
        self.posted += 1
        if self.immediate:
            fn()
        else:
            self.queue.append(fn)

    def run(self) -> int:
        ran = 0
        while self.queue:
            self.queue.pop(0)()
            ran += 1
        return ran


@pytest.fixture
def post() -> Poster:
    return Poster()


class FakeClock:
    """``schedule_later`` with a clock that only moves when the test says so."""

    def __init__(self) -> None:
        self.now = 0.0
        self.timers: list[tuple[float, int, Callable[[], None]]] = []
        self._seq = 0

    def schedule_later(self, delay: float, fn: Callable[[], None]) -> Any:
        self._seq += 1
        entry = (self.now + delay, self._seq, fn)
        self.timers.append(entry)
        clock = self

        class Handle:
            def cancel(self) -> None:
                if entry in clock.timers:
                    clock.timers.remove(entry)

        return Handle()

    def advance(self, seconds: float) -> None:
        end = self.now + seconds
        while True:
            due = sorted(t for t in self.timers if t[0] <= end)
            if not due:
                break
            when, seq, fn = due[0]
            self.timers.remove((when, seq, fn))
            self.now = when
            fn()
        self.now = end


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def message(transcript: Transcript, index: int = -1) -> MessageEntry:
    entry = transcript.entries[index]
    assert isinstance(entry, MessageEntry)
    return entry


#: How JupyterLab renders a trusted output's Markdown: CommonMark, raw HTML allowed, and
#: any link followed (marked has no ``javascript:`` filter).
FRONTEND_MARKDOWN = MarkdownIt("commonmark")
FRONTEND_MARKDOWN.validateLink = lambda url: True  # type: ignore[method-assign]


def html_of(widget: Any) -> Iterator[str]:
    """Every HTML value in a widget tree, in order (what the browser would show): an
    ``Output`` widget's Markdown as the frontend renders it."""
    value = getattr(widget, "value", None)
    if isinstance(value, str) and type(widget).__name__ == "HTML":
        yield value
    for output in getattr(widget, "outputs", ()) or ():
        markdown = output.get("data", {}).get("text/markdown")
        if markdown is not None:
            yield FRONTEND_MARKDOWN.render(markdown)
    for child in getattr(widget, "children", ()) or ():
        yield from html_of(child)


def all_html(widget: Any) -> str:
    return "\n".join(html_of(widget))
