"""The transcript reducer: `session/update` (parsed leniently, as the connection does) → state."""

from __future__ import annotations

import copy
import io
from types import SimpleNamespace
from typing import Any

import pytest

from acp_notebook.client import entries
from acp_notebook.client import transcript as transcript_module
from acp_notebook.client.render import Renderer
from acp_notebook.client.text_stream import TextPrinter
from acp_notebook.client.toolcall import CANCELLED
from acp_notebook.client.transcript import (
    MessageEntry,
    NoteEntry,
    PlanView,
    TextRun,
    ToolCallEntry,
    Transcript,
    UnknownEntry,
    select_choices,
)
from acp_notebook.protocol import models as m
from acp_notebook.protocol.text_chunk import CHUNK_UPDATES, text_chunk

CWD = "/work/project"


def update(raw: dict[str, Any]) -> Any:
    return m.parse(m.SessionUpdate, raw)


def apply(transcript: Transcript, *raws: dict[str, Any]) -> Transcript:
    for raw in raws:
        transcript.apply(update(raw))
    return transcript


def text(value: str, kind: str = "agent_message_chunk", message_id: str | None = None) -> dict:
    raw: dict[str, Any] = {"sessionUpdate": kind, "content": {"type": "text", "text": value}}
    if message_id is not None:
        raw["messageId"] = message_id
    return raw


def started() -> Transcript:
    transcript = Transcript(CWD)
    transcript.begin_turn([m.TextContentBlock(text="hello")])
    return transcript


def messages(transcript: Transcript, role: str = "agent") -> list[str]:
    return [e.text for e in transcript.entries if isinstance(e, MessageEntry) and e.role == role]


def tool_call(transcript: Transcript, tool_call_id: str) -> Any:
    return transcript.tool_calls[tool_call_id]


# --- messages -------------------------------------------------------------------------------


def test_chunks_with_the_same_message_id_form_one_message() -> None:
    transcript = apply(started(), text("Hel", message_id="m1"), text("lo", message_id="m1"))
    assert messages(transcript) == ["Hello"]
    (entry,) = [e for e in transcript.entries if isinstance(e, MessageEntry) and e.role == "agent"]
    assert entry.message_id == "m1"
    assert entry.turn == 0


def test_a_changed_message_id_starts_a_new_message() -> None:
    transcript = apply(
        started(),
        text("one", message_id="m1"),
        text("two", message_id="m2"),
        text("!", message_id="m2"),
    )
    assert messages(transcript) == ["one", "two!"]


def test_chunks_without_message_id_continue_the_current_message() -> None:
    transcript = apply(started(), text("a"), text("b"), text("c", message_id="m1"), text("d"))
    assert messages(transcript) == ["abcd"]


def test_a_title_between_two_chunks_goes_after_the_message_not_into_it() -> None:
    """fast-agent sent session_info_update between two chunks and the saved transcript read
    "…from the loopback L / *Session title: …* / LM."."""
    transcript = apply(
        started(),
        text("from the loopback L"),
        {"sessionUpdate": "session_info_update", "title": "Loopback"},
        {"sessionUpdate": "current_mode_update", "currentModeId": "code"},
        text("LM."),
    )
    kinds = [type(e).__name__ for e in transcript.entries]
    assert kinds == ["MessageEntry", "MessageEntry", "NoteEntry", "NoteEntry"]
    assert messages(transcript) == ["from the loopback LLM."]
    markdown = Renderer(transcript).turn(transcript.turns[0])
    assert "from the loopback LLM." in markdown
    assert markdown.index("LLM.") < markdown.index("Session title: Loopback.")


def test_a_message_after_the_notes_of_another_still_starts_anew() -> None:
    transcript = apply(
        started(),
        text("one", message_id="m1"),
        {"sessionUpdate": "session_info_update", "title": "T"},
        text("two", message_id="m2"),
        text("thought", "agent_thought_chunk"),
    )
    kinds = [(type(e).__name__, getattr(e, "text", "")) for e in transcript.entries[1:]]
    assert kinds == [
        ("MessageEntry", "one"),
        ("NoteEntry", "Session title: T."),
        ("MessageEntry", "two"),
        ("MessageEntry", "thought"),
    ]


