"""Text that grows at its end, shown as frozen HTML segments plus one live tail.

Each trait change sends the whole new value, so one ``HTML`` widget holding a growing
reply costs O(n²) bytes. Here, once the live tail has a safe cut, the part before it
goes into a new ``HTML`` widget that is rendered and sent exactly once; only the short
tail is re-rendered and re-sent on each refresh (docs/jupyter-mechanics.md §2.4).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import ipywidgets as w
from ipywidgets.widgets.widget_string import HTMLStyle

from .markdown import Cut
from .wire_budget import OPEN_COST, UPDATE_COST, WireBudget

#: Renders a piece of source text to HTML.
Render = Callable[[str], str]
#: Finds where to cut a live tail (None: not yet).
Splitter = Callable[[str], "Cut | None"]


def flat_html(value: str = "") -> w.HTML:
    """An ``HTML`` widget without the widgets' default 2 px margin, so stacked segments
    read as one flow of text."""
    return w.HTML(value=value, layout=w.Layout(margin="0", width="100%"))


class FlatParts:
    """One ``Layout`` and one ``HTMLStyle`` for many ``HTML`` widgets: each is a widget
    model of its own (about 1.4 KB of ``comm_open``), so a segment that brought its own
    would cost more on the wire than a paragraph of its text."""

    def __init__(self) -> None:
        self.layout = w.Layout(margin="0", width="100%")
        self.style = HTMLStyle()

    def html(self, value: str = "") -> w.HTML:
        """Like :func:`flat_html`, sharing these parts."""
        return w.HTML(value=value, layout=self.layout, style=self.style)


def close_tree(widget: w.Widget) -> None:
    """Close ``widget``, its children and their Layout/Style models (each has a comm;
    ``Widget.close`` closes only its own)."""
    for child in getattr(widget, "children", ()) or ():
        close_tree(child)
    for name in ("layout", "style"):
        part = getattr(widget, name, None)
        if isinstance(part, w.Widget):
            part.close()
    widget.close()


class AppendOnlyBox:
    """A ``VBox`` that only grows at the end, its children kept in groups of groups.

    A ``children`` update sends the ids of all children (about 45 bytes each), so
    appending one at a time to a flat box of n children costs O(n²) bytes. Here children
    sit in groups of ``group``, the groups in groups of ``group``, and the box lists those:
    an append re-sends at most one group's ids and one group of groups' ids (a few hundred
    bytes), and the box's own list grows by one every ``group``² children.
    """

    GROUP = 8

    def __init__(
        self,
        *,
        tail: w.Widget | None = None,
        initial: Sequence[w.Widget] = (),
        group: int = GROUP,
    ) -> None:
        self._group_size = group
        self._tail = tail
        self._layout: w.Layout | None = None  # shared by the groups (see FlatParts)
        self.items: list[w.Widget] = []
        # The groups and their children, and the groups of groups and theirs (the ids of
        # their groups): kept here so a batch of appends sends one update per group.
        self._inner: list[w.VBox] = []
        self._inner_items: list[list[w.Widget]] = []
        self._outer: list[w.VBox] = []
        self._outer_items: list[list[int]] = []
        # The first children go into the widgets' initial state: no update after the open.
        self._grow(initial)
        self.widget = w.VBox(self._children(), layout=w.Layout(width="100%"))

    def extend(self, widgets: Sequence[w.Widget]) -> None:
        if self._grow(widgets):
            self.widget.children = self._children()

    def _grow(self, widgets: Sequence[w.Widget]) -> bool:
        """Place ``widgets``; True if the box's own list of groups changed."""
        size = self._group_size
        inner_touched: set[int] = set()
        outer_touched: set[int] = set()
        for widget in widgets:
            self.items.append(widget)
            if not self._inner_items or len(self._inner_items[-1]) == size:
                self._inner_items.append([])
                if not self._outer_items or len(self._outer_items[-1]) == size:
                    self._outer_items.append([])
                self._outer_items[-1].append(len(self._inner_items) - 1)
                outer_touched.add(len(self._outer_items) - 1)
            self._inner_items[-1].append(widget)
            inner_touched.add(len(self._inner_items) - 1)
        for index in sorted(inner_touched):
            self._set(self._inner, index, self._inner_items[index])
        outer_count = len(self._outer)
        for index in sorted(outer_touched):
            self._set(self._outer, index, [self._inner[i] for i in self._outer_items[index]])
        return len(self._outer) != outer_count

    def _set(self, boxes: list[w.VBox], index: int, children: list[w.Widget]) -> None:
        """Give group ``index`` of ``boxes`` these children (a new group opens with them)."""
        if index < len(boxes):
            boxes[index].children = tuple(children)
            return
        if self._layout is None:
            self._layout = w.Layout(width="100%")
        boxes.append(w.VBox(children, layout=self._layout))

    def _children(self) -> tuple[w.Widget, ...]:
        tail = (self._tail,) if self._tail is not None else ()
        return (*self._outer, *tail)

    def remove(self, widgets: Sequence[w.Widget]) -> None:
        """Take ``widgets`` out (not closed): the groups are made again around the rest, so
        this costs about what appending the rest did; for dropping many at a time."""
        gone = {id(widget) for widget in widgets}
        rest = [widget for widget in self.items if id(widget) not in gone]
        for group in (*self._inner, *self._outer):
            group.close()
        self._inner, self._inner_items, self._outer, self._outer_items = [], [], [], []
        self.items = []
        self._grow(rest)
        self.widget.children = self._children()

    def clear(self) -> None:
        items = self.items
        self.remove(items)
        for widget in items:
            close_tree(widget)


