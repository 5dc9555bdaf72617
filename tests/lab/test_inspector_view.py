"""The live inspector view (ui/inspector_view.py) on recorded sessions, driven as the agent
loop drives it: the log grows, the view is poked, rows and the chosen message follow."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from acp_notebook.client.timeline import trace_events
from acp_notebook.protocol.jsonrpc import TraceEvent
from acp_notebook.ui.inspector_view import InspectorView

DATA = Path(__file__).resolve().parent.parent / "data" / "inspector"
HOSTILE = "<img src=x onerror=alert(1)>"


class Log:
    """A message log as the view reads it: its messages and what it dropped."""

    def __init__(self, name: str | None = None) -> None:
        self.events: list[tuple[str, TraceEvent]] = []
        self.dropped = 0
        if name is not None:
            lines = (DATA / name).read_text(encoding="utf-8").splitlines()
            self.events = [("demo", event) for event in trace_events(lines)]

    def snapshot(self) -> tuple[list[tuple[str, TraceEvent]], int, int]:
        return list(self.events), self.dropped, self.dropped * 100


def run_now(fn: Any) -> None:
    fn()  # the "loop" of these tests: posted work runs at once


def view_of(log: Log) -> InspectorView:
    return InspectorView(log.snapshot, post=run_now, cwd="/project")


def numbers(view: InspectorView) -> list[int]:
    return [number for _, number in view.rows.options]


def flagged_rows(view: InspectorView) -> list[int]:
    return [number for label, number in view.rows.options if label.startswith("⚠")]


def test_every_message_is_a_row_with_its_kind_and_pairing() -> None:
    view = view_of(Log("demo_session.jsonl"))
    assert numbers(view) == list(range(1, 59))
    labels = dict((number, label) for label, number in view.rows.options)
    assert "← agent: notification  session/update  notice  demo-session-1" in labels[8]
    assert "→ client: request 0  initialize  #2" in labels[1]
    assert labels[58].startswith("✖ #58 ← agent: error 7 (-32603: ")
    assert "58 messages" in view.header.value and "1 error answers" in view.header.value


def test_filters_choose_rows_by_method_kind_and_session() -> None:
    view = view_of(Log("demo_session.jsonl"))
    assert "notice" in view.kind.options and "terminal/create" in view.method.options
    view.kind.value = "notice"
    assert numbers(view) == [8, 9, 10]
    view.kind.value = "(all)"
    view.method.value = "fs/read_text_file"
    assert numbers(view) == [34, 35]
    view.method.value = "(all)"
    view.session.value = "demo-session-1"
    assert 1 not in numbers(view) and 5 in numbers(view)


def test_choosing_a_row_shows_it_in_full_with_its_pair_and_spec_link() -> None:
    view = view_of(Log("demo_session.jsonl"))
    view.rows.value = 34
    detail = view.detail.value
    assert "fs/read_text_file" in detail and "answered by #35 after 5 ms" in detail
    assert 'href="https://agentclientprotocol.com/protocol/v1/overview#client"' in detail
    assert "&quot;path&quot;: &quot;notes.txt&quot;" in detail  # pretty JSON, portable
    assert "Conforms to the ACP v1 schema." in detail


def test_schema_breaks_are_marked_once_the_traffic_pauses_with_their_reasons() -> None:
    log = Log("planted_violations.jsonl")
    view = view_of(log)
    assert flagged_rows(view) == []  # streaming: nothing checked yet
    assert not any(view.timeline.checked(row) for row in view.timeline)
    view.refresh()  # nothing new arrived: the rows shown are checked
    assert flagged_rows(view) == [4, 8, 11, 13, 16, 25, 34, 59]
    assert "8 break the schema" in view.header.value
    view.rows.value = 25
    assert "&quot;exploded&quot; is not one of" in view.detail.value
    view.rows.value = 59
    assert "not a JSON-RPC message: not json {" in view.detail.value
    view.rows.value = None
    view.flagged.value = True
    assert numbers(view) == [4, 8, 11, 13, 16, 25, 34, 59]


def test_the_view_follows_the_log_and_says_what_it_dropped() -> None:
    full = Log("demo_session.jsonl")
    log = Log()
    log.events = full.events[:10]
    view = view_of(log)
    assert numbers(view) == list(range(1, 11))
    log.events = full.events[5:30]
    log.dropped = 5
    view.poke()
    assert numbers(view) == list(range(6, 31))
    assert (
        "5 earlier messages" in view.header.value and "dropped to bound memory" in view.header.value
    )


def test_only_the_newest_rows_are_listed() -> None:
    log = Log("demo_session.jsonl")
    view = InspectorView(log.snapshot, post=run_now, shown=20)
    assert numbers(view) == list(range(39, 59))
    assert "showing the last 20 of 58" in view.header.value


def test_agent_strings_are_escaped_in_the_detail() -> None:
    log = Log()
    update = {"sessionUpdate": "notice", "severity": "info", "title": HOSTILE}
    message = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": HOSTILE, "update": update},
    }
    log.events = [("demo", TraceEvent("recv", 0.0, message))]
    view = view_of(log)
    view.rows.value = 1
    assert HOSTILE not in view.detail.value + view.header.value
    assert "&lt;img src=x onerror=alert(1)&gt;" in view.detail.value


@pytest.mark.parametrize("name", ["demo_session.jsonl", "planted_violations.jsonl"])
def test_a_closed_view_stops_following(name: str) -> None:
    log = Log(name)
    view = view_of(log)
    view.close()
    log.events = log.events + log.events[:1]
    view.poke()
    assert len(view.rows.options) == len(log.events) - 1