def test_notes_flooding_an_open_message_are_let_go_but_the_message_is_kept() -> None:
    transcript = started()
    transcript.keep = 8
    apply(transcript, text("start "))
    for n in range(100):
        apply(transcript, {"sessionUpdate": "session_info_update", "title": f"t{n}"})
    apply(transcript, text("end"))

    assert messages(transcript) == ["start end"]
    assert len(transcript.entries) <= transcript.keep + transcript.keep // 4 + 1


def test_a_streamed_reply_prints_a_note_after_the_message_it_came_within() -> None:
    transcript = started()
    out = io.StringIO()
    session: Any = SimpleNamespace(transcript=transcript, terminal_view=None)
    printer = TextPrinter(session, out, color=False)
    apply(transcript, text("from the loopback L"))
    apply(transcript, {"sessionUpdate": "session_info_update", "title": "Loopback"})
    apply(transcript, text("LM."))
    transcript.end_turn(transcript.turns[0], stop_reason="end_turn")
    printer.close()

    assert out.getvalue() == "from the loopback LLM.\nSession title: Loopback.\n"


def test_a_role_change_starts_a_new_message() -> None:
    transcript = apply(
        started(),
        text("thinking", "agent_thought_chunk"),
        text("answer"),
        text(" more thinking", "agent_thought_chunk"),
    )
    roles = [(e.role, e.text) for e in transcript.entries if isinstance(e, MessageEntry)]
    assert roles == [
        ("user", "hello"),
        ("thought", "thinking"),
        ("agent", "answer"),
        ("thought", " more thinking"),
    ]


def test_text_merges_and_other_blocks_keep_their_place() -> None:
    image = {"type": "image", "data": "AAAA", "mimeType": "image/png"}
    transcript = apply(
        started(),
        text("before "),
        text("image"),
        {"sessionUpdate": "agent_message_chunk", "content": image},
        text("after"),
    )
    entry = transcript.entries[-1]
    assert isinstance(entry, MessageEntry)
    assert [type(item) for item in entry.items] == [TextRun, m.ImageContentBlock, TextRun]
    assert entry.text == "before imageafter"


def test_text_chunks_read_without_the_models_change_the_transcript_as_the_models_do() -> None:
    # The connection reads plain text chunks without the models (protocol/text_chunk.py).
    image = {
        "sessionUpdate": "agent_message_chunk",
        "content": {"type": "image", "data": "", "mimeType": "image/png"},
    }
    stream = [
        text("thinking", "agent_thought_chunk"),
        text("Hel", message_id="m1"),
        text("lo"),
        image,
        text(" again", message_id="m1"),
        text("new", message_id="m2"),
        text("quoted", "user_message_chunk"),
        text("", message_id="m2"),
    ]
    by_models = apply(started(), *stream)
    read_plainly = started()
    for raw in stream:
        chunk = text_chunk({"sessionId": "s", "update": raw})
        assert (chunk is None) == (raw is image)
        if chunk is None:
            read_plainly.apply(update(raw))
        else:
            read_plainly.apply_text_chunk(chunk)
    assert _messages_in_full(read_plainly) == _messages_in_full(by_models)
    assert len(by_models.entries) == 6
    assert read_plainly.version == by_models.version


def _messages_in_full(transcript: Transcript) -> list[Any]:
    return [
        (e.role, e.message_id, e.turn, [i.text if isinstance(i, TextRun) else i for i in e.items])
        if isinstance(e, MessageEntry)
        else e
        for e in transcript.entries
    ]


def test_a_user_message_replayed_by_load_is_a_user_message() -> None:
    transcript = apply(
        Transcript(CWD), text("earlier question", "user_message_chunk"), text("reply")
    )
    assert messages(transcript, "user") == ["earlier question"]
    assert all(e.turn is None for e in transcript.entries)


