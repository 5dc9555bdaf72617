"""Session notices, context compactions and tool names: live in the turn view and saved
(Markdown, plain text and HTML), agent strings escaped."""

from __future__ import annotations

import ipywidgets as w

from acp_notebook.client.connection import client_capabilities
from acp_notebook.client.render import transcript_bundle
from acp_notebook.client.transcript import CompactionEntry, NoticeEntry, UnknownEntry
from acp_notebook.protocol.conformance import schema_errors
from acp_notebook.ui.message import CompactionView
from acp_notebook.ui.transcript_html import turn_html
from acp_notebook.ui.turn import TurnView

from .conftest import FakeSession, Poster, all_html, tool_call, update

HOSTILE = "<img src=x onerror=alert(1)>"


def notice(severity: str, title: str, description: str | None = None) -> object:
    raw = {"sessionUpdate": "notice", "severity": severity, "title": title}
    if description is not None:
        raw["description"] = description
    return update(raw)


def compaction(status: str, **fields: object) -> object:
    return update(
        {"sessionUpdate": "compaction_update", "compactionId": "c1", "status": status, **fields}
    )


def summary_chunk(text: str, compaction_id: str = "c1") -> object:
    return update(
        {
            "sessionUpdate": "compaction_summary_chunk",
            "compactionId": compaction_id,
            "content": {"type": "text", "text": text},
        }
    )


def finished_turn(session: FakeSession, *updates: object) -> dict[str, str]:
    turn = session.submit("go")
    record = session.start(turn)
    for item in updates:
        session.transcript.apply(item)  # type: ignore[arg-type]
    session.end(turn)
    bundle = transcript_bundle(session.transcript, record)
    bundle["text/html"] = turn_html(session.transcript, record)
    return bundle


def test_a_notice_is_one_line_with_its_severity_saved_and_escaped(session: FakeSession) -> None:
    bundle = finished_turn(
        session,
        notice("warning", "Context is filling up", "Compaction may follow."),
        notice("error", HOSTILE),
        notice("critical", "From the future"),
    )
    entries = [e for e in session.transcript.entries if isinstance(e, NoticeEntry)]
    assert [e.severity for e in entries] == ["warning", "error", "critical"]
    assert (
        "**⚠️ Warning:** Context is filling up — Compaction may follow." in bundle["text/markdown"]
    )
    assert "⚠️ Warning: Context is filling up — Compaction may follow." in bundle["text/plain"]
    assert "🔔 Notice (critical): From the future" in bundle["text/plain"]
    assert HOSTILE not in bundle["text/markdown"] and HOSTILE not in bundle["text/html"]
    assert "&lt;img src=x onerror=alert(1)&gt;" in bundle["text/html"]
    assert "Context is filling up" in bundle["text/html"]


def test_a_compaction_is_one_entry_patched_by_id_whose_summary_streams(
    session: FakeSession,
) -> None:
    bundle = finished_turn(
        session,
        compaction("in_progress"),
        summary_chunk("We talked about "),
        summary_chunk("**notices**."),
        compaction("completed"),
    )
    entries = [e for e in session.transcript.entries if isinstance(e, CompactionEntry)]
    assert len(entries) == 1
    assert (
        entries[0].status == "completed"
        and entries[0].summary.text == "We talked about **notices**."
    )
    assert (
        "<details" in bundle["text/markdown"] and "🗜️ Context compacted" in bundle["text/markdown"]
    )
    assert "We talked about **notices**." in bundle["text/markdown"]
    assert "🗜️ Context compacted:\n  We talked about **notices**." in bundle["text/plain"]
    assert "<details" in bundle["text/html"] and "<strong>notices</strong>" in bundle["text/html"]


def test_a_compaction_update_with_a_summary_replaces_it_and_a_failure_says_why(
    session: FakeSession,
) -> None:
    bundle = finished_turn(
        session,
        summary_chunk("draft"),  # spec: a first-seen id creates an in-progress compaction
        compaction(
            "failed", summary=[{"type": "text", "text": "final"}], error=f"out of {HOSTILE}"
        ),
    )
    (entry,) = [e for e in session.transcript.entries if isinstance(e, CompactionEntry)]
    assert entry.summary.text == "final"
    assert f"🗜️ Context compaction failed: out of {HOSTILE}" in bundle["text/plain"]
    assert HOSTILE not in bundle["text/html"] and HOSTILE not in bundle["text/markdown"]


def test_the_tool_name_is_shown_where_the_title_is_generic(session: FakeSession) -> None:
    bundle = finished_turn(
        session,
        tool_call("t1", "Tool call", "search", name="demo_lookup"),
        tool_call("t2", "Read notes.txt", "read", name="read_file"),
        tool_call("t3", "", "other", name="bare_tool"),
    )
    calls = session.transcript.tool_calls
    assert [calls[i].shown_title for i in ("t1", "t2", "t3")] == [
        "demo_lookup",
        "Read notes.txt",
        "bare_tool",
    ]
    assert "**demo_lookup** · search" in bundle["text/markdown"]
    assert "Tool call" not in bundle["text/plain"]
    assert "demo_lookup" in bundle["text/html"] and "bare_tool" in bundle["text/html"]


def test_an_invented_update_kind_is_kept_raw_and_shown(session: FakeSession) -> None:
    bundle = finished_turn(session, update({"sessionUpdate": "hologram_update", "beam": HOSTILE}))
    assert isinstance(session.transcript.entries[-1], UnknownEntry)
    assert "hologram_update" in bundle["text/plain"]
    assert HOSTILE not in bundle["text/html"]


def test_notices_and_compactions_show_live_in_the_turn(session: FakeSession, post: Poster) -> None:
    view = TurnView(agent_label="demo", session_label="default", post=post)
    turn = session.submit("go")
    session.start(turn)
    view.bind(session, turn)
    apply = session.transcript.apply
    apply(notice("info", HOSTILE, "Indexed."))  # type: ignore[arg-type]
    apply(compaction("in_progress"))  # type: ignore[arg-type]
    apply(tool_call("t1", "Tool call", "search", name="demo_lookup"))
    view.refresh()
    live = all_html(view.widget)
    assert "ℹ️ Notice:" in live and "&lt;img src=x" in live and HOSTILE not in live
    assert "demo_lookup" in live
    (card,) = [v for v in view.views if isinstance(v, CompactionView)]
    assert isinstance(card.widget, w.Accordion) and card.widget.selected_index is None
    assert card.widget.titles == ("🗜️ Compacting the context…",)
    apply(summary_chunk("Summary so far."))  # type: ignore[arg-type]
    view.refresh()
    assert "Summary so far." in all_html(card.widget)
    apply(compaction("completed"))  # type: ignore[arg-type]
    view.refresh()
    assert card.widget.titles == ("🗜️ Context compacted",)


def test_the_client_advertises_notices_and_compaction_in_a_valid_initialize() -> None:
    caps = client_capabilities().to_wire()
    assert caps["session"]["notices"] == {} and caps["session"]["compaction"] == {}
    request = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": 1, "clientCapabilities": caps},
    }
    assert schema_errors(request, sender="client") == []
