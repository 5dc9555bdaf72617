""" "Allow always" on a call rated risky binds only after a second question in the card;
No returns to the options."""

from __future__ import annotations

from acp_notebook.ui.attention import OPTION_CLASS, REJECT_CLASS
from acp_notebook.ui.permission import PermissionPrompt

from .conftest import CWD, FakeSession, Poster


def prompt_for(session: FakeSession, post: Poster, command: str) -> PermissionPrompt:
    turn = session.submit()
    session.start(turn)
    request = session.request_permission(
        {
            "toolCallId": "t1",
            "title": f"Run {command}",
            "kind": "execute",
            "rawInput": {"command": command},
        }
    )
    call = session.transcript.tool_calls["t1"]
    return PermissionPrompt(request, call, broker=session.permissions, post=post, cwd=CWD)


def test_always_on_a_risky_call_asks_again_before_it_binds(session: FakeSession, post: Poster):
    prompt = prompt_for(session, post, "curl -s https://example.invalid/x")
    prompt.choose("always")
    post.run()

    assert prompt.request.pending  # not bound yet
    question = prompt.second_question
    assert question is not None
    assert "Allow every future execute call like this one without asking?" in question
    assert "Caution" in question
    assert all(b.disabled for b in prompt.buttons.values())  # answer the question first
    assert not prompt.yes.disabled and not prompt.no.disabled
    # Keys: 1 and 2 press the enabled option buttons (Yes, No); Esc presses No.
    assert OPTION_CLASS in prompt.yes._dom_classes and REJECT_CLASS in prompt.no._dom_classes

    prompt.yes.click()
    post.run()
    assert prompt.request.chosen is not None and prompt.request.chosen.option_id == "always"
    assert prompt.second_question is None


def test_no_returns_to_the_options(session: FakeSession, post: Poster):
    prompt = prompt_for(session, post, "curl -s https://example.invalid/x")
    prompt.choose("always")
    post.run()
    prompt.no.click()
    post.run()

    assert prompt.request.pending and prompt.second_question is None
    assert not any(b.disabled for b in prompt.buttons.values())
    assert prompt.no.disabled and prompt.yes.disabled
    prompt.choose("no")
    post.run()
    assert prompt.request.chosen is not None and prompt.request.chosen.option_id == "no"


def test_always_on_a_call_not_rated_risky_binds_at_once(session: FakeSession, post: Poster):
    prompt = prompt_for(session, post, "make")
    prompt.choose("always")
    post.run()

    assert prompt.second_question is None
    assert prompt.request.chosen is not None and prompt.request.chosen.option_id == "always"


def test_allow_once_on_a_risky_call_is_not_asked_again(session: FakeSession, post: Poster):
    prompt = prompt_for(session, post, "rm -rf build")
    prompt.choose("yes")
    post.run()

    assert prompt.second_question is None
    assert prompt.request.chosen is not None and prompt.request.chosen.option_id == "yes"