def test_an_unknown_content_block_is_kept_in_the_message() -> None:
    transcript = apply(
        started(),
        {"sessionUpdate": "agent_message_chunk", "content": {"type": "hologram", "data": "?"}},
    )
    entry = transcript.entries[-1]
    assert isinstance(entry, MessageEntry)
    (item,) = entry.items
    assert isinstance(item, m.UnknownContentBlock)
    assert item.to_wire() == {"type": "hologram", "data": "?"}


# --- tool calls -----------------------------------------------------------------------------

DIFF = {"type": "diff", "path": f"{CWD}/a.py", "oldText": "x = 1\n", "newText": "x = 2\n"}
NOTE = {"type": "content", "content": {"type": "text", "text": "note"}}


def test_a_tool_call_is_created_with_its_fields() -> None:
    transcript = apply(
        started(),
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "t1",
            "title": "Edit a.py",
            "kind": "edit",
            "status": "pending",
            "content": [DIFF],
            "locations": [{"path": f"{CWD}/a.py", "line": 3}],
            "rawInput": {"path": f"{CWD}/a.py"},
        },
    )
    call = tool_call(transcript, "t1")
    assert (call.title, call.kind, call.status, call.turn) == ("Edit a.py", "edit", "pending", 0)
    assert [c.new_text for c in call.diffs] == ["x = 2\n"]
    assert [(loc.path, loc.line) for loc in call.locations] == [(f"{CWD}/a.py", 3)]
    assert call.raw_input == {"path": f"{CWD}/a.py"}
    assert [e for e in transcript.entries if isinstance(e, ToolCallEntry)] == [ToolCallEntry(call)]


def test_an_update_replaces_present_fields_and_keeps_absent_or_null_ones() -> None:
    transcript = apply(
        started(),
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "t1",
            "title": "Run tests",
            "kind": "execute",
            "rawInput": {"command": "pytest"},
            "content": [NOTE],
            "locations": [{"path": f"{CWD}/tests"}],
        },
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "t1",
            "status": "in_progress",
            "title": None,
            "kind": None,
            "content": None,
            "locations": None,
            "rawInput": None,
        },
    )
    call = tool_call(transcript, "t1")
    assert call.status == "in_progress"
    assert (call.title, call.kind) == ("Run tests", "execute")
    assert len(call.content) == 1 and len(call.locations) == 1
    assert call.raw_input == {"command": "pytest"}

    apply(
        transcript,
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "t1",
            "title": "Run the tests",
            "status": "completed",
            "rawOutput": {"exit": 0},
        },
    )
    assert (call.title, call.kind, call.status) == ("Run the tests", "execute", "completed")
    assert call.raw_output == {"exit": 0}
    assert call.raw_input == {"command": "pytest"}


def test_content_and_locations_replace_the_whole_list() -> None:
    transcript = apply(
        started(),
        {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Edit", "content": [NOTE, DIFF],
         "locations": [{"path": f"{CWD}/a.py"}, {"path": f"{CWD}/b.py"}]},
    )  # fmt: skip
    call = tool_call(transcript, "t1")
    before = call.content
    apply(
        transcript,
        {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "content": [DIFF],
         "locations": [{"path": f"{CWD}/c.py"}]},
    )  # fmt: skip
    assert [type(c) for c in call.content] == [m.DiffToolCallContent]
    assert [loc.path for loc in call.locations] == [f"{CWD}/c.py"]
    assert call.content is not before  # replaced, not mutated: views compare by identity
    apply(transcript, {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "content": []})
    assert call.content == []
    assert [loc.path for loc in call.locations] == [f"{CWD}/c.py"]


def test_a_repeated_tool_call_merges_into_the_same_entry() -> None:
    transcript = apply(
        started(),
        {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "First"},
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "t1",
            "title": "Second",
            "status": "completed",
        },
    )
    assert [e.tool_call.title for e in transcript.entries if isinstance(e, ToolCallEntry)] == [
        "Second"
    ]
    assert tool_call(transcript, "t1").status == "completed"


