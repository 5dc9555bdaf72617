"""Markup from the agent, in every string it controls, reaches no ``HTML`` widget and no
saved transcript as markup: it is escaped, and unsafe links are refused (issue 11, XSS)."""

from __future__ import annotations

import html
import re
from typing import Any

import pytest
from markdown_it import MarkdownIt

from acp_notebook.client.auth import auth_method_info
from acp_notebook.client.display import safe_href
from acp_notebook.protocol import models as m
from acp_notebook.ui.attention import BEACON
from acp_notebook.ui.auth import AuthPrompt
from acp_notebook.ui.saved_transcript import HTML_LIMIT, saved_bundle
from acp_notebook.ui.turn import TurnView

from ..ui.conftest import FakeSession, Poster, all_html, tool_call, tool_update, update

MARK = "<img src=x onerror=alert(1)></details><script>alert(2)</script>"
LINKS = ["javascript:alert(3)", "java\nscript:alert(4)", " \tJaVaScRiPt:alert(5)"]
HREF = re.compile(r"""href\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""", re.I)


#: A tag of the payload, as a browser would parse it.
TAG = re.compile(r"<(img|script|/details><script)", re.I)


def assert_no_markup(shown: str) -> None:
    # The pending card's beacon is this client's constant (ui/attention.py, no agent text
    # in it): the one image tag allowed.
    shown = shown.replace(BEACON, "")
    tag = TAG.search(shown)
    assert tag is None, shown[max(0, tag.start() - 200) :][:400]
    for match in HREF.finditer(shown):
        href = html.unescape(next(group for group in match.groups() if group is not None))
        assert safe_href(href) == href.strip(), href


