"""The turn view: status line, one child view per entry in order, footer, Cancel."""

from __future__ import annotations

import html

import ipywidgets as w

from acp_notebook.client.render import STOP_REASONS
from acp_notebook.ui import layouts
from acp_notebook.ui.entry_views import PlanWidget, StaticView
from acp_notebook.ui.message import MessageView, ThoughtView
from acp_notebook.ui.toolcall import ToolCallCard
from acp_notebook.ui.turn import TurnView

from .conftest import (
    FakeClock,
    FakeSession,
    Poster,
    Wire,
    agent_chunk,
    all_html,
    thought_chunk,
    tool_call,
    tool_update,
    update,
)


def new_view(post: Poster, **kwargs: object) -> TurnView:
    return TurnView(agent_label="demo", session_label="default", post=post, **kwargs)  # type: ignore[arg-type]


def test_status_follows_the_turn_from_start_to_finish(session: FakeSession, post: Poster):
    view = new_view(post)
    assert view.status == "Starting agent…"
    earlier = session.submit("first")
    session.start(earlier)
    turn = session.submit("second")
    view.bind(session, turn)
    assert view.status == "Queued behind 1 turn"
    session.end(earlier)
    session.start(turn)
    view.refresh()
    assert view.status == "Running"
    session.transcript.apply(tool_call("t1", "Run", "execute", rawInput={"command": "ls"}))
    session.request_permission({"toolCallId": "t1"})
    view.refresh()
    assert view.status == "Waiting for permission"
    session.permissions.choose(view.prompts[0].key, "yes")
    view.refresh()
    assert view.status == "Running"
    session.end(turn)
    view.finish()
    assert view.status == "Finished"
    assert "demo" in all_html(view.widget) and "session default" in all_html(view.widget)


def test_one_child_view_per_entry_of_this_turn_in_order(session: FakeSession, post: Poster):
    first = session.submit("earlier turn")
    session.start(first)
    session.transcript.apply(agent_chunk("not this turn"))
    session.end(first)
    turn = session.submit("Fix it")
    session.start(turn)
    apply = session.transcript.apply
    apply(thought_chunk("Hmm."))
    apply(agent_chunk("Looking."))
    apply(tool_call("t1", "Read file", "read"))
    apply(
        update(
            {
                "sessionUpdate": "plan",
                "entries": [{"content": "Read", "priority": "high", "status": "completed"}],
            }
        )
    )
    session.transcript.modes = []
    apply(update({"sessionUpdate": "session_info_update", "title": "Fixing"}))
    apply(update({"sessionUpdate": "mystery_update", "payload": {"n": 1}}))
    apply(agent_chunk("Done."))
    view = new_view(post)
    view.bind(session, turn)
    kinds = [type(v) for v in view.views]
    assert kinds == [
        MessageView,
        ThoughtView,
        MessageView,
        ToolCallCard,
        PlanWidget,
        StaticView,
        StaticView,
        MessageView,
    ]
    html = all_html(view.widget)
    assert "not this turn" not in html
    assert (
        html.index("Fix it")
        < html.index("Hmm.")
        < html.index("Looking.")
        < html.index("Read file")
        < html.index("Done.")
    )
    assert "Session title: Fixing." in html and "font-style: italic" in html
    # The unknown update: collapsed JSON, never dropped.
    assert "<details" in html and "mystery_update" in html and "&quot;n&quot;: 1" in html
    assert "“Fixing”" in html  # the title in the header


def test_refresh_with_no_change_sends_no_message(session: FakeSession, post: Poster, wire: Wire):
    turn = session.submit()
    session.start(turn)
    session.transcript.apply(tool_call("t1", "Run", "execute"))
    session.transcript.apply(agent_chunk("hello"))
    view = new_view(post)
    view.bind(session, turn)
    mark = wire.mark()
    assert view.refresh() is False
    assert wire.since(mark) == []
    session.transcript.apply(agent_chunk(" world"))
    view.refresh()
    assert len(wire.updates_since(mark)) == 1  # just the live tail of that message


def test_cancel_posts_on_cancel_and_is_disabled_when_the_turn_ends(
    session: FakeSession, post: Poster
):
    cancelled = []
    turn = session.submit()
    session.start(turn)
    view = new_view(post)
    view.on_cancel = lambda: cancelled.append(True)
    view.bind(session, turn)
    assert view.cancel_button.description == "Cancel"
    view.cancel_button.click()
    assert cancelled == [] and post.posted == 1  # only posted
    post.run()
    assert cancelled == [True] and view.status == "Cancelling…"
    session.end(turn, stop_reason="cancelled")
    view.finish()
    assert view.status == "Cancelled" and view.cancel_button.disabled
    assert html.escape(STOP_REASONS["cancelled"]) in view.footer
    view.cancel_button.click()
    view.cancel()
    assert post.posted == 1  # a finished view posts nothing


