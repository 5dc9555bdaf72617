"""One finished turn as a single HTML document: what the saved notebook shows.

The live view is a tree of widgets, gone once the cell is saved; the saved transcript
carried only Markdown, which loses the diff colours, the cards and the plan's layout. This
renders the same entries, in the same order, with the same HTML functions the live views
use (message Markdown, tool call header and locations, diffs, terminals, plan, notes,
permission decisions), so the finished turn looks like the live one. It goes into the
turn's display bundle as ``text/html`` beside ``text/markdown`` and ``text/plain``, unless
the turn is long (``saved_transcript.py`` says when).

Deterministic, like the Markdown: no duration, no timestamps, no widget ids, paths
relative to the session's directory. Every agent string is escaped by the functions
used here (JupyterLab shows a trusted output's HTML unsanitised, like the live widgets).
Only inline styles, with light-theme fallbacks: an untrusted notebook's sanitiser and
renderers without JupyterLab's CSS variables still get the structure and the tints.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ..client.agent_markdown import KeepEnds
from ..client.display import (
    DiffShown,
    RawShown,
    TerminalLookup,
    TerminalShown,
    TextShown,
    ToolContentShown,
    diff_shown,
    tool_content_shown,
)
from ..client.entry_forms import EntryForm, row
from ..client.formatting import portable
from ..client.render import Renderer, usage_tokens_line
from ..client.sent import sent_items
from ..client.toolcall import ToolCallState
from ..client.transcript import (
    CompactionEntry,
    ElicitationEntry,
    MessageEntry,
    NoteEntry,
    NoticeEntry,
    PlanView,
    TextRun,
    ToolCallEntry,
    Transcript,
    TurnRecord,
    UnknownEntry,
)
from ..protocol import models as m
from .content import block_html, raw_html, shown_html
from .diff import diff_html
from .markdown import render_markdown, render_muted_markdown
from .message_html import THOUGHT, USER_EDGE, USER_MARGIN, USER_PADDING, YOU_LABEL, note_html
from .notices import compaction_html, notice_html
from .plan import plan_html
from .sent import prompt_html
from .style import ERROR, MUTED, SMALL_SIZE, WARN, details, div, esc, json_pre
from .terminal import terminal_html
from .toolcall_html import (
    CARD_BORDER,
    CARD_MARGIN,
    CARD_PADDING,
    decision_line,
    edge_color,
    header_html,
    locations_html,
    sandbox_line,
    warning_line,
)
from .turn_status import NOTABLE_STOPS


class TurnHtml:
    """Renders the turns of one transcript (see the module docstring)."""

    def __init__(
        self,
        transcript: Transcript,
        terminals: TerminalLookup | None = None,
        keep_ends: KeepEnds | None = None,
    ) -> None:
        self.transcript = transcript
        self.terminals = terminals
        self.cwd = transcript.cwd
        #: The Markdown renderer, for what has no view of its own (and the footer's words),
        #: and how much of a long text is kept.
        self.markdown = Renderer(transcript, terminals=terminals, keep_ends=keep_ends)
        self.text = Renderer(transcript, terminals=terminals, markdown=False)

    def turn(self, record: TurnRecord) -> str:
        parts = [self.entry(entry, record) for entry in self.transcript.entries_of(record.index)]
        parts.append(self.footer(record))
        if note := self.transcript.not_kept_note(record.index):
            parts.insert(0, note_html(note))
        body = "".join(p for p in parts if p)
        return literal_fallbacks(
            f'<div class="acp-transcript" style="padding: 2px 4px">{body}</div>\n'
        )

    # ------------------------------------------------------------------ entries

    def entry(self, entry: object, record: TurnRecord | None = None) -> str:
        """``entry`` as HTML (``record``: its turn, whose prompt a message may show): its
        row of :data:`HTML`."""
        return HTML(self, entry, record)

    def markdown_html(self, entry: object) -> str:
        """``entry``'s Markdown, rendered (a question the agent asked, anything else)."""
        return render_markdown(self.markdown.entry(entry))

    def message(self, entry: MessageEntry, record: TurnRecord | None = None) -> str:
        if entry.role == "user":
            style = f"border-left: {USER_EDGE}; padding: {USER_PADDING}; margin: {USER_MARGIN}"
            if record is not None and (items := sent_items(record.prompt)):
                # Context was attached: the words, "Sent: …", the attachments collapsed.
                return div(prompt_html(record.prompt, items, self.cwd), style)
            body = "".join(self.item(item, render_markdown) for item in entry.items)
            return div(YOU_LABEL + body, style)
        render = render_muted_markdown if entry.role == "thought" else render_markdown
        body = "".join(self.item(item, render) for item in entry.items)
        if entry.role == "thought":
            return details(esc(THOUGHT), body)
        return div(body, "margin: 2px 0")

    def item(self, item: TextRun | m.ContentBlock, render: Callable[[str], str]) -> str:
        if isinstance(item, TextRun):
            return render(self.markdown.kept(item.text))
        return block_html(item, self.cwd)

    # ------------------------------------------------------------------ tool calls

    def tool_call(self, call: ToolCallState) -> str:
        parts = [header_html(call), locations_html(call, self.cwd)]
        for item in call.content:
            parts.append(self.content(tool_content_shown(item, self.cwd, self.terminals)))
        for diff in call.diffs:
            if diff.derived:
                parts.append(diff_html(diff_shown(diff, self.cwd)))
        for title, value in (("Raw input", call.raw_input), ("Raw output", call.raw_output)):
            if value is not None:
                parts.append(
                    details(esc(title), div(json_pre(value, self.cwd), f"font-size: {SMALL_SIZE}"))
                )
        for request in call.permissions:
            parts.append(
                warning_line(request.danger)
                + sandbox_line(request)
                + div(decision_line(request), "margin: 2px 0")
            )
        style = (
            f"border: {CARD_BORDER}; border-left: 3px solid {edge_color(call)}; "
            f"padding: {CARD_PADDING}; margin: {CARD_MARGIN}"
        )
        return div("".join(p for p in parts if p), style)

    def content(self, shown: ToolContentShown) -> str:
        if isinstance(shown, TextShown):
            return render_markdown(shown.text)
        if isinstance(shown, DiffShown):
            return diff_html(shown)
        if isinstance(shown, TerminalShown):
            return terminal_html(shown)
        return shown_html(shown)

    # ------------------------------------------------------------------ footer

    def footer(self, record: TurnRecord) -> str:
        """How the turn ended, its tokens and the context used: the Markdown's words."""
        stop = self.text.stop_line(record)
        color = (
            ERROR
            if record.error is not None
            else WARN
            if record.stop_reason in NOTABLE_STOPS
            else MUTED
        )
        lines = [(stop, color)]
        for extra in (usage_tokens_line(record.usage), self.text.usage_line()):
            if extra:
                lines.append((extra, MUTED))
        rows = "".join(
            div(esc(text), f"color: {c}; font-size: {SMALL_SIZE}; line-height: 1.6")
            for text, c in lines
        )
        return div(rows, f"border-top: {CARD_BORDER}; margin-top: 4px; padding-top: 4px")


