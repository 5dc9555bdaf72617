"""How a session's notices and context compactions look, live and saved.

A notice is one line, coloured by its severity; a compaction is a collapsed section titled
with its status, its summary inside (streaming live from `compaction_summary_chunk`). The
words come from the transcript's entries (``NoticeEntry.label``, ``CompactionEntry.heading``);
every agent string is escaped or rendered as agent Markdown.
"""

from __future__ import annotations

from collections.abc import Callable

import ipywidgets as w

from ..client.entries import CompactionEntry, NoticeEntry, TextRun
from ..protocol import models as m
from . import layouts
from .content import block_html
from .markdown import render_markdown
from .message import MessageBody
from .style import ERROR, FG, INFO, MUTED, SMALL_SIZE, UI_SIZE, WARN, details, div, esc, span

_COLORS = {"info": INFO, "warning": WARN, "error": ERROR}


def notice_html(entry: NoticeEntry) -> str:
    """The notice's line: its severity, its title, its description (plain text, escaped)."""
    color = _COLORS.get(entry.severity, MUTED)
    text = (
        span(esc(entry.label + ":"), f"color: {color}; font-weight: 600") + " " + esc(entry.title)
    )
    if entry.description:
        text += span(esc(" — " + entry.description), f"color: {MUTED}")
    return div(
        text,
        f"border-left: 3px solid {color}; padding: 2px 8px; margin: 4px 0; "
        f"font-size: {UI_SIZE}; color: {FG}; line-height: 1.5",
    )


def compaction_html(entry: CompactionEntry, cwd: str | None) -> str:
    """A finished compaction as it is saved: its heading, the summary collapsed."""
    body = "".join(_item_html(item, cwd, render_markdown) for item in entry.summary.items)
    heading = esc(entry.heading)
    if not body:
        return div(heading, f"color: {MUTED}; font-size: {SMALL_SIZE}; margin: 2px 0")
    return details(heading, body)


def _item_html(
    item: TextRun | m.ContentBlock, cwd: str | None, render: Callable[[str], str]
) -> str:
    return render(item.text) if isinstance(item, TextRun) else block_html(item, cwd)


class CompactionView:
    """A compaction in a live turn: an Accordion (closed) titled with the status, the summary
    growing inside it; a replaced summary (a `compaction_update` with ``summary``) is redrawn."""

    def __init__(self, entry: CompactionEntry, cwd: str | None = None) -> None:
        self.entry = entry
        self.cwd = cwd
        self.body = MessageBody(entry.summary, cwd)
        self._version = entry.version
        self._title = entry.heading
        self.accordion = w.Accordion(
            [self.body.widget], selected_index=None, layout=layouts.layout()
        )
        self.accordion.titles = (self._title,)
        self.widget = self.accordion

    def refresh(self, active: bool = False) -> bool:
        if self.entry.version == self._version:
            return False
        self._version = self.entry.version
        if self.body.entry is not self.entry.summary:
            self.body = MessageBody(self.entry.summary, self.cwd)
            self.accordion.children = (self.body.widget,)
        else:
            self.body.refresh()
        if self.entry.heading != self._title:
            self._title = self.entry.heading
        self.accordion.titles = (self._title,)
        return True