def test_an_update_for_an_unknown_tool_call_creates_it() -> None:
    transcript = apply(
        started(),
        {"sessionUpdate": "tool_call_update", "toolCallId": "ghost", "status": "in_progress",
         "title": "Appeared"},
    )  # fmt: skip
    call = tool_call(transcript, "ghost")
    assert (call.title, call.status, call.kind, call.turn) == (
        "Appeared",
        "in_progress",
        "other",
        0,
    )
    assert isinstance(transcript.entries[-1], ToolCallEntry)


def test_a_permission_requests_tool_call_merges_into_the_call() -> None:
    transcript = apply(
        started(),
        {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Write", "kind": "edit",
         "content": [DIFF]},
    )  # fmt: skip
    request = object()
    update_ = m.ToolCallUpdate.parse(
        {"toolCallId": "t1", "title": "Write a.py", "status": "pending"}
    )
    call = transcript.merge_permission_tool_call(update_, request)
    assert call is tool_call(transcript, "t1")
    assert call.title == "Write a.py" and call.kind == "edit" and len(call.diffs) == 1
    transcript.merge_permission_tool_call(update_, request)
    assert call.permissions == [request]


def test_a_permission_for_an_unseen_tool_call_creates_it() -> None:
    transcript = started()
    request = object()
    call = transcript.merge_permission_tool_call(
        m.ToolCallUpdate.parse({"toolCallId": "new", "title": "Run rm", "kind": "execute"}), request
    )
    assert transcript.tool_calls["new"] is call
    assert (call.title, call.kind, call.permissions) == ("Run rm", "execute", [request])
    assert isinstance(transcript.entries[-1], ToolCallEntry)


def test_ending_a_turn_cancelled_marks_its_unfinished_tool_calls() -> None:
    transcript = started()
    record = transcript.turns[0]
    apply(
        transcript,
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "running",
            "title": "a",
            "status": "in_progress",
        },
        {"sessionUpdate": "tool_call", "toolCallId": "done", "title": "b", "status": "completed"},
        {"sessionUpdate": "tool_call", "toolCallId": "broken", "title": "c", "status": "failed"},
    )
    transcript.end_turn(record, stop_reason="cancelled")
    statuses = {k: v.status for k, v in transcript.tool_calls.items()}
    assert statuses == {"running": CANCELLED, "done": "completed", "broken": "failed"}


def test_ending_a_turn_normally_leaves_tool_calls_alone() -> None:
    transcript = started()
    apply(transcript, {"sessionUpdate": "tool_call", "toolCallId": "t", "title": "a"})
    transcript.end_turn(transcript.turns[0], stop_reason="end_turn")
    assert tool_call(transcript, "t").status == "pending"
    assert transcript.turns[0].finished


def test_marking_cancelled_only_touches_the_given_turn() -> None:
    transcript = started()
    apply(transcript, {"sessionUpdate": "tool_call", "toolCallId": "old", "title": "a"})
    transcript.end_turn(transcript.turns[0], stop_reason="end_turn")
    transcript.begin_turn([m.TextContentBlock(text="again")])
    apply(transcript, {"sessionUpdate": "tool_call", "toolCallId": "new", "title": "b"})
    transcript.mark_unfinished_cancelled(1)
    assert tool_call(transcript, "old").status == "pending"
    assert tool_call(transcript, "new").status == CANCELLED


# --- plan -----------------------------------------------------------------------------------


def plan(*entries: tuple[str, str]) -> dict:
    return {
        "sessionUpdate": "plan",
        "entries": [{"content": c, "priority": "medium", "status": s} for c, s in entries],
    }


def test_a_plan_update_replaces_the_whole_plan() -> None:
    transcript = apply(
        started(),
        plan(("read", "completed"), ("edit", "in_progress"), ("test", "pending")),
        plan(("edit", "completed")),
    )
    assert [(e.content, e.status) for e in transcript.plan] == [("edit", "completed")]
    views = [e for e in transcript.entries if isinstance(e, PlanView)]
    assert len(views) == 1 and views[0].entries == transcript.plan