_STYLE = re.compile(r'style="([^"]*)"')
_VAR = re.compile(r"var\(--[\w-]+,\s*([^()]+)\)")


#: The saved turn's HTML form of each entry kind (``client/entry_forms.py``).
HTML: EntryForm[TurnHtml, TurnRecord | None, str] = EntryForm(
    "html",
    [
        row(MessageEntry, TurnHtml.message),
        row(ToolCallEntry, lambda h, e, _: h.tool_call(e.tool_call)),
        row(PlanView, lambda h, e, _: plan_html(e.entries)),
        row(NoteEntry, lambda h, e, _: note_html(e.text)),
        row(NoticeEntry, lambda h, e, _: notice_html(e)),
        row(CompactionEntry, lambda h, e, _: compaction_html(e, h.cwd)),
        row(
            UnknownEntry,
            lambda h, e, _: raw_html(RawShown("update", e.kind, portable(e.raw, h.cwd))),
        ),
        row(ElicitationEntry, lambda h, e, _: h.markdown_html(e)),
    ],
    fallback=lambda h, e, _: h.markdown_html(e),
)


def _declarations(style: str) -> str:
    out = []
    for declaration in style.split(";"):
        literal = _VAR.sub(lambda match: match.group(1).strip(), declaration)
        if literal != declaration and "var(" not in literal:
            out.append(literal)
        out.append(declaration)
    return ";".join(out)


def literal_fallbacks(html: str) -> str:
    """Each style declaration that reads a JupyterLab CSS variable is preceded by the same
    declaration with the variable's fallback: JupyterLab's sanitiser (an untrusted
    notebook) drops declarations with ``var()``, and keeps the literal one; a trusted
    page applies the later one, so the theme still wins there."""
    return _STYLE.sub(lambda match: f'style="{_declarations(match.group(1))}"', html)


def turn_html(
    transcript: Transcript,
    record: TurnRecord,
    terminals: TerminalLookup | None = None,
    keep_ends: KeepEnds | None = None,
) -> str:
    """The HTML of one turn of ``transcript`` (the ``text/html`` of its display bundle)."""
    return TurnHtml(transcript, terminals, keep_ends).turn(record)
