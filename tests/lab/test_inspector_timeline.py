"""The inspector's timeline (client/timeline.py) on recorded sessions: pairing, filters,
schema flags, spec links, bounds and the text fallback."""

from __future__ import annotations

from pathlib import Path

import pytest

from acp_notebook.client.timeline import (
    METHOD_SPEC,
    UPDATE_SPEC,
    Timeline,
    TimelineBuilder,
    spec_link,
    trace_events,
)
from acp_notebook.protocol.conformance import load_schema, method_types
from acp_notebook.protocol.jsonrpc import TraceEvent

DATA = Path(__file__).resolve().parent.parent / "data" / "inspector"

#: What tests/lab/record_traces.py planted, by row number: a words of the reason given.
PLANTED = {
    4: "'sessionId' is a required property",
    8: "'severity' is a required property",
    11: 'jsonrpc: must be "2.0"',
    13: '"done" is not one of',
    16: "'compactionId' is a required property",
    25: '"exploded" is not one of',
    34: "42 is not of type 'string'",
    59: "not a JSON-RPC message",
}


def recorded(name: str) -> Timeline:
    lines = (DATA / name).read_text(encoding="utf-8").splitlines()
    return Timeline.of(("demo", event) for event in trace_events(lines))


@pytest.fixture(scope="module")
def demo() -> Timeline:
    return recorded("demo_session.jsonl")


def test_every_request_of_the_demo_session_is_paired_with_its_response(demo: Timeline) -> None:
    requests = demo.filter(category="request")
    assert len(requests) == 14  # 8 from the client, 6 from the agent
    for request in requests:
        answer = demo.row(request.paired or 0)
        assert answer.category in ("response", "error")
        assert answer.paired == request.number
        assert answer.method == request.method
        assert answer.sender != request.sender
        assert request.latency == answer.latency and request.latency is not None
        assert request.latency >= 0


def test_agent_requests_are_paired_with_the_client_answers(demo: Timeline) -> None:
    read = demo.filter(method="fs/read_text_file")
    assert [(row.sender, row.category) for row in read] == [
        ("agent", "request"),
        ("client", "response"),
    ]
    assert read.rows[1].paired == read.rows[0].number
    assert read.rows[1].session_id == "demo-session-1"  # from its request


def test_filters_by_method_kind_session_and_category(demo: Timeline) -> None:
    assert len(demo.filter(method="session/update", kind="notice")) == 3
    assert len(demo.filter(kind="compaction_summary_chunk")) == 4
    assert {row.method for row in demo.filter(method="terminal/*")} == {
        "terminal/create",
        "terminal/wait_for_exit",
        "terminal/output",
        "terminal/release",
    }
    assert len(demo.filter(session="demo-session-1")) == len(demo) - 3  # initialize, session/new
    assert len(demo.filter(session="no-such-session")) == 0
    errors = demo.filter(category="error")
    assert len(errors) == 1
    assert errors.rows[0].method == "session/prompt"
    assert errors.rows[0].error is not None and errors.rows[0].error.startswith("-32603: ")
    assert "notice" in demo.kinds() and "tool_call" in demo.kinds()
    assert demo.sessions() == ["demo-session-1"]


def test_the_demo_session_breaks_no_schema_rule(demo: Timeline) -> None:
    assert demo.check_all() == {}
    assert len(demo.filter(flagged=True)) == 0


def test_each_planted_violation_is_flagged_with_its_reason_and_nothing_else() -> None:
    planted = recorded("planted_violations.jsonl")
    flagged = planted.check_all()
    assert sorted(flagged) == sorted(PLANTED)
    for number, reason in PLANTED.items():
        assert any(reason in error for error in flagged[number]), (number, flagged[number])
    assert [row.number for row in planted.filter(flagged=True)] == sorted(PLANTED)


def test_validation_waits_until_a_row_is_asked_about(demo: Timeline) -> None:
    fresh = Timeline(demo.rows)
    assert not any(fresh.checked(row) for row in fresh)
    fresh.markdown()
    fresh.text()
    assert not any(fresh.checked(row) for row in fresh)
    row = fresh.rows[0]
    assert fresh.flags(row) == []
    assert fresh.checked(row) and not fresh.checked(fresh.rows[1])