def hostile_session() -> tuple[FakeSession, Any]:
    session = FakeSession()
    turn = session.submit(MARK)
    session.start(turn)
    apply = session.transcript.apply
    apply(
        update({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": MARK}})
    )
    apply(
        update({"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": MARK}})
    )
    for n, uri in enumerate(LINKS):
        apply(update({"sessionUpdate": "agent_message_chunk", "content": {"type": "resource_link", "name": MARK, "uri": uri, "title": MARK, "description": MARK}}))  # fmt: skip
        apply(update({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": f"[{MARK}]({uri.strip()}) {n}"}}))  # fmt: skip
    apply(
        tool_call(
            "t1", MARK, MARK, status="pending", locations=[{"path": f"/work/proj/{MARK}"}],
            rawInput={"command": MARK, MARK: MARK},
            content=[
                {"type": "content", "content": {"type": "text", "text": MARK}},
                {"type": "diff", "path": f"/work/proj/{MARK}.py", "oldText": MARK, "newText": MARK + "!"},
            ],
        )
    )  # fmt: skip
    apply(tool_call("t2", MARK, "execute", rawInput={"command": MARK}))
    apply(tool_update("t2", status="failed", content=[{"type": "content", "content": {"type": "text", "text": MARK}}]))  # fmt: skip
    apply(update({"sessionUpdate": "plan", "entries": [{"content": MARK, "priority": "high", "status": "pending"}]}))  # fmt: skip
    apply(update({"sessionUpdate": "available_commands_update", "availableCommands": [{"name": MARK, "description": MARK, "input": {"hint": MARK}}]}))  # fmt: skip
    apply(update({"sessionUpdate": "session_info_update", "title": MARK}))
    apply(update({"sessionUpdate": "current_mode_update", "currentModeId": MARK}))
    apply(update({"sessionUpdate": MARK, "text": MARK}))  # an unknown update
    options = [
        {"optionId": "a", "name": MARK, "kind": "allow_once"},
        {"optionId": "b", "name": MARK, "kind": "reject_once"},
    ]
    session.request_permission(
        {"toolCallId": "t2", "title": MARK, "rawInput": {"command": MARK}}, options
    )
    return session, turn


def test_markup_in_every_agent_string_is_escaped_in_the_live_view_and_the_saved_transcript():
    session, turn = hostile_session()
    view = TurnView(agent_label=MARK, session_label=MARK, post=Poster())
    view.bind(session, turn)  # type: ignore[arg-type]
    view.refresh()
    assert MARK not in all_html(view.widget)
    assert_no_markup(all_html(view.widget))
    session.end(turn, stop_reason=None, error=MARK)
    view.finish()
    assert_no_markup(all_html(view.widget))
    assert "&lt;img src=x onerror=alert(1)&gt;" in all_html(view.widget)  # shown, as text
    # The saved Markdown as JupyterLab renders it (CommonMark, raw HTML allowed, and
    # marked follows any link: markdown-it's own javascript: filter is turned off).
    renderer = MarkdownIt("commonmark")
    renderer.validateLink = lambda url: True
    assert_no_markup(renderer.render(turn.bundle()["text/markdown"]))


def test_markup_in_every_agent_string_is_escaped_in_the_saved_bundle_short_and_long():
    # Short: HTML beside the Markdown; long (the agent's text past the HTML limit): the
    # Markdown is what JupyterLab renders, trusted, so it alone must carry no markup.
    for padding in ("", "x" * HTML_LIMIT):
        session, turn = hostile_session()
        session.transcript.apply(update({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": padding + MARK}}))  # fmt: skip
        session.end(turn, stop_reason=None, error=MARK)
        assert turn.record is not None
        bundle = saved_bundle(session.transcript, turn.record, session.terminal_view)
        assert ("text/html" in bundle) == (not padding)
        renderer = MarkdownIt("commonmark")
        renderer.validateLink = lambda url: True
        assert_no_markup(renderer.render(bundle["text/markdown"]))
        assert_no_markup(bundle.get("text/html", ""))


def test_markup_in_a_long_reply_is_escaped_in_the_frozen_markdown_segments():
    # Past the first few hundred characters a reply is frozen into Output widgets whose
    # Markdown the frontend renders (trusted): the agent's tags and links must be inert.
    session = FakeSession()
    turn = session.submit("go")
    session.start(turn)
    view = TurnView(agent_label="a", session_label="s", post=Poster())
    view.bind(session, turn)  # type: ignore[arg-type]
    for n, uri in enumerate(LINKS * 10):
        text = f"{MARK} and [{MARK}]({uri.strip()}) {n}\n\n<{MARK}>\n\n"
        session.transcript.apply(update({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}))  # fmt: skip
        view.refresh()
    session.end(turn)
    view.finish()
    assert len(_outputs(view.widget)) > 5
    assert_no_markup(all_html(view.widget))
    assert "&lt;img src=x onerror=alert(1)&gt;" in all_html(view.widget)


def _outputs(widget: Any) -> list[dict[str, Any]]:
    found = list(getattr(widget, "outputs", ()) or ())
    for child in getattr(widget, "children", ()) or ():
        found += _outputs(child)
    return found


def test_markup_in_a_failure_before_the_turn_is_escaped():
    view = TurnView(agent_label=MARK, session_label=MARK, post=Poster())
    view.fail(MARK)
    assert_no_markup(all_html(view.widget))


def test_markup_in_the_login_panel_is_escaped():
    methods = [
        m.parse(m.AuthMethod, {"id": MARK, "name": MARK, "description": MARK}),
        m.parse(
            m.AuthMethod,
            {
                "type": "env_var",
                "id": "key",
                "name": MARK,
                "description": MARK,
                "vars": [{"name": "API_KEY"}],
            },
        ),
        m.parse(m.AuthMethod, {"type": MARK, "id": "x", "name": MARK, "description": MARK}),
    ]
    methods = [auth_method_info(method) for method in methods]
    prompt = AuthPrompt(
        MARK, MARK, methods, post=Poster(), choose=lambda *a: None, command_line=MARK
    )
    prompt.close(MARK)
    assert_no_markup(all_html(prompt.widget))


@pytest.mark.parametrize(
    "uri", [*LINKS, "java\tscript:x", "\x01javascript:x", "vbscript:x", "data:text/html,x"]
)
def test_safe_href_refuses_scripts_however_the_browser_would_read_them(uri):
    assert safe_href(uri) is None


@pytest.mark.parametrize(
    "uri", ["https://example.com/a?b=c", "docs/readme.md", "#top", "mailto:a@b.c"]
)
def test_safe_href_keeps_ordinary_links(uri):
    assert safe_href(uri) == uri
