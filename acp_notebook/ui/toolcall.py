"""A tool call as a card: header, locations, content in order (text, every diff,
embedded terminals), a diff rebuilt from ``rawInput`` when the agent sent none, the raw
input and output (collapsed), and its permission prompts — all before the buttons, so
the user sees what they approve (anchors §3.2). The card's HTML pieces are in
``toolcall_html.py`` (the saved transcript uses them without widgets); the views of its
diffs and terminals (``DiffView``, ``TerminalOutputView``) are here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import ipywidgets as w

from ..client.display import (
    DiffShown,
    TerminalLookup,
    TerminalShown,
    TextShown,
    diff_shown,
    terminal_shown,
    tool_content_shown,
)
from ..client.rawinput import FileDiff
from ..client.terminals import TerminalSnapshot
from ..client.toolcall import ToolCallState
from ..protocol import models as m
from . import layouts
from .content import shown_html
from .context import ViewContext
from .diff import diff_html
from .markdown import cut_lines, cut_markdown, render_sheet_markdown
from .permission import PermissionPrompt
from .segments import GrowingText, close_tree, flat_html
from .style import (
    SMALL_SIZE,
    STATUS_COLORS,
    json_pre,
)
from .terminal import header_html as terminal_header_html
from .terminal import output_html
from .terminal import status_html as terminal_status_html
from .toolcall_html import (
    CARD_BORDER,
    CARD_MARGIN,
    CARD_PADDING,
    edge_color,
    header_html,
    locations_html,
    status_label,
)


@dataclass
class _Item:
    """The view of one content item, and the item it shows (to know when to redo it)."""

    item: m.ToolCallContent
    widget: w.Widget
    text: GrowingText | None = None
    diff: DiffView | None = None
    terminal: TerminalOutputView | None = None


class ToolCallCard:
    """One tool call; :meth:`refresh` reconciles the card with the call's current state."""

    def __init__(self, call: ToolCallState, ctx: ViewContext) -> None:
        self.call = call
        self.ctx = ctx
        self._header = flat_html()
        self._locations = flat_html()
        self._content = layouts.vbox(width="100%")
        self._derived = layouts.vbox(width="100%")
        #: The collapsed raw input and output, made when the call first has either.
        self._raw: w.Accordion | None = None
        self._prompts_box = layouts.vbox(width="100%")
        # Its own layout: the left edge's colour follows the call's status.
        self.widget = w.VBox(
            [self._header, self._locations, self._content, self._derived, self._prompts_box],
            layout=w.Layout(
                border=CARD_BORDER,
                border_left=f"3px solid {STATUS_COLORS['pending']}",
                padding=CARD_PADDING,
                margin=CARD_MARGIN,
                width="100%",
            ),
        )
        self._items: list[_Item] = []
        self._terminals: dict[str, TerminalOutputView] = {}
        self.derived: list[DiffView] = []
        self._derived_diffs: list[FileDiff] = []
        self.prompts: list[PermissionPrompt] = []
        self._seen: dict[str, Any] = {}
        self._raw_children: list[w.HTML] = []
        self.refresh()

    # ------------------------------------------------------------------ reading (tests, API)

    @property
    def diff_views(self) -> list[DiffView]:
        """Every diff shown, the agent's own first, then those derived from rawInput."""
        return [i.diff for i in self._items if i.diff is not None] + self.derived

    @property
    def terminal_views(self) -> list[TerminalOutputView]:
        return list(self._terminals.values())

    @property
    def header(self) -> str:
        return self._header.value

    @property
    def raw_sections(self) -> dict[str, str]:
        """Title → HTML of the collapsed raw sections."""
        if self._raw is None:
            return {}
        return dict(zip(self._raw.titles, (c.value for c in self._raw_children), strict=False))

    # ------------------------------------------------------------------ refresh

    def refresh(self, active: bool = False) -> bool:
        call = self.call
        changed = False
        # The header is rebuilt only when what it shows changed (its title is Markdown).
        header_key = (call.shown_title, call.kind, call.status, status_label(call))
        if header_key != self._seen.get("header"):
            self._seen["header"] = header_key
            self._header.value = header_html(call)
            self.widget.layout.border_left = f"3px solid {edge_color(call)}"
            changed = True
        # Lists and raw values are replaced, never mutated, by the transcript: an identity
        # check is enough (the references kept here stop ids being reused).
        if self._changed("locations", call.locations):
            self._locations.value = locations_html(call, self.ctx.cwd)
            changed = True
        content_changed = self._changed("content", call.content)
        if content_changed:
            self._sync_content(call.content)
            changed = True
        for terminal in self._terminals.values():
            changed = terminal.refresh() or changed
        raw_input_changed = self._changed("raw_input", call.raw_input)
        kind_changed = self._changed("kind", call.kind)
        if content_changed or raw_input_changed or kind_changed:
            changed = self._sync_derived() or changed
        if self._changed("raw_output", call.raw_output) or raw_input_changed:
            changed = self._sync_raw() or changed
        changed = self._sync_prompts() or changed
        return changed

    def _changed(self, name: str, value: object) -> bool:
        if name in self._seen and self._seen[name] is value:
            return False
        self._seen[name] = value
        return True

    def _sync_content(self, content: list[m.ToolCallContent]) -> None:
        old = self._items
        new: list[_Item] = []
        for index, item in enumerate(content):
            previous = old[index] if index < len(old) else None
            new.append(self._item_view(item, previous))
        kept = {id(i.widget) for i in new}
        for item_view in old:
            # Terminal views are kept by id (a later update may list the terminal again).
            if id(item_view.widget) not in kept and item_view.terminal is None:
                close_tree(item_view.widget)
        self._items = new
        children = tuple(i.widget for i in new)
        if children != self._content.children:
            self._content.children = children

    def _item_view(self, item: m.ToolCallContent, previous: _Item | None) -> _Item:
        if previous is not None and previous.text is None and previous.item == item:
            return previous
        shown = tool_content_shown(item, self.ctx.cwd, self.ctx.terminals)
        if isinstance(shown, TextShown):
            # Text a tool streams (a command's output, a file read back) grows in place.
            if previous is not None and previous.text is not None:
                previous.text.update(shown.text)
                previous.item = item
                return previous
            growing = GrowingText(render_sheet_markdown, cut_markdown, shown.text)
            return _Item(item, growing.widget, growing)
        if isinstance(shown, TerminalShown):
            terminal = self._terminals.get(shown.terminal_id)
            if terminal is None:
                terminal = TerminalOutputView(shown.terminal_id, self.ctx.terminals)
                self._terminals[shown.terminal_id] = terminal
            return _Item(item, terminal.widget, terminal=terminal)
        if isinstance(shown, DiffShown):
            diff = DiffView(shown)
            return _Item(item, diff.widget, diff=diff)
        return _Item(item, flat_html(shown_html(shown)))

    def _sync_derived(self) -> bool:
        # Only when the agent sent no diff of its own (if one comes later, these go).
        diffs = [d for d in self.call.diffs if d.derived]
        if diffs == self._derived_diffs:
            return False
        self._derived_diffs = diffs
        for view in self.derived:
            close_tree(view.widget)
        self.derived = [DiffView(diff_shown(diff, self.ctx.cwd)) for diff in diffs]
        self._derived.children = tuple(v.widget for v in self.derived)
        return True

    def _sync_raw(self) -> bool:
        call = self.call
        sections = [
            (title, value)
            for title, value in (("Raw input", call.raw_input), ("Raw output", call.raw_output))
            if value is not None
        ]
        if not sections:
            return False
        while len(self._raw_children) < len(sections):
            self._raw_children.append(flat_html())
        for child, (_title, value) in zip(self._raw_children, sections, strict=False):
            html = f'<div style="font-size: {SMALL_SIZE}">{json_pre(value)}</div>'
            if child.value != html:
                child.value = html
        titles = tuple(title for title, _value in sections)
        if self._raw is None:
            self._raw = w.Accordion(
                [], selected_index=None, layout=layouts.layout(margin="4px 0 0 0")
            )
        if tuple(self._raw.children) != tuple(self._raw_children[: len(sections)]):
            self._raw.children = tuple(self._raw_children[: len(sections)])
        if tuple(self._raw.titles) != titles:
            self._raw.titles = titles
        if self._raw not in self.widget.children:
            # Before the permission prompts: everything the user approves comes first.
            children = list(self.widget.children)
            children.insert(children.index(self._prompts_box), self._raw)
            self.widget.children = tuple(children)
        return True

    def _sync_prompts(self) -> bool:
        changed = False
        known = {p.key for p in self.prompts}
        added = False
        for request in self.call.permissions:
            if request.key not in known:
                self.prompts.append(
                    PermissionPrompt(
                        request,
                        self.call,
                        broker=self.ctx.broker,
                        post=self.ctx.post,
                        cwd=self.ctx.cwd,
                    )
                )
                added = True
        if added:
            self._prompts_box.children = tuple(p.widget for p in self.prompts)
            changed = True
        for prompt in self.prompts:
            changed = prompt.refresh() or changed
        return changed

    def close(self) -> None:
        """The turn ended: prompts stop taking answers; terminals show their last state."""
        for prompt in self.prompts:
            prompt.close()
        for terminal in self._terminals.values():
            terminal.refresh()

    def close_widgets(self) -> None:
        """Close every widget model of the card."""
        self.close()
        close_tree(self.widget)


