"""The one record of an observed message: what a message is (its category, method, id,
``sessionUpdate`` kind, session, payload) is read from the recorded event, and a trace
line reads back as the event it recorded."""

from __future__ import annotations

import json

from acp_notebook.protocol.trace_event import DECISION, TraceEvent

SESSION = {"sessionId": "s1"}
UPDATE = {
    "jsonrpc": "2.0",
    "method": "session/update",
    "params": {**SESSION, "update": {"sessionUpdate": "plan", "entries": []}},
}


def test_an_event_says_what_its_message_is() -> None:
    prompt = TraceEvent(
        "send", 1.0, {"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": SESSION}
    )
    update = TraceEvent("recv", 1.5, UPDATE)
    answer = TraceEvent("recv", 2.0, {"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "x"}})
    failed = TraceEvent("recv", 2.0, {"jsonrpc": "2.0", "id": 4, "error": {"code": -1}})
    garbage = TraceEvent.received_invalid(b"not json")

    facts = [
        (e.category, e.method, e.id, e.update_kind, e.session_id)
        for e in (prompt, update, answer, failed, garbage)
    ]
    assert facts == [
        ("request", "session/prompt", 3, None, "s1"),
        ("notification", "session/update", None, "plan", "s1"),
        ("response", None, 3, None, None),
        ("error", None, 4, None, None),
        ("invalid", None, None, None, None),
    ]
    assert update.payload == UPDATE["params"]
    assert failed.payload == {"code": -1}
    assert garbage.invalid == "not json"


def test_a_decision_is_named_after_its_tool_and_is_no_message() -> None:
    decision = TraceEvent(
        "send", 0.0, {"tool": "run_code", "outcome": "allowed", "id": 9}, channel=DECISION
    )
    assert (decision.category, decision.method) == ("decision", "run_code")


def test_a_session_update_kind_is_read_only_from_a_session_update() -> None:
    other = {**UPDATE, "method": "session/other"}
    assert TraceEvent("recv", 0.0, other).update_kind is None


def test_a_trace_line_reads_back_as_the_event_it_records() -> None:
    event = TraceEvent("recv", 5.0, UPDATE, size=10, abridged_from=99, channel="mcp:notebook")
    line = json.dumps(event.to_json())
    assert TraceEvent.from_json(json.loads(line), 10) == event
    # A line written before channels were recorded is on the ACP connection.
    old = {"direction": "send", "time": 1.0, "message": UPDATE}
    assert TraceEvent.from_json(old).channel == "acp"
