"""Permission prompts: say what is approved, label buttons exactly as the agent did,
route clicks through ``post``, and show the decision."""

from __future__ import annotations

import threading

import pytest

from acp_notebook.ui.attention import (
    BEACON,
    CANCEL_CLASS,
    CARD_CLASS,
    OPTION_CLASS,
    REJECT_CLASS,
    TURN_CLASS,
)
from acp_notebook.ui.permission import PermissionPrompt
from acp_notebook.ui.turn import TurnView

from .conftest import CWD, OPTIONS, FakeSession, Poster, diff_item


def prompt_for(
    session: FakeSession, post: Poster, tool: dict | None = None, options: list | None = None
) -> PermissionPrompt:
    turn = session.submit()
    session.start(turn)
    request = session.request_permission(
        tool
        or {
            "toolCallId": "t1",
            "title": "Run the tests",
            "kind": "execute",
            "rawInput": {"command": "make test"},
        },
        options or OPTIONS,
    )
    call = session.transcript.tool_calls[request.tool_call_id]
    return PermissionPrompt(request, call, broker=session.permissions, post=post, cwd=CWD)


def test_buttons_carry_the_agents_names_and_are_styled_by_kind(session: FakeSession, post: Poster):
    prompt = prompt_for(session, post)
    buttons = list(prompt.buttons.values())
    assert [b.description for b in buttons] == ["Yes, run it", "Always allow `make`", "No", "Never"]
    assert [b.button_style for b in buttons] == ["success", "warning", "danger", "danger"]
    assert [b.tooltip.split(":")[0] for b in buttons] == [
        "allow_once",
        "allow_always",
        "reject_once",
        "reject_always",
    ]
    assert not any(b.disabled for b in buttons)


def test_the_question_says_what_is_approved(session: FakeSession, post: Poster):
    prompt = prompt_for(session, post)
    assert "Run the tests" in prompt.question and "execute" in prompt.question
    assert "make test</span>" in prompt.question  # the command, as code


def test_an_edit_names_its_files_and_points_at_the_diffs(session: FakeSession, post: Poster):
    prompt = prompt_for(
        session,
        post,
        {
            "toolCallId": "t2",
            "title": "Apply edits",
            "kind": "edit",
            "content": [
                diff_item(f"{CWD}/a.py", "1", "2"),
                diff_item(f"{CWD}/lib/b.py", None, "x"),
            ],
        },
    )
    assert "Edit" in prompt.question and "a.py" in prompt.question and "lib/b.py" in prompt.question
    assert "see the diffs above" in prompt.question and CWD not in prompt.question


def test_a_command_named_only_in_the_title_is_shown_as_the_command(
    session: FakeSession, post: Poster
):
    # Some agents name the command only in the title, in backticks; rules and the risk
    # rating read it there too, so the prompt must show it.
    prompt = prompt_for(
        session, post, {"toolCallId": "t3", "title": "`rm -rf build`", "kind": "execute"}
    )
    assert "Run <span" in prompt.question and "rm -rf build</span>" in prompt.question
    assert "Risky: deletes files recursively" in prompt.warning


def test_an_edit_in_raw_input_names_its_files_and_points_at_the_derived_diff(
    session: FakeSession, post: Poster
):
    raw = {"file_path": f"{CWD}/src/app.py", "old_string": "a", "new_string": "b"}
    prompt = prompt_for(
        session, post, {"toolCallId": "t4", "title": "Edit", "kind": "edit", "rawInput": raw}
    )
    assert "Edit <span" in prompt.question and "src/app.py</span>" in prompt.question
    assert "see the diffs above" in prompt.question


def test_a_fetch_shows_its_url(session: FakeSession, post: Poster):
    fetch = {"toolCallId": "t5", "title": "Fetch", "kind": "fetch"}
    prompt = prompt_for(session, post, {**fetch, "rawInput": {"url": "https://x.org/a"}})
    assert "Fetch <span" in prompt.question and "https://x.org/a</span>" in prompt.question


def test_choose_only_posts_and_the_loop_then_decides_and_disables(
    session: FakeSession, post: Poster
):
    prompt = prompt_for(session, post)
    prompt.choose("always")
    assert post.posted == 1 and prompt.request.pending  # nothing decided off the loop
    assert not any(b.disabled for b in prompt.buttons.values())
    post.run()  # the agent loop runs the posted function
    assert prompt.request.state == "selected" and prompt.request.chosen is not None
    assert prompt.request.chosen.option_id == "always" and prompt.request.decided_by == "user"
    assert all(b.disabled for b in prompt.buttons.values())
    assert "Always allow `make` (chosen by user)" in prompt.decision
    assert prompt.buttons["always"].button_style == "warning"  # the choice keeps its colour
    assert prompt.buttons["yes"].button_style == ""


