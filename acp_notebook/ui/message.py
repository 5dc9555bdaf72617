"""A message of the transcript, live: the agent's reply, the user's prompt (with what was
sent), the agent's thoughts, a compaction's summary.

A message is a list of items (text runs and other content blocks, in order). Text runs
stream, so each is a :class:`~acp_notebook.ui.segments.GrowingText` (frozen segments +
live tail); any other block is rendered once, when it arrives, and never sent again.
"""

from __future__ import annotations

from collections.abc import Callable

import ipywidgets as w

from ..client.agent_markdown import agent_markdown
from ..client.entries import CompactionEntry, MessageEntry, TextRun
from ..client.sent import SentItem
from ..protocol import models as m
from . import layouts
from .content import block_html
from .markdown import cut_markdown, render_sheet_markdown, render_sheet_muted_markdown
from .message_html import (
    THINKING,
    THOUGHT,
    USER_EDGE,
    USER_MARGIN,
    USER_PADDING,
    YOU_LABEL,
)
from .segments import GrowingText, SafeMarkdown, flat_html
from .sent import prompt_html


def _run_length(run: TextRun) -> int:
    # What was received, not ``len(run.text)``: joining every chunk on every refresh would
    # copy the whole reply each time just to learn that nothing changed.
    return run.received


class MessageBody:
    """The items of one message as a ``VBox``: one child per item. Frozen text segments
    are the frontend's rendering of their Markdown (``markdown``, see ``segments``)
    unless ``markdown`` is None. ``margin``: the box's, around the message."""

    def __init__(
        self,
        entry: MessageEntry,
        cwd: str | None,
        render: Callable[[str], str] = render_sheet_markdown,
        markdown: SafeMarkdown | None = agent_markdown,
        margin: str | None = None,
    ) -> None:
        self.entry = entry
        self.cwd = cwd
        self._render = render
        self._markdown = markdown
        #: Text arrived that the last refresh did not send yet (see ``refresh``).
        self.withheld = False
        self._views: list[GrowingText | w.HTML] = []
        self._lengths: list[int] = []
        # Views of the items there already are, then the box: no update right after open.
        for item in entry.items:
            self._views.append(self._make(item))
            self._lengths.append(_run_length(item) if isinstance(item, TextRun) else -1)
        around = {"margin": margin} if margin is not None else {}
        self.widget = layouts.vbox(self._children(), width="100%", **around)

    def _children(self) -> tuple[w.Widget, ...]:
        return tuple(v.widget if isinstance(v, GrowingText) else v for v in self._views)

    def refresh(self, *, paced: bool = False) -> bool:
        """Show new items and grown text; True if anything changed. ``paced`` (the
        message is still streaming): grown text waits for the wire budget
        (:mod:`.wire_budget`), and :attr:`withheld` says some did."""
        items = self.entry.items
        changed = False
        added = False
        self.withheld = False
        for index, item in enumerate(items):
            if index == len(self._views):
                self._views.append(self._make(item))
                self._lengths.append(_run_length(item) if isinstance(item, TextRun) else -1)
                added = True
            view = self._views[index]
            if isinstance(item, TextRun) and isinstance(view, GrowingText):
                length = _run_length(item)
                if length != self._lengths[index]:
                    if view.update(item.live_text, paced=paced):
                        self._lengths[index] = length
                        changed = True
                    else:
                        self.withheld = True
        if added:
            self.widget.children = self._children()
        return changed or added

    def _make(self, item: TextRun | object) -> GrowingText | w.HTML:
        if isinstance(item, TextRun):
            return GrowingText(self._render, cut_markdown, item.live_text, markdown=self._markdown)
        return flat_html(block_html(item, self.cwd))  # type: ignore[arg-type]

    @property
    def text_views(self) -> list[GrowingText]:
        return [v for v in self._views if isinstance(v, GrowingText)]


class MessageView:
    """An agent reply, or a user message (the prompt, or chunks replayed by
    `session/load`), styled as the user's: a label and a coloured left edge."""

    def __init__(self, entry: MessageEntry, cwd: str | None = None) -> None:
        self.entry = entry
        if entry.role == "user":
            self.body = MessageBody(entry, cwd)
            label = layouts.html(YOU_LABEL, margin="0")
            self.widget: w.Box = layouts.vbox(
                [label, self.body.widget],
                border_left=USER_EDGE,
                padding=USER_PADDING,
                margin=USER_MARGIN,
            )
        else:
            self.body = MessageBody(entry, cwd, margin="2px 0")
            self.widget = self.body.widget

    @property
    def role(self) -> str:
        return self.entry.role

    @property
    def withheld(self) -> bool:
        return self.body.withheld

    def refresh(self, active: bool = False) -> bool:
        """``active``: the agent may still be writing it (paced, see ``MessageBody``)."""
        return self.body.refresh(paced=active)


class ThoughtView:
    """The agent's thoughts, collapsed in an Accordion (the user's open/closed choice is
    the Accordion's own state, so it survives every refresh)."""

    def __init__(self, entry: MessageEntry, cwd: str | None = None, *, active: bool = True) -> None:
        self.entry = entry
        # Greyed, which the frontend's Markdown cannot be: HTML segments.
        self.body = MessageBody(entry, cwd, render=render_sheet_muted_markdown, markdown=None)
        self._title = THINKING if active else THOUGHT
        self.accordion = w.Accordion(
            [self.body.widget], selected_index=None, layout=layouts.layout()
        )
        # Titles after children: the titles validator pads them to the children's count.
        self.accordion.titles = (self._title,)
        self.widget = self.accordion

    @property
    def title(self) -> str:
        return self._title

    @property
    def withheld(self) -> bool:
        return self.body.withheld

    def refresh(self, active: bool = False) -> bool:
        """``active``: the agent may still be thinking (turn running, nothing after it)."""
        changed = self.body.refresh(paced=active)
        title = THINKING if active else THOUGHT
        if title != self._title:
            self._title = title
            self.accordion.titles = (title,)
            changed = True
        return changed


class PromptView:
    """The user's prompt with its attachments (rendered once: a prompt does not stream)."""

    def __init__(
        self, blocks: list[m.ContentBlock], items: list[SentItem], cwd: str | None
    ) -> None:
        self.widget = layouts.vbox(
            [layouts.html(prompt_html(blocks, items, cwd), margin="0")],
            border_left=USER_EDGE,
            padding=USER_PADDING,
            margin=USER_MARGIN,
        )

    def refresh(self, active: bool = False) -> bool:
        return False


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
