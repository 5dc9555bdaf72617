"""The risk warning of a permission prompt: shown above the buttons, red for danger,
amber for caution, absent otherwise — in the same words as the saved transcript."""

from __future__ import annotations

from typing import Any

from acp_notebook.client.permission_request import PermissionRequest
from acp_notebook.client.render import Renderer
from acp_notebook.ui.permission import PermissionPrompt
from acp_notebook.ui.style import ERROR, WARN
from acp_notebook.ui.turn import TurnView

from .conftest import CWD, FakeSession, Poster, all_html


def ask(session: FakeSession, command: str) -> PermissionRequest:
    """What ``Session.request_permission`` does: open, merge, attach (rate the risk)."""
    return session.request_permission(
        {
            "toolCallId": "t1",
            "title": f"Run {command}",
            "kind": "execute",
            "rawInput": {"command": command},
        }
    )


def prompt_for(session: FakeSession, post: Poster, command: str) -> PermissionPrompt:
    turn = session.submit()
    session.start(turn)
    request = ask(session, command)
    call = session.transcript.tool_calls["t1"]
    return PermissionPrompt(request, call, broker=session.permissions, post=post, cwd=CWD)


def children_of(prompt: PermissionPrompt) -> list[Any]:
    return list(prompt.widget.children)


def test_a_risky_command_shows_a_red_warning_above_the_buttons(
    session: FakeSession, post: Poster
) -> None:
    prompt = prompt_for(session, post, "sudo rm -rf /var/cache/app")
    warning = prompt.warning
    assert "⚠️ Risky: runs as root; deletes files recursively" in warning
    assert ERROR in warning and "font-weight: bold" in warning
    children = children_of(prompt)
    assert children.index(prompt._warning) == children.index(prompt._question) + 1
    buttons_at = next(i for i, c in enumerate(children) if hasattr(c, "children"))
    assert children.index(prompt._warning) < buttons_at, "the warning comes before the buttons"
    # The saved transcript says the same words.
    markdown = Renderer(session.transcript).tool_call(session.transcript.tool_calls["t1"])
    assert "⚠️ Risky: runs as root; deletes files recursively" in markdown


def test_a_caution_is_milder(session: FakeSession, post: Poster) -> None:
    prompt = prompt_for(session, post, "pip install requests")
    assert "🔸 Caution: installs packages (pip install)" in prompt.warning
    assert WARN in prompt.warning and "font-weight: normal" in prompt.warning
    assert ERROR not in prompt.warning


def test_nothing_risky_shows_no_warning(session: FakeSession, post: Poster) -> None:
    prompt = prompt_for(session, post, "make test")
    assert prompt.warning == ""


def test_agent_text_in_the_warning_is_escaped(session: FakeSession, post: Poster) -> None:
    prompt = prompt_for(session, post, "echo x > '/etc/<img src=x onerror=alert(1)>'")
    assert "Caution: writes outside the project" in prompt.warning
    assert "<img" not in prompt.warning and "&lt;img" in prompt.warning


def test_the_live_view_never_shows_a_prompt_without_its_warning(
    session: FakeSession, post: Poster
) -> None:
    turn = session.submit()
    session.start(turn)
    view = TurnView(agent_label="demo", session_label="default", post=post)
    view.bind(session, turn)
    seen: list[str] = []
    # Every time the transcript tells its listeners, the view redraws; record what it shows.
    session.transcript.subscribe(lambda _t: (view.refresh(), seen.append(all_html(view.widget))))
    session.request_permission(
        {
            "toolCallId": "t1",
            "title": "Clean up",
            "kind": "execute",
            "rawInput": {"command": "git clean -fdx"},
        }
    )
    with_prompt = [html for html in seen if "Permission requested" in html]
    assert with_prompt, "the view was told about the request"
    assert all("deletes untracked files (git clean)" in html for html in with_prompt)
    (prompt,) = view.prompts
    assert "⚠️ Risky: deletes untracked files (git clean)" in prompt.warning


def test_the_decision_line_names_the_rule(session: FakeSession, post: Poster) -> None:
    prompt = prompt_for(session, post, "rm -rf build")
    session.permissions.choose(prompt.request.key, "no", by="rule `deny execute rm *`")
    prompt.refresh()
    assert "No (chosen by rule `deny execute rm *`)" in prompt.decision
    assert "Risky" in prompt.warning, "the warning stays after the decision"