def test_a_click_from_another_thread_does_what_choose_does(session: FakeSession, post: Poster):
    prompt = prompt_for(session, post)
    clicker = threading.Thread(target=prompt.buttons["no"].click)  # e.g. a comm subshell thread
    clicker.start()
    clicker.join()
    assert prompt.request.pending and len(post.queue) == 1
    post.run()
    assert prompt.request.chosen is not None and prompt.request.chosen.option_id == "no"
    assert "⛔" in prompt.decision


def test_choose_rejects_an_option_the_agent_did_not_offer(session: FakeSession, post: Poster):
    prompt = prompt_for(session, post)
    with pytest.raises(ValueError, match="did not offer option 'maybe'"):
        prompt.choose("maybe")
    assert post.posted == 0


def test_a_cancelled_request_says_so_and_disables_the_buttons(session: FakeSession, post: Poster):
    prompt = prompt_for(session, post)
    session.permissions.cancel_all(by="cancel")
    prompt.refresh()
    assert all(b.disabled for b in prompt.buttons.values())
    assert "Cancelled (the turn was cancelled)" in prompt.decision


def test_after_close_clicks_are_ignored(session: FakeSession, post: Poster):
    prompt = prompt_for(session, post)
    prompt.close()
    prompt.buttons["yes"].click()
    assert post.posted == 0 and prompt.request.pending
    assert all(b.disabled for b in prompt.buttons.values())
    assert "No longer answerable" in prompt.decision


def test_a_click_after_the_loop_closed_is_dropped_quietly(session: FakeSession):
    def closed_loop(_fn):
        raise RuntimeError("Event loop is closed")

    prompt = prompt_for(session, Poster())
    prompt._post = closed_loop
    prompt.choose("yes")  # no exception reaches the kernel's comm handler
    assert prompt.request.pending


def test_a_request_decided_by_policy_shows_who_decided(session: FakeSession, post: Poster):
    prompt = prompt_for(session, post)
    session.permissions.choose(prompt.key, "yes", by="policy allow")
    prompt.refresh()
    assert "Yes, run it (chosen by policy allow)" in prompt.decision


def test_a_pending_prompt_carries_its_keys_and_finds_itself_until_answered(
    session: FakeSession, post: Poster
):
    prompt = prompt_for(session, post)
    assert CARD_CLASS in prompt.widget._dom_classes
    option_buttons = [b for b in prompt.buttons.values() if OPTION_CLASS in b._dom_classes]
    assert len(option_buttons) == 4
    # Escape presses the reject_once option, and only that one.
    assert [b.description for b in prompt.buttons.values() if REJECT_CLASS in b._dom_classes] == [
        "No"
    ]
    attention = prompt._attention.value
    assert BEACON in attention and "1–4 choose an option · Esc rejects" in attention

    prompt.choose("yes")
    post.run()
    assert prompt._attention.value == ""  # answered: nothing left to find, no keys


def test_the_beacon_script_is_constant_and_names_no_agent_text(session: FakeSession, post: Poster):
    prompt = prompt_for(
        session, post, {"toolCallId": "t9", "title": '"><img src=x onerror=alert(1)>'}
    )
    assert prompt._attention.value.count("onerror=") == 1
    assert prompt._attention.value.startswith(BEACON)
    assert "alert(1)" not in prompt._attention.value


def test_the_clients_own_question_says_the_agent_did_not_ask(session: FakeSession, post: Poster):
    prompt = prompt_for(
        session,
        post,
        {
            "toolCallId": "acp-client-1",
            "title": "The agent wants to write `notes.txt` without asking first",
            "kind": "edit",
            "rawInput": {"path": f"{CWD}/notes.txt"},
        },
        [
            {"optionId": "allow", "name": "Allow once", "kind": "allow_once"},
            {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
        ],
    )
    prompt.request.unasked = True
    prompt.refresh()
    assert "The agent did not ask" in prompt.question
    assert "without asking first" in prompt.question
    assert [b.description for b in prompt.buttons.values()] == ["Allow once", "Reject"]


def test_the_c_key_presses_the_turns_cancel_button(session: FakeSession, post: Poster):
    """The card's script finds the Cancel button of the turn around it by these classes."""
    view = TurnView(agent_label="demo", session_label="default", post=post)
    assert TURN_CLASS in view.widget._dom_classes
    assert CANCEL_CLASS in view.cancel_button._dom_classes
    assert f".{TURN_CLASS}" in BEACON and f"button.{CANCEL_CLASS}:not(:disabled)" in BEACON
    assert "C cancels the turn" in prompt_for(session, post)._attention.value
