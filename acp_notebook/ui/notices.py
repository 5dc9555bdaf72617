"""How a session's notices and context compactions look, live and saved.

A notice is one line, coloured by its severity; a compaction is a collapsed section titled
with its status, its summary inside (streaming live from `compaction_summary_chunk`). The
words come from the transcript's entries (``NoticeEntry.label``, ``CompactionEntry.heading``);
every agent string is escaped or rendered as agent Markdown. The live view of a compaction
(``CompactionView``) is in ``message.py``; this module has no widgets.
"""

from __future__ import annotations

from collections.abc import Callable

from ..client.entries import CompactionEntry, NoticeEntry, TextRun
from ..protocol import models as m
from .content import block_html
from .markdown import render_markdown
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