class GrowingText:
    """A ``VBox`` showing ``text`` as frozen segments followed by a live tail.

    :meth:`update` with the full current text; it is cheap when nothing changed. When
    the text no longer extends what was frozen (a tool replaced its output), the view
    starts over.
    """

    def __init__(
        self, render: Render, split: Splitter, text: str = "", *, budget: WireBudget | None = None
    ) -> None:
        self._render = render
        self._split = split
        self._budget = budget or WireBudget()
        # The text shown so far, the part of it that is frozen, and the Markdown (a
        # reopened code fence) to put before the live rest.
        self._text = ""
        self._consumed = 0
        self._carry = ""
        # The first text goes into the widgets' initial state: one comm_open each, no
        # update messages right after.
        heads, tail, self._consumed, self._carry = self._advance(text)
        self._text = text
        self._parts = FlatParts()
        self._live_source: str | None = tail
        self._live = self._parts.html(render(tail) if tail else "")
        self._frozen = AppendOnlyBox(
            tail=self._live, initial=[self._parts.html(render(h)) for h in heads]
        )
        self.widget = self._frozen.widget

    @property
    def text(self) -> str:
        return self._text

    @property
    def segments(self) -> list[w.HTML]:
        """The frozen segment widgets, oldest first (the live tail is not one)."""
        return list(self._frozen.items)

    @property
    def live(self) -> w.HTML:
        return self._live

    def update(self, text: str, *, paced: bool = False) -> bool:
        """Show ``text``. ``paced`` (the text is still streaming): only if the wire budget
        affords it now; False means nothing was sent, and a later call shows it."""
        if len(text) == len(self._text) and text == self._text:
            return True
        if not text.startswith(self._text[: self._consumed]):
            self._restart()
            paced = False
        heads, tail, consumed, carry = self._advance(text)
        frozen = [self._render(head) for head in heads]
        live = (self._render(tail) if tail else "") if tail != self._live_source else None
        cost = sum(len(html) + OPEN_COST for html in frozen)
        cost += len(live) + UPDATE_COST if live is not None else 0
        if paced and not self._budget.affords(len(text), cost):
            return False
        self._budget.spend(cost)
        self._text, self._consumed, self._carry = text, consumed, carry
        # Frozen segments are added before the tail is shortened: for a moment the text
        # shows twice rather than vanishing.
        self._frozen.extend([self._parts.html(html) for html in frozen])
        if live is not None:
            self._live_source = tail
            self._live.value = live
        return True

    def _advance(self, text: str) -> tuple[list[str], str, int, str]:
        """Cut what can be frozen off ``text``: (new frozen sources, live source, and the
        frozen length and carry after them)."""
        consumed, carry = self._consumed, self._carry
        tail = carry + text[consumed:]
        heads: list[str] = []
        while True:
            cut = self._split(tail)
            if cut is None or not cut.head:
                return heads, tail, consumed, carry
            heads.append(cut.head)
            consumed = len(text) - len(cut.rest)
            carry = cut.carry
            tail = cut.carry + cut.rest

    def _restart(self) -> None:
        self._frozen.clear()  # closes the shared parts too (close_tree): new ones
        self._parts = FlatParts()
        self._live.layout, self._live.style = self._parts.layout, self._parts.style
        self._text = ""
        self._consumed = 0
        self._carry = ""

    def close(self) -> None:
        close_tree(self.widget)