def test_cancel_is_usable_while_a_permission_prompt_is_pending(session: FakeSession, post: Poster):
    turn = session.submit()
    session.start(turn)
    session.transcript.apply(
        tool_call("t1", "Delete build", "delete", rawInput={"command": "rm -rf build"})
    )
    view = new_view(post)
    called = []
    view.on_cancel = lambda: called.append(session.permissions.cancel_all(by="cancel"))
    view.bind(session, turn)
    session.request_permission({"toolCallId": "t1"})
    view.refresh()
    assert view.pending_prompts and not view.cancel_button.disabled
    view.cancel()
    post.run()
    view.refresh()
    assert called == [1] and view.pending_prompts == []
    assert "Cancelled (the turn was cancelled)" in view.prompts[0].decision


def test_finish_shows_the_stop_reason_explained_duration_and_usage(
    session: FakeSession, post: Poster
):
    turn = session.submit()
    session.start(turn)
    view = new_view(post)
    view.bind(session, turn)
    session.transcript.apply(
        update(
            {
                "sessionUpdate": "usage_update",
                "used": 50_000,
                "size": 200_000,
                "cost": {"amount": 0.12, "currency": "USD"},
            }
        )
    )
    view.refresh()
    assert isinstance(view.gauge, w.FloatProgress)
    assert (
        view.gauge.value == 50_000
        and view.gauge.max == 200_000
        and view.gauge.layout.display is None
    )
    assert "50,000 / 200,000 tokens (25%)" in view.usage_text and "0.12 USD" in view.usage_text
    assert turn.record is not None
    turn.record.usage = {"inputTokens": 1200, "outputTokens": 340}
    session.end(turn, stop_reason="refusal")
    view.finish()
    assert view.status == "Stopped: refusal"
    assert html.escape(STOP_REASONS["refusal"]) in view.footer  # the spec's words, as saved
    assert "Tokens: 1,200 in · 340 out" in view.footer and "Took " in view.footer


def test_an_error_is_shown_in_the_footer(session: FakeSession, post: Poster):
    turn = session.submit()
    session.start(turn)
    view = new_view(post)
    view.bind(session, turn)
    session.end(turn, stop_reason=None, error="The agent exited with code 1.")
    view.finish()
    assert view.status == "Failed" and "The agent exited with code 1." in view.footer


def test_fail_before_a_turn_exists(post: Poster):
    view = new_view(post)
    view.fail("The agent `gemini` was not found on PATH; install it or pick another agent.")
    assert view.status == "Failed" and "not found on PATH" in view.footer
    assert view.cancel_button.disabled


def test_plan_is_a_checklist_with_priorities(session: FakeSession, post: Poster):
    turn = session.submit()
    session.start(turn)
    session.transcript.apply(
        update(
            {
                "sessionUpdate": "plan",
                "entries": [
                    {"content": "Read the code", "priority": "high", "status": "completed"},
                    {"content": "Fix the bug", "priority": "medium", "status": "in_progress"},
                    {"content": "Write a test", "priority": "low", "status": "pending"},
                ],
            }
        )
    )
    view = new_view(post)
    view.bind(session, turn)
    plan = next(v for v in view.views if isinstance(v, PlanWidget))
    html = plan.widget.value
    assert "✅" in html and "▶" in html and "☐" in html
    assert "<b>Fix the bug</b>" in html and "1/3 done" in html
    assert ">high<" in html and ">medium<" in html and ">low<" in html
    session.transcript.apply(
        update(
            {
                "sessionUpdate": "plan",
                "entries": [
                    {"content": "Fix the bug", "priority": "medium", "status": "completed"}
                ],
            }
        )
    )
    view.refresh()
    assert (
        "1/1 done" in plan.widget.value
        and len([v for v in view.views if isinstance(v, PlanWidget)]) == 1
    )


def test_the_thought_title_changes_once_the_agent_moves_on(session: FakeSession, post: Poster):
    turn = session.submit()
    session.start(turn)
    session.transcript.apply(thought_chunk("thinking"))
    view = new_view(post)
    view.bind(session, turn)
    thought = view.views[1]
    assert isinstance(thought, ThoughtView) and thought.title == "Thinking…"
    session.transcript.apply(agent_chunk("answer"))
    view.refresh()
    assert thought.title == "Thought"