def test_each_turn_shows_its_own_plan() -> None:
    transcript = apply(started(), plan(("one", "pending")))
    transcript.end_turn(transcript.turns[0], stop_reason="end_turn")
    transcript.begin_turn([m.TextContentBlock(text="next")])
    apply(transcript, plan(("two", "pending")))
    views = [
        (e.turn, [x.content for x in e.entries])
        for e in transcript.entries
        if isinstance(e, PlanView)
    ]
    assert views == [(0, ["one"]), (1, ["two"])]


# --- session state --------------------------------------------------------------------------


def test_available_commands_are_replaced() -> None:
    transcript = apply(
        started(),
        {"sessionUpdate": "available_commands_update",
         "availableCommands": [{"name": "a", "description": "A"}, {"name": "b", "description": "B"}]},
        {"sessionUpdate": "available_commands_update",
         "availableCommands": [{"name": "c", "description": "C", "input": {"hint": "what"}}]},
    )  # fmt: skip
    assert [c.name for c in transcript.commands] == ["c"]


def test_mode_changes_by_the_agent_are_noted_with_the_mode_name() -> None:
    transcript = started()
    transcript.set_modes(
        m.SessionModeState.parse(
            {"currentModeId": "ask", "availableModes": [{"id": "ask", "name": "Ask"},
                                                          {"id": "code", "name": "Code"}]}
        )
    )  # fmt: skip
    assert transcript.current_mode_id == "ask"
    apply(
        transcript,
        {"sessionUpdate": "current_mode_update", "currentModeId": "code"},
        {"sessionUpdate": "current_mode_update", "currentModeId": "code"},
        {"sessionUpdate": "current_mode_update", "currentModeId": "mystery"},
    )
    assert transcript.current_mode_id == "mystery"
    notes = [e.text for e in transcript.entries if isinstance(e, NoteEntry)]
    assert notes == ["Mode changed to Code.", "Mode changed to mystery."]


def test_a_mode_change_sent_as_mode_and_as_config_option_is_noted_once() -> None:
    # spec: an agent whose modes are also a config option (category `mode`) announces one
    # change with both `current_mode_update` and `config_option_update`.
    transcript = started()
    modes = {"currentModeId": "ask", "availableModes": [{"id": "ask", "name": "Ask"},
                                                          {"id": "code", "name": "Code"}]}
    option = {"id": "mode", "name": "Mode", "type": "select", "category": "mode",
              "options": [{"value": "ask", "name": "Ask"}, {"value": "code", "name": "Code"}]}
    transcript.set_modes(m.SessionModeState.parse(modes))
    transcript.set_config_options(m.parse(list[m.SessionConfigOption], [{**option, "currentValue": "ask"}]))
    apply(
        transcript,
        {"sessionUpdate": "current_mode_update", "currentModeId": "code"},
        {"sessionUpdate": "config_option_update", "configOptions": [{**option, "currentValue": "code"}]},
        {"sessionUpdate": "config_option_update", "configOptions": [{**option, "currentValue": "ask"}]},
        {"sessionUpdate": "current_mode_update", "currentModeId": "ask"},
        {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "and back"}},
        {"sessionUpdate": "current_mode_update", "currentModeId": "code"},
    )  # fmt: skip
    notes = [e.text for e in transcript.entries if isinstance(e, NoteEntry)]
    assert notes == ["Mode changed to Code.", "Mode changed to Ask.", "Mode changed to Code."]


CONFIG = [
    {
        "id": "model",
        "name": "Model",
        "type": "select",
        "category": "model",
        "currentValue": "small",
        "options": [
            {"group": "fast", "name": "Fast", "options": [{"value": "small", "name": "Small"}]},
            {"group": "big", "name": "Capable", "options": [{"value": "large", "name": "Large"}]},
        ],
    },
    {
        "id": "effort",
        "name": "Effort",
        "type": "select",
        "currentValue": "low",
        "options": [{"value": "low", "name": "Low"}, {"value": "high", "name": "High"}],
    },
    {"id": "verbose", "name": "Verbose", "type": "boolean", "currentValue": False},
]


def config(**values: Any) -> list[dict[str, Any]]:
    options = [dict(o) for o in CONFIG]
    for option in options:
        if option["id"] in values:
            option["currentValue"] = values[option["id"]]
    return options


