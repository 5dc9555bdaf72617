"""Every renderer that puts an agent- or file-controlled string into Markdown, checked as
JupyterLab shows it (an output's Markdown rendered as trusted HTML, raw HTML on).

A file holding a backtick and ``<img src=x onerror=…>``, read by a benign agent, became
live markup in ``acp.messages()`` (its cells were single-backtick code spans), and the
report card showed an agent's error text raw. Here one payload of markup, backticks, line
breaks, pipes, brackets and entities goes through each renderer, and no element or
attribute of it may survive in the HTML.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from html.parser import HTMLParser
from typing import Any

import pytest
from markdown_it import MarkdownIt

from acp_notebook.client.agent_markdown import agent_markdown
from acp_notebook.client.formatting import code_span, fence, md_cell, md_escape
from acp_notebook.client.render import Renderer
from acp_notebook.client.timeline import Timeline
from acp_notebook.client.transcript import Transcript, TurnRecord
from acp_notebook.lab.report import Check, ReportCard, compare
from acp_notebook.notebook.controls.answers import Column, Table
from acp_notebook.notebook.inspector import MessageDetail, MessageTable, pair_responses
from acp_notebook.notebook.turn.handle import error_bundle
from acp_notebook.protocol import models as m
from acp_notebook.protocol.trace_event import TraceEvent
from acp_notebook.ui.transcript_html import turn_html

#: Markup of every kind a string could smuggle in, and what ends the span, cell or
#: paragraph it is put in.
MARKUP = [
    "`<img src=x onerror=alert(1)>`",
    "a`b <img src=x onerror=alert(2)> c``d",
    "x | <img src=x onerror=alert(3)> | y",
    "line\n\n<script>alert(4)</script>\n\n```\n<iframe src=javascript:alert(5)></iframe>",
    "line\r<svg onload=alert(6)>\u2028<b onmouseover=alert(7)>x</b>",
    "[click](javascript:alert(8)) ![i](x onerror=alert(9)) <a href='javascript:alert(10)'>a</a>",
    "`` ` ``<img src=x onerror=alert(13)>` \\`<img src=x onerror=alert(14)>",
    "\\`<img src=x onerror=alert(15)>` | `a | <img src=x onerror=alert(16)> | b`",
]
#: Strings that are not markup themselves but must not become some once escaped: entities,
#: escapes, a trailing backslash, a fence left open before the renderer's own blocks.
TRICKS = [
    "&lt;img src=x onerror=alert(11)&gt; &#60;img src=x onerror=alert(12)&#62; \\| \\`",
    "ends with a backslash \\",
    "~~~\nopen fence\n",
]
PAYLOADS = MARKUP + TRICKS

#: What the renderers write themselves; anything else came from the payload.
OURS = {
    "p", "em", "strong", "code", "pre", "br", "hr", "ul", "ol", "li", "blockquote",
    "table", "thead", "tbody", "tr", "th", "td", "h1", "h2", "h3", "h4", "h5", "h6",
    "details", "summary", "a",
}  # fmt: skip

RENDER = MarkdownIt("commonmark", {"html": True}).enable("table")


class _Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((tag, attrs))


#: The payloads' own elements (an HTML renderer writes many tags of its own).
PAYLOAD_TAGS = {"img", "script", "iframe", "svg"}


def live_markup(markdown: str, *, html: str | None = None) -> list[str]:
    """The elements and attributes of the rendered HTML that its renderer did not write
    (``html``: HTML a renderer wrote itself, checked as it is)."""
    parser = _Elements()
    parser.feed(RENDER.render(markdown) if html is None else html)
    bad = []
    ours = OURS if html is None else lambda tag: tag not in PAYLOAD_TAGS
    for tag, attrs in parser.found:
        if not (tag in ours if isinstance(ours, set) else ours(tag)):
            bad.append(f"<{tag}>")
        for name, value in attrs:
            if name.startswith("on") or name == "src" or "alert" in (value or ""):
                bad.append(f"<{tag} {name}>")
            if name == "href" and (value or "").strip().lower().startswith("javascript"):
                bad.append(f"<{tag} href={value}>")
    return bad


def _events(payload: str) -> list[tuple[str, TraceEvent]]:
    request = {"jsonrpc": "2.0", "id": 1, "method": "fs/read_text_file",
               "params": {"sessionId": "s", "path": payload}}  # fmt: skip
    answer = {"jsonrpc": "2.0", "id": 1, "result": {"content": payload}}
    odd = {"jsonrpc": "2.0", "method": payload, "params": {"text": payload}}
    return [
        ("demo", TraceEvent("recv", 1.0, request)),
        ("demo", TraceEvent("send", 2.0, answer)),
        ("demo", TraceEvent("recv", 3.0, odd)),
        ("demo", TraceEvent("recv", 4.0, None, invalid=payload)),
    ]


def messages(payload: str) -> str:
    return MessageTable(pair_responses(_events(payload)))._repr_markdown_()


def message_details(payload: str) -> str:
    return "\n\n".join(
        MessageDetail(msg, None)._repr_markdown_() for msg in pair_responses(_events(payload))
    )


def timeline(payload: str) -> str:
    line = Timeline.of(_events(payload))
    for row in line.rows:
        line.flags(row)
    return line.markdown()


def control_table(payload: str) -> str:
    columns: list[Column[str]] = [
        Column("id", lambda row: row, code=True),
        Column("title", lambda row: row),
    ]
    return Table([payload, "plain"], columns, empty="none")._repr_markdown_()


def report_card(payload: str) -> str:
    card = ReportCard(payload, [Check("schema", "Schema", "fail", f"The agent said: {payload}")])
    return compare([card, ReportCard("demo", [Check("schema", "Schema", "pass", "ok")])])


def turn_error(payload: str) -> str:
    return error_bundle(f"The agent answered: {payload}")["text/markdown"]


def transcript(payload: str) -> str:
    record_of, record = _hostile_turn(payload)
    return Renderer(record_of).turn(record)


def _hostile_turn(payload: str) -> tuple[Transcript, TurnRecord]:
    record_of = Transcript("/work")
    record = record_of.begin_turn([m.TextContentBlock(text=payload)])
    updates: list[dict[str, Any]] = [
        {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": payload, "kind": "read",
         "status": "completed", "locations": [{"path": f"/work/{payload}"}],
         "rawInput": {"path": payload},
         "content": [{"type": "content", "content": {"type": "text", "text": payload}}]},
        {"sessionUpdate": "plan",
         "entries": [{"content": payload, "priority": "high", "status": "pending"}]},
        {"sessionUpdate": "tool_call", "toolCallId": "t2", "title": "run", "kind": "execute",
         "status": "failed", "rawInput": {"command": payload}},
    ]  # fmt: skip
    for raw in updates:
        record_of.apply(m.parse(m.SessionUpdate, raw))
    record_of.end_turn(record, stop_reason="end_turn", error=payload)
    return record_of, record


def helpers(payload: str) -> str:
    """The escaping functions themselves, in the places renderers use them."""
    return "\n\n".join(
        [
            f"Read {md_escape(payload)} and {code_span(payload)}.",
            fence(payload, "json"),
            f"| a | b |\n|---|---|\n| {md_cell(payload)} | {md_cell(payload, code=True)} |",
        ]
    )


RENDERERS: dict[str, Callable[[str], str]] = {
    "acp.messages()": messages,
    "a message in full": message_details,
    "%acp --inspect table": timeline,
    "control tables": control_table,
    "report card": report_card,
    "a turn's error": turn_error,
    "transcript": transcript,
    "escaping helpers": helpers,
}


def test_the_payloads_are_live_markup_when_not_escaped() -> None:
    # The control: each payload really is markup a renderer must neutralise.
    naive = ["{}", "`{}`", '`{{"text": "{}"}}`', "| a |\n|---|\n| `{}` |"]
    for payload in MARKUP:
        assert any(live_markup(form.format(payload)) for form in naive), payload


@pytest.mark.parametrize("payload", PAYLOADS, ids=range(len(PAYLOADS)))
def test_no_element_of_a_payload_survives_in_a_saved_turns_html(payload: str) -> None:
    html = turn_html(*_hostile_turn(payload))
    assert live_markup("", html=html) == [], html


@pytest.mark.parametrize("payload", PAYLOADS, ids=range(len(PAYLOADS)))
@pytest.mark.parametrize("renderer", RENDERERS, ids=list(RENDERERS))
def test_no_element_or_attribute_of_a_payload_survives_rendering(
    renderer: str, payload: str
) -> None:
    markdown = RENDERERS[renderer](payload)
    assert live_markup(markdown) == [], markdown


def test_escaped_text_still_reads_as_the_payload() -> None:
    # Escaping must not lose what the string says: the rendered text is the payload.
    payload = PAYLOADS[1]
    for markdown in (md_escape(payload), code_span(payload)):
        rendered = RENDER.render(markdown)
        text = json.loads(json.dumps(rendered))
        assert "onerror=alert(2)" in text


def test_agent_markdown_closes_a_fence_it_left_open_where_its_text_ends() -> None:
    # Left open, the fence swallowed the transcript's next blocks and turned its own
    # fences inside out (their raw JSON became live HTML).
    assert agent_markdown("Here:\n```py\nx = 1\n") == "Here:\n```py\nx = 1\n```\n"
    assert agent_markdown("~~~~\nx") == "~~~~\nx\n~~~~"
    assert agent_markdown("```\nclosed\n```\n") == "```\nclosed\n```\n"
