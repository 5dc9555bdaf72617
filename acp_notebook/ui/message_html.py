"""A message's HTML pieces, live and saved: the user's label and edge, the thought's
titles, a note line. No widgets here: the saved transcript (``transcript_html.py``) is
built from these without importing ipywidgets (a headless turn never loads it); the
live views (``message.py``, ``entry_views.py``, ``turn.py``) import them from here."""

from __future__ import annotations

from .style import INFO, MUTED, SMALL_SIZE, esc, span

#: Titles of a thought's Accordion while the agent is still thinking, and after.
THINKING = "Thinking…"
THOUGHT = "Thought"


#: A user message: this label over the text, set off by a coloured left edge.
YOU_LABEL = span("You", f"color: {INFO}; font-weight: 600; font-size: {SMALL_SIZE}")
USER_EDGE = f"3px solid {INFO}"
USER_PADDING = "0 0 0 8px"
USER_MARGIN = "4px 0 6px 0"


def note_html(text: str) -> str:
    """A small italic line (mode or title changes)."""
    return f'<div style="color: {MUTED}; font-size: {SMALL_SIZE}; font-style: italic; line-height: 1.6">{esc(text)}</div>'