def test_config_options_set_quietly_then_changes_are_noted_by_display_name() -> None:
    transcript = started()
    transcript.set_config_options(m.parse(list[m.SessionConfigOption], config()))
    assert [o.id for o in transcript.config_options] == ["model", "effort", "verbose"]
    assert not [e for e in transcript.entries if isinstance(e, NoteEntry)]
    apply(
        transcript,
        {"sessionUpdate": "config_option_update", "configOptions": config(model="large", verbose=True)},
        {"sessionUpdate": "config_option_update", "configOptions": config(model="large", verbose=True, effort="high")},
    )  # fmt: skip
    notes = [e.text for e in transcript.entries if isinstance(e, NoteEntry)]
    assert notes == ["Model changed to Large.", "Verbose changed to on.", "Effort changed to High."]
    model = transcript.config_options[0]
    assert isinstance(model, m.SessionConfigOptionSelect)
    assert [c.value for c in select_choices(model)] == ["small", "large"]
    assert transcript.config_options[2].current_value is True


def test_an_unknown_config_option_type_is_kept_without_breaking_others() -> None:
    transcript = started()
    apply(
        transcript,
        {"sessionUpdate": "config_option_update",
         "configOptions": [*config(), {"id": "temp", "name": "Temperature", "type": "slider", "currentValue": 0.3}]},
    )  # fmt: skip
    assert len(transcript.config_options) == 4
    assert isinstance(transcript.config_options[3], m.UnknownSessionConfigOption)


def test_the_title_is_set_and_cleared_with_null() -> None:
    transcript = apply(
        started(),
        {"sessionUpdate": "session_info_update", "title": "Fix the bug"},
        {"sessionUpdate": "session_info_update", "updatedAt": "2026-01-01T00:00:00Z"},
        {"sessionUpdate": "session_info_update", "title": "Fix the bug"},
    )
    assert transcript.title == "Fix the bug"
    assert transcript.updated_at == "2026-01-01T00:00:00Z"
    apply(transcript, {"sessionUpdate": "session_info_update", "title": None})
    assert transcript.title is None
    notes = [e.text for e in transcript.entries if isinstance(e, NoteEntry)]
    assert notes == ["Session title: Fix the bug.", "Session title cleared."]


def test_usage_is_kept_even_with_used_null() -> None:
    transcript = apply(started(), {"sessionUpdate": "usage_update", "used": None, "size": 200000})
    assert transcript.usage is not None
    assert (transcript.usage.used, transcript.usage.size) == (None, 200000)
    apply(
        transcript,
        {"sessionUpdate": "usage_update", "used": 1200, "size": 200000,
         "cost": {"amount": 0.25, "currency": "USD"}},
    )  # fmt: skip
    usage = transcript.usage
    assert (usage.used, usage.size, usage.cost_amount, usage.cost_currency) == (
        1200,
        200000,
        0.25,
        "USD",
    )


def test_unknown_updates_are_kept_raw() -> None:
    raw = {"sessionUpdate": "teleport", "destination": {"x": 1}}
    transcript = apply(started(), raw, {"sessionUpdate": 42, "what": "no tag"})
    unknown = [e for e in transcript.entries if isinstance(e, UnknownEntry)]
    assert [(e.kind, e.raw, e.turn) for e in unknown] == [
        ("teleport", raw, 0),
        ("?", {"sessionUpdate": 42, "what": "no tag"}, 0),
    ]


# --- turns ----------------------------------------------------------------------------------


def test_updates_before_any_turn_belong_to_no_turn() -> None:
    transcript = apply(Transcript(CWD), text("welcome"))
    assert transcript.current_turn is None
    assert transcript.entries[0].turn is None