def test_with_a_scheduler_the_view_follows_the_transcript_coalesced(
    session: FakeSession, post: Poster, clock: FakeClock, wire: Wire
):
    turn = session.submit()
    session.start(turn)
    view = new_view(post, schedule_later=clock.schedule_later, interval=0.075)
    view.bind(session, turn)
    refreshes = []
    original = view.refresh

    def counting_refresh() -> bool:
        refreshes.append(clock.now)
        return original()

    view._coalescer._callback = counting_refresh  # type: ignore[union-attr]
    for _ in range(300):  # 300 chunks in 300 ms
        session.transcript.apply(agent_chunk("word "))
        clock.advance(0.001)
    clock.advance(0.2)
    assert 3 <= len(refreshes) <= 5
    assert "word word" in all_html(view.widget)
    # A permission request is shown at once, not after the interval.
    session.transcript.apply(tool_call("t1", "Run", "execute"))
    session.request_permission({"toolCallId": "t1"})
    assert view.pending_prompts and view.status == "Waiting for permission"
    session.end(turn)
    view.finish()
    mark = wire.mark()
    session.transcript.apply(agent_chunk("late"))
    clock.advance(1.0)
    assert wire.since(mark) == []  # finished: no longer following


def test_a_request_about_an_earlier_turns_tool_call_is_still_shown(
    session: FakeSession, post: Poster
):
    first = session.submit()
    session.start(first)
    session.transcript.apply(tool_call("t1", "Old call", "execute"))
    session.end(first)
    turn = session.submit()
    session.start(turn)
    view = new_view(post)
    view.bind(session, turn)
    session.request_permission({"toolCallId": "t1", "title": "Old call again"})
    view.refresh()
    assert len(view.orphan_prompts) == 1 and view.status == "Waiting for permission"
    assert "Old call again" in all_html(view.widget)


def test_a_tool_call_card_updates_in_place(session: FakeSession, post: Poster):
    turn = session.submit()
    session.start(turn)
    session.transcript.apply(tool_call("t1", "Build", "execute", status="in_progress"))
    view = new_view(post)
    view.bind(session, turn)
    card = view.cards["t1"]
    session.transcript.apply(tool_update("t1", status="completed"))
    view.refresh()
    assert view.cards["t1"] is card and "completed" in card.header
    session.end(turn, stop_reason="cancelled")


def test_close_closes_every_comm(session: FakeSession, post: Poster, wire: Wire):
    turn = session.submit()
    session.start(turn)
    session.transcript.apply(agent_chunk("hi"))
    mark = wire.mark()
    view = new_view(post)
    view.bind(session, turn)
    opened = {msg.comm_id for msg in wire.since(mark) if msg.kind == "open"}
    view.close()
    closed = {msg.comm_id for msg in wire.since(mark) if msg.kind == "close"}
    # All but the layouts, styles and stylesheet every view of the kernel shares.
    shared = layouts.shared_ids()
    assert shared and opened - shared <= closed and not shared & closed


def test_a_queued_view_does_not_show_the_running_turns_prompts(session: FakeSession, post: Poster):
    running = session.submit("first")
    session.start(running)
    queued = session.submit("second")
    view = new_view(post)
    view.bind(session, queued)
    session.transcript.apply(tool_call("t1", "Run", "execute"))
    session.request_permission({"toolCallId": "t1"})
    view.refresh()
    assert view.prompts == [] and view.status == "Queued behind 1 turn"


def test_cancel_without_a_handler_changes_nothing(session: FakeSession, post: Poster):
    turn = session.submit()
    session.start(turn)
    view = new_view(post)
    view.bind(session, turn)
    view.cancel()
    post.run()
    assert view.status == "Running"


def test_an_awaitable_on_cancel_is_scheduled_on_the_loop(session: FakeSession):
    import asyncio

    async def main() -> list[str]:
        loop = asyncio.get_running_loop()
        done: list[str] = []

        async def cancel_turn() -> None:
            done.append("session/cancel sent")

        turn = session.submit()
        session.start(turn)
        view = TurnView("demo", "s", post=loop.call_soon_threadsafe)
        view.on_cancel = cancel_turn
        view.bind(session, turn)
        view.cancel_button.click()
        for _ in range(5):
            await asyncio.sleep(0)
        return done

    assert asyncio.run(main()) == ["session/cancel sent"]


def test_each_turn_header_names_its_own_turn(session: FakeSession, post: Poster):
    first = session.submit("Fix the parser\nand its tests")
    session.start(first)
    session.transcript.apply(update({"sessionUpdate": "session_info_update", "title": "Parser"}))
    session.end(first)
    second = session.submit("  Now the   docs  ")
    session.start(second)

    first_view, second_view = new_view(post), new_view(post)
    first_view.bind(session, first)
    second_view.bind(session, second)

    assert "“Parser”" in all_html(first_view.widget)  # the agent's title, given in turn 1
    header = all_html(second_view.widget)
    assert "“Now the docs”" in header and "Parser" not in header
