"""The inspector's lanes picture (ui/timeline_html.py): the client, the agent and the
notebook tools as lanes, one arrow per message in time order, coloured by kind, requests
joined to their answers, the client's decision about a tool call on the tools' lane, and a
click (a ``<details>``) opening the JSON and its check; every agent string escaped."""

from __future__ import annotations

import json
import re

from acp_notebook.client.secrets import redact_event
from acp_notebook.client.timeline import Timeline, trace_events
from acp_notebook.client.trace import trace_line
from acp_notebook.notebook.inspector import MessageTable, pair_responses
from acp_notebook.protocol.jsonrpc import TraceEvent
from acp_notebook.protocol.trace_event import DECISION
from acp_notebook.ui.inspector_view import InspectorView
from acp_notebook.ui.timeline_html import lanes_html

HOSTILE = "<img src=x onerror=alert(1)>"
TOOLS = "mcp:notebook"


def event(direction: str, message: dict, channel: str = "acp", at: float = 0.0) -> TraceEvent:
    size = len(json.dumps(message))
    return TraceEvent(direction, at, message, size=size, channel=channel)  # type: ignore[arg-type]


def a_run_code_turn(code: str = "x = 1") -> list[tuple[str, TraceEvent]]:
    """A prompt during which the agent calls run_code on the notebook tools, allowed."""
    session = {"sessionId": "s1"}
    call = {"name": "run_code", "arguments": {"code": code}}
    events = [
        event(
            "send",
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "session/prompt",
                "params": {**session, "prompt": [{"type": "text", "text": "go"}]},
            },
        ),
        event("recv", {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": call}, TOOLS),
        event(
            "send",
            {
                "tool": "run_code",
                "title": "Run code",
                "outcome": "allowed",
                "by": "the policy allow",
            },
            DECISION,
        ),
        event(
            "send",
            {"jsonrpc": "2.0", "id": 7, "result": {"content": [{"type": "text", "text": "ok"}]}},
            TOOLS,
        ),
        event(
            "recv",
            {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {
                    **session,
                    "update": {
                        "sessionUpdate": "agent_message_chunk",
                        "content": {"type": "text", "text": "done"},
                    },
                },
            },
        ),
        event("recv", {"jsonrpc": "2.0", "id": 1, "result": {"stopReason": "end_turn"}}),
    ]
    return [("demo", e) for e in events]


def arrows(html: str) -> list[str]:
    """The arrows' labels, in order (what each ``<summary>`` says)."""
    found = re.findall(r"<summary[^>]*>(.*?)</summary>", html, re.S)
    return [re.sub(r"<[^>]+>", "", label) for label in found]


def test_the_tools_traffic_gets_a_third_lane_between_the_prompt_and_its_answer() -> None:
    timeline = Timeline.of(a_run_code_turn())
    html = lanes_html(timeline.rows, timeline)

    assert "client (this notebook)" in html and "notebook tools (MCP)" in html
    assert arrows(html) == [
        "#1 session/prompt (request 1) ▶",
        "#2 tools/call (request 7) ▶",
        "⚖ run_code: allowed by the policy allow",
        "◀ #4 tools/call (response 7)",
        "◀ #5 session/update agent_message_chunk (notification)",
        "◀ #6 session/prompt (response 1)",
    ]
    # The MCP call runs from the agent's lane (2nd of 3, grid lines 4) to the tools' (6).
    assert "grid-column: 4 / 6" in html
    # Each request is joined to its answer: #1..#6 on one track, #2..#4 on the next.
    assert 'title="#1 session/prompt answered by #6"' in html
    assert 'title="#2 tools/call answered by #4"' in html


def test_without_tools_traffic_two_lanes_are_drawn() -> None:
    turn = [pair for pair in a_run_code_turn() if pair[1].channel == "acp"]
    timeline = Timeline.of(turn)
    html = lanes_html(timeline.rows, timeline)
    assert "notebook tools (MCP)" not in html
    assert "repeat(4, minmax(0, 1fr))" in html  # two lanes, each two half columns


def test_a_click_opens_the_json_and_its_check_against_its_own_protocol() -> None:
    timeline = Timeline.of(a_run_code_turn())
    html = lanes_html(timeline.rows, timeline)
    opened = dict(
        re.findall(r'<details data-acp-message="(\d+)".*?</summary>(.*?)</details>', html, re.S)
    )

    assert "Conforms to the ACP v1 schema." in opened["1"]
    assert "Conforms to MCP's message types." in opened["2"]
    assert (
        "modelcontextprotocol.io/specification/2025-06-18/server/tools#calling-tools" in opened["2"]
    )
    assert "&quot;code&quot;: &quot;x = 1&quot;" in opened["2"]
    assert "nothing travelled" in opened["3"]


def test_an_mcp_message_that_breaks_mcp_types_says_why() -> None:
    bad = event(
        "recv", {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": 5}}, TOOLS
    )
    timeline = Timeline.of([("demo", bad)])
    assert timeline.flags(timeline.rows[0]) == ["params.name: Input should be a valid string"]


def test_every_agent_string_in_the_picture_is_escaped() -> None:
    hostile = a_run_code_turn(code=HOSTILE)
    hostile.append(
        (
            "demo",
            event(
                "recv",
                {"jsonrpc": "2.0", "id": 9, "method": HOSTILE, "params": {"sessionId": HOSTILE}},
            ),
        )
    )
    timeline = Timeline.of(hostile)
    html = lanes_html(timeline.rows, timeline)
    assert "<img" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html


def test_the_live_inspector_draws_the_lanes_above_its_list() -> None:
    events = a_run_code_turn()
    view = InspectorView(lambda: (events, 0, 0), post=lambda fn: fn(), cwd="/project")
    assert "notebook tools (MCP)" in view.lanes.value
    assert "⚖ run_code: allowed by the policy allow" in arrows(view.lanes.value)
    assert view.widget.children.index(view.lanes) < view.widget.children.index(view.rows)


def test_a_traced_tools_message_keeps_its_channel_through_redaction_and_a_trace_file() -> None:
    # The redactor rebuilt each event from its message alone, so the tools' messages were
    # kept as ACP ones (and drawn between the client and the agent).
    original = a_run_code_turn()[1][1]
    redacted = redact_event(original, frozenset({"secret"}))
    assert redacted.channel == TOOLS
    assert trace_events([trace_line(redacted)])[0].channel == TOOLS


def test_the_message_table_names_the_tools_as_the_party_of_their_messages() -> None:
    # acp.messages() called every sent message "client → agent": a tools/call read by
    # the notebook tools read as the client's request to the agent.
    table = MessageTable(pair_responses(a_run_code_turn()))
    arrows = [row[1] for row in table.rows()]
    assert arrows == [
        "client → agent",
        "agent → tools",
        "the client decides",
        "tools → agent",
        "agent → client",
        "agent → client",
    ]
    assert "**#2** agent → tools · request · `tools/call`" in table.step(2)._repr_markdown_()


def test_the_message_table_calls_a_decision_a_decision_and_names_its_tool() -> None:
    # acp.messages() read the client's decision about run_code as a response with no
    # method, while the timeline beside it called it a decision about run_code.
    table = MessageTable(pair_responses(a_run_code_turn()))
    assert table.rows()[2][2:4] == ("decision", "run_code")
    assert [row[2] for row in table.filter(kind="decision").rows()] == ["decision"]