def test_late_updates_after_a_turn_go_to_the_last_turn() -> None:
    transcript = started()
    transcript.end_turn(transcript.turns[0], stop_reason="end_turn")
    second = transcript.begin_turn([m.TextContentBlock(text="second")])
    apply(transcript, text("reply", message_id="r1"))
    transcript.end_turn(second, stop_reason="end_turn")
    apply(
        transcript,
        text(" late", message_id="r1"),
        {"sessionUpdate": "tool_call_update", "toolCallId": "late-call", "status": "completed"},
    )
    assert transcript.current_turn == 1
    assert [e.text for e in transcript.entries_of(1) if isinstance(e, MessageEntry)] == [
        "second",
        "reply late",
    ]
    assert tool_call(transcript, "late-call").turn == 1
    assert transcript.entries_of(0)[0].text == "hello"


def test_begin_turn_records_the_prompt_as_a_user_message() -> None:
    transcript = Transcript(CWD)
    record = transcript.begin_turn(
        [m.TextContentBlock(text="look at "),
         m.ResourceLinkContentBlock(uri="file:///x.py", name="x.py")]
    )  # fmt: skip
    assert record.index == 0 and not record.finished
    (entry,) = transcript.entries
    assert isinstance(entry, MessageEntry) and entry.role == "user" and entry.turn == 0
    assert len(entry.items) == 2


def test_every_change_notifies_listeners_and_bumps_the_version() -> None:
    transcript = started()
    seen: list[int] = []
    unsubscribe = transcript.subscribe(lambda t: seen.append(t.version))

    def broken(_: Transcript) -> None:
        raise RuntimeError("a failing view must not stop the others")

    transcript.subscribe(broken)
    before = transcript.version
    apply(transcript, text("a"), text("b"))
    assert seen == [before + 1, before + 2]
    unsubscribe()
    apply(transcript, text("c"))
    assert seen == [before + 1, before + 2]
    assert transcript.version == before + 3


def test_the_same_updates_give_the_same_state() -> None:
    raws = [
        text("a", message_id="1"),
        {"sessionUpdate": "tool_call", "toolCallId": "t", "title": "x", "content": [DIFF]},
        plan(("p", "pending")),
        {"sessionUpdate": "weird"},
        {"sessionUpdate": "tool_call_update", "toolCallId": "t", "status": "completed"},
    ]
    first, second = apply(started(), *raws), apply(started(), *raws)
    assert repr(first.entries) == repr(second.entries)


@pytest.mark.parametrize("stop", ["refusal", "max_tokens", "max_turn_requests"])
def test_other_stop_reasons_also_close_unfinished_tool_calls(stop: str) -> None:
    transcript = started()
    apply(transcript, {"sessionUpdate": "tool_call", "toolCallId": "t", "title": "a"})
    transcript.end_turn(transcript.turns[0], stop_reason=stop)
    assert tool_call(transcript, "t").status == CANCELLED


@pytest.mark.parametrize("bounded", [False, True])
def test_the_text_from_an_offset_is_that_slice_of_the_whole_text(
    bounded: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A printer following a reply reads only what arrived since (client/text_stream.py).
    if bounded:  # small bounds, so the run drops its middle along the way
        monkeypatch.setattr(entries, "TEXT_RUN_HEAD", 10)
        monkeypatch.setattr(entries, "TEXT_RUN_TAIL", 8)
    message = MessageEntry("agent", None, 0)
    image = m.ImageContentBlock(data="", mime_type="image/png")
    for n in range(40):
        if n == 25:
            message.append(image)
        message.append_text(f"chunk{n} " if n % 7 else "")
        whole = copy.deepcopy(message)  # joining its text must not join the parts read here
        text = whole.text
        for start in range(len(text) + 3):
            assert message.text_from(start) == text[start:]
        lengths = [i.length for i in message.items if isinstance(i, TextRun)]
        assert lengths == [len(i.text) for i in whole.items if isinstance(i, TextRun)]
    runs = [item for item in message.items if isinstance(item, TextRun)]
    assert len(runs) == 2 and (runs[0].dropped > 0) == bounded
    # unbounded, the parts stay as they arrived (bounded, each trim joins them)
    assert (len(runs[1].parts) > 1) != bounded


def test_every_chunk_update_read_without_the_models_has_a_role() -> None:
    assert set(transcript_module._ROLES) == CHUNK_UPDATES