class DiffView:
    """One diff as a single ``HTML`` widget (it never changes: a changed diff is a new view)."""

    def __init__(self, shown: DiffShown) -> None:
        self.shown = shown
        # A unified diff of old and new text names its file in the header already; a
        # patch the agent passed keeps its own file lines.
        self.html = diff_html(shown)
        self.widget = flat_html(self.html)

    @property
    def label(self) -> str:
        return self.shown.label

    @property
    def note(self) -> str | None:
        return self.shown.note

    @property
    def new_file(self) -> bool:
        return self.shown.new_file

    @property
    def stats(self) -> tuple[int, int]:
        return self.shown.stats


class TerminalOutputView:
    """One terminal's command, output and exit status; :meth:`refresh` re-reads it."""

    def __init__(self, terminal_id: str, lookup: TerminalLookup | None) -> None:
        self.terminal_id = terminal_id
        self._lookup = lookup
        self._header = flat_html()
        self._output = GrowingText(output_html, cut_lines)
        self._tail: w.HTML | None = None  # replaces the segments once output passes the cap
        self._status = flat_html()
        self.widget = layouts.vbox(
            [self._header, self._output.widget, self._status], margin="4px 0", width="100%"
        )
        self._signature: tuple[object, ...] | None = None
        #: The last snapshot seen; kept if the terminal later disappears (session closed).
        self.snapshot: TerminalSnapshot | None = None
        self.refresh()

    @property
    def output_text(self) -> str:
        """The output currently shown (for tests and the inspector)."""
        return self.snapshot.output if self.snapshot is not None else ""

    def refresh(self) -> bool:
        if self.snapshot is not None and self.snapshot.exited:
            return False  # an exited command's output is final
        snapshot = self._lookup(self.terminal_id) if self._lookup is not None else None
        if snapshot is None:
            snapshot = self.snapshot  # released and forgotten, or never known: keep what we showed
        signature = (
            None
            if snapshot is None
            else (
                snapshot.command,
                len(snapshot.output),
                snapshot.truncated,
                snapshot.exited,
                snapshot.exit_code,
                snapshot.signal,
            )
        )
        if signature == self._signature and self._header.value:
            return False
        self._signature = signature
        self.snapshot = snapshot
        shown = terminal_shown(self.terminal_id, snapshot)
        self._header.value = terminal_header_html(shown)
        if shown.known:
            self._show_output(shown)
        self._status.value = terminal_status_html(shown)
        return True

    def _show_output(self, shown: TerminalShown) -> None:
        if self._tail is None and not shown.dropped:
            self._output.update(shown.output)
            return
        # Past the cap (or the terminal dropped early output): the window slides, so
        # segments would be rebuilt on every refresh; one bounded widget is cheaper.
        if self._tail is None:
            self._tail = flat_html()
            self._output.close()
            self.widget.children = (self._header, self._tail, self._status)
        note = "… (earlier output dropped)\n" if shown.dropped else ""
        self._tail.value = output_html(note + shown.output)
