"""Every permission card of a command or a write says whether it runs confined, in the
words of the turn's header (``Session.sandbox``): the live card, the saved HTML, the saved
Markdown and plain text (which the CLI's question also shows); a notebook tool that runs
code says the kernel is not confined."""

from __future__ import annotations

from typing import Any

import pytest

from acp_notebook.client.notebook_names import IN_KERNEL
from acp_notebook.client.render import Renderer
from acp_notebook.protocol import models as m
from acp_notebook.ui.permission import PermissionPrompt
from acp_notebook.ui.toolcall_html import sandbox_line
from acp_notebook.ui.transcript_html import turn_html

from .conftest import CWD, FakeSession, Poster, all_html, diff_item

CONFINED = "🔒 confined to `proj/` · network on"
UNCONFINED = "⚠️ unconfined: this kernel has no Landlock and bubblewrap is not installed"

COMMAND = {
    "toolCallId": "c",
    "title": "Run the tests",
    "kind": "execute",
    "rawInput": {"command": "make"},
}
EDIT = {
    "toolCallId": "e",
    "title": "Apply edits",
    "kind": "edit",
    "content": [diff_item(f"{CWD}/a.py", "1", "2")],
}
READ = {"toolCallId": "r", "title": "Read a.py", "kind": "read", "locations": [{"path": "a.py"}]}
FETCH = {"toolCallId": "f", "title": "Fetch", "kind": "fetch", "rawInput": {"url": "https://x.org"}}


def asked(session: FakeSession, post: Poster, tool: dict[str, Any]) -> PermissionPrompt:
    turn = session.submit()
    session.start(turn)
    request = session.request_permission(tool)
    call = session.transcript.tool_calls[request.tool_call_id]
    return PermissionPrompt(request, call, broker=session.permissions, post=post, cwd=CWD)


def saved(session: FakeSession, markdown: bool) -> str:
    renderer = Renderer(session.transcript, terminals=session.terminal_view, markdown=markdown)
    return "\n".join(renderer.tool_call(call) for call in session.transcript.tool_calls.values())


@pytest.mark.parametrize("tool", [COMMAND, EDIT], ids=["command", "edit"])
@pytest.mark.parametrize("sandbox", [CONFINED, UNCONFINED], ids=["confined", "unconfined"])
def test_the_card_of_a_command_or_a_write_says_how_the_agent_runs(
    session: FakeSession, post: Poster, tool: dict[str, Any], sandbox: str
):
    session.sandbox = sandbox
    prompt = asked(session, post, tool)
    assert prompt.request.sandbox == sandbox
    assert prompt.sandbox == sandbox_line(prompt.request) and sandbox in all_html(prompt.widget)
    session.permissions.choose(prompt.request.key, "yes")
    record = session.transcript.turns[-1]
    assert sandbox in turn_html(session.transcript, record, session.terminal_view)
    assert f"Permission: Yes, run it (chosen by user)\n{sandbox}" in saved(session, False)
    assert sandbox in saved(session, True)


@pytest.mark.parametrize("tool", [READ, FETCH], ids=["read", "fetch"])
def test_a_card_that_neither_runs_nor_writes_has_no_sandbox_line(
    session: FakeSession, post: Poster, tool: dict[str, Any]
):
    session.sandbox = CONFINED
    prompt = asked(session, post, tool)
    assert prompt.request.sandbox == ""
    assert prompt.sandbox == "" and "confined" not in all_html(prompt.widget)
    assert "confined" not in saved(session, False)


def test_an_agent_the_client_did_not_start_has_no_sandbox_line(session: FakeSession, post: Poster):
    prompt = asked(session, post, COMMAND)  # an in-memory agent: Session.sandbox is ""
    assert prompt.request.sandbox == "" and "confined" not in saved(session, True)


def test_a_notebook_tool_that_runs_code_says_the_kernel_is_not_confined(
    session: FakeSession, post: Poster
):
    session.sandbox = CONFINED
    session.submit()
    session.start(session.turns[-1])
    params = m.RequestPermissionRequest.parse(
        {
            "sessionId": "s1",
            "toolCall": {"toolCallId": "n", "title": "Run 1 line", "kind": "execute"},
            "options": [{"optionId": "allow", "name": "Allow", "kind": "allow_once"}],
        }
    )
    request = session.permissions.receive(
        params, session.transcript, cwd=CWD, notebook_tool="run_code", sandbox=session.sandbox
    )
    assert request.sandbox == IN_KERNEL
    assert "the code runs in your kernel" in IN_KERNEL and IN_KERNEL.startswith("🔓 unconfined")
    assert IN_KERNEL in saved(session, False)


def test_the_question_asked_on_a_terminal_says_how_the_command_would_run(
    session: FakeSession, post: Poster
):
    # The CLI's prompt and a notebook without widgets ask with this same text.
    from acp_notebook.client.asking import permission_question

    session.sandbox = CONFINED
    prompt = asked(session, post, COMMAND)
    question = permission_question(session, prompt.request)  # type: ignore[arg-type]
    lines = question.splitlines()
    assert lines[lines.index("Permission: waiting for permission") + 1] == CONFINED
    assert question.index(CONFINED) < question.index("[1] Yes, run it")