def test_every_method_and_update_kind_of_the_schema_has_a_spec_link() -> None:
    methods = {
        method
        for sender in ("client", "agent")
        for kind in ("request", "notification")
        for method in method_types(sender, kind)  # type: ignore[arg-type]
    }
    assert methods - set(METHOD_SPEC) == set()
    union = load_schema()["$defs"]["SessionUpdate"]
    kinds = {
        branch["properties"]["sessionUpdate"]["const"]
        for branch in union.get("oneOf", union.get("anyOf", []))
    }
    assert kinds - set(UPDATE_SPEC) == set()
    for method in methods:
        link = spec_link(method)
        assert link is not None and link.startswith("https://agentclientprotocol.com/")
    assert (
        spec_link("session/update", "notice")
        == "https://agentclientprotocol.com/rfds/session-notices"
    )
    assert spec_link("_vendor/thing") == "https://agentclientprotocol.com/protocol/v1/extensibility"
    assert spec_link("no/such/method") is None


def test_rows_link_to_the_section_defining_them(demo: Timeline) -> None:
    call = demo.filter(kind="tool_call").rows[0]
    assert call.spec == "https://agentclientprotocol.com/protocol/v1/tool-calls#creating"
    answer = demo.filter(method="session/request_permission", category="response").rows[0]
    assert answer.spec is not None and answer.spec.endswith("tool-calls#requesting-permission")


def event(direction: str, message: dict[str, object] | None, **extra: object) -> TraceEvent:
    return TraceEvent(direction, 0.0, message, **extra)  # type: ignore[arg-type]


def test_an_invented_update_kind_is_shown_with_its_kind_and_flagged() -> None:
    update = {"sessionUpdate": "hologram_update", "beam": 1}
    message = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": "s", "update": update},
    }
    timeline = Timeline.of([("a", event("recv", message))])
    row = timeline.rows[0]
    assert row.update_kind == "hologram_update" and row.spec is not None
    assert any("hologram_update" in error for error in timeline.flags(row))


def test_an_abridged_message_is_not_judged_by_its_cut_copy() -> None:
    message = {"jsonrpc": "2.0", "id": 1, "result": "… (cut)"}
    timeline = Timeline.of([("a", event("send", message, abridged_from=40 << 20))])
    assert timeline.flags(timeline.rows[0]) == []


def test_an_unanswered_request_says_so_and_numbers_follow_what_was_dropped() -> None:
    request = {
        "jsonrpc": "2.0",
        "id": 9,
        "method": "session/prompt",
        "params": {"sessionId": "s", "prompt": []},
    }
    timeline = Timeline.of([("a", event("send", request))], dropped=40, dropped_bytes=3 << 20)
    row = timeline.rows[0]
    assert row.number == 41 and row.pending
    assert "40 earlier messages (3.0 MB) dropped" in timeline.markdown()
    assert "unanswered" in timeline.text()


def test_the_markdown_fallback_escapes_what_the_agent_wrote() -> None:
    error = {"code": -1, "message": "<img src=x onerror=alert(1)> | **bold**"}
    message = {"jsonrpc": "2.0", "id": 1, "error": error}
    table = Timeline.of([("a", event("recv", message))]).markdown()
    assert "\\<img" in table and "<img" not in table.replace("\\<img", "")
    assert "**bold**" not in table
    assert table.count("\n") == 2  # header, rule, one row: the "|" did not add a cell


def test_the_markdown_fallback_can_show_the_last_rows_only(demo: Timeline) -> None:
    table = demo.markdown(limit=5)
    assert f"The last 5 of {len(demo)} messages" in table
    assert table.count("\n| ") == 5 + 1  # the rule and five rows follow the header


def test_the_builder_follows_a_bounded_log_adding_only_what_is_new() -> None:
    events = trace_events((DATA / "demo_session.jsonl").read_text().splitlines())
    log = [("demo", e) for e in events]
    builder = TimelineBuilder()
    assert builder.sync(log[:10]) == 10
    assert builder.sync(log[:10]) == 0
    # the log received 15 more messages and dropped its first 5 to stay in its bounds
    assert builder.sync(log[5:25], dropped=5, dropped_bytes=1000) == 15
    timeline = builder.timeline()
    assert [row.number for row in timeline] == list(range(6, 26))
    assert timeline.dropped == 5 and "5 earlier messages" in timeline.dropped_note()
    whole = Timeline.of(log[:25])
    pairs = [(r.paired, r.method, r.latency) for r in timeline]
    assert pairs == [(r.paired, r.method, r.latency) for r in whole.rows[5:25]]
    # messages dropped before the builder saw them are skipped, never misnumbered
    assert builder.sync(log[40:45], dropped=40) == 5
    assert [row.number for row in builder.timeline()] == list(range(41, 46))


def test_asking_for_schema_breaks_can_bound_the_rows_it_checks() -> None:
    planted = recorded("planted_violations.jsonl")
    assert [row.number for row in planted.breaking(check=30)] == [34, 59]
    assert not planted.checked(planted.row(25))
    assert [row.number for row in planted.breaking()] == sorted(PLANTED)
