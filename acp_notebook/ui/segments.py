"""Text that grows at its end, shown as frozen HTML segments plus one live tail.

Each trait change sends the whole new value, so one ``HTML`` widget holding a growing
reply costs O(n²) bytes. Here, once the live tail has a safe cut, the part before it
goes into a new widget that is sent exactly once; only the short tail is re-rendered and
re-sent on each refresh (docs/jupyter-notes.md). A frozen segment is an ``HTML``
widget, or (``markdown``) an ``Output`` widget holding the segment's Markdown, which the
frontend renders: about the text's size on the wire, where its HTML is 1.7 times it
(the budget: live view and saved transcript together at most 3× the reply).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import ipywidgets as w

from . import layouts
from .markdown import Cut
from .wire_budget import OPEN_COST, UPDATE_COST, WireBudget

#: Renders a piece of source text to HTML.
Render = Callable[[str], str]
#: Finds where to cut a live tail (None: not yet).
Splitter = Callable[[str], "Cut | None"]
#: Makes a piece of source text safe to hand to the frontend as Markdown.
SafeMarkdown = Callable[[str], str]


def flat_html(value: str = "") -> w.HTML:
    """An ``HTML`` widget without the widgets' default 2 px margin, so stacked segments
    read as one flow of text (its layout and style shared: :mod:`.layouts`)."""
    return layouts.html(value, margin="0", width="100%")


def markdown_output(source: str) -> w.Output:
    """An ``Output`` widget showing ``source`` (safe Markdown) as the frontend renders it,
    laid out as :func:`flat_html`."""
    shown = {"output_type": "display_data", "data": {"text/markdown": source}, "metadata": {}}
    return w.Output(layout=layouts.layout(margin="0", width="100%"), outputs=(shown,))


def close_tree(widget: w.Widget) -> None:
    """Close ``widget``, its children and their Layout/Style models (each has a comm;
    ``Widget.close`` closes only its own), but for the models other views share."""
    if layouts.is_shared(widget):
        return
    for child in getattr(widget, "children", ()) or ():
        close_tree(child)
    for name in ("layout", "style"):
        part = getattr(widget, name, None)
        if isinstance(part, w.Widget) and not layouts.is_shared(part):
            part.close()
    widget.close()


class AppendOnlyBox:
    """A ``VBox`` that only grows at the end, its children kept in groups of groups.

    A ``children`` update sends the ids of all children (about 45 bytes each), so
    appending one at a time to a flat box of n children costs O(n²) bytes. Here children
    sit in groups of ``group``, the groups in groups of ``group``, and the box lists those:
    an append re-sends at most one group's ids and one group of groups' ids (a few hundred
    bytes), and the box's own list grows by one every ``group``² children. Up to ``group``
    children the box lists them itself: the groups (widget models of their own, about
    0.6 KB each) are made when the box first holds more.
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
        self.items: list[w.Widget] = []
        # The groups and their children, and the groups of groups and theirs (the ids of
        # their groups): kept here so a batch of appends sends one update per group.
        self._inner: list[w.VBox] = []
        self._inner_items: list[list[w.Widget]] = []
        self._outer: list[w.VBox] = []
        self._outer_items: list[list[int]] = []
        # The first children go into the widgets' initial state: no update after the open.
        self._grow(initial)
        self.widget = layouts.vbox(self._children(), width="100%")

    def extend(self, widgets: Sequence[w.Widget]) -> None:
        if self._grow(widgets):
            self.widget.children = self._children()

    def _grow(self, widgets: Sequence[w.Widget]) -> bool:
        """Place ``widgets``; True if the box's own list changed."""
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
        if len(self.items) <= size:  # the box lists the children itself
            return bool(widgets)
        if not self._inner:  # past the first ``group``: every group is made now
            inner_touched = set(range(len(self._inner_items)))
            outer_touched = set(range(len(self._outer_items)))
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
        boxes.append(layouts.vbox(children, width="100%"))

    def _children(self) -> tuple[w.Widget, ...]:
        tail = (self._tail,) if self._tail is not None else ()
        return (*(self._outer if self._inner else self.items), *tail)

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
    starts over. ``markdown``: frozen segments are that function's Markdown of their
    source, rendered by the frontend (the live tail is still ``render``'s HTML).
    """

    def __init__(
        self,
        render: Render,
        split: Splitter,
        text: str = "",
        *,
        budget: WireBudget | None = None,
        markdown: SafeMarkdown | None = None,
    ) -> None:
        self._render = render
        self._markdown = markdown
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
        self._live_source: str | None = tail
        self._live = flat_html(render(tail) if tail else "")
        self._frozen = AppendOnlyBox(
            tail=self._live, initial=[self._segment(self._frozen_value(h)) for h in heads]
        )
        self.widget = self._frozen.widget

    @property
    def text(self) -> str:
        return self._text

    @property
    def segments(self) -> list[w.Widget]:
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
        frozen = [self._frozen_value(head) for head in heads]
        live = (self._render(tail) if tail else "") if tail != self._live_source else None
        cost = sum(len(value) + OPEN_COST for value in frozen)
        cost += len(live) + UPDATE_COST if live is not None else 0
        if paced and not self._budget.affords(len(text), cost):
            return False
        self._budget.spend(cost)
        self._text, self._consumed, self._carry = text, consumed, carry
        # Frozen segments are added before the tail is shortened: for a moment the text
        # shows twice rather than vanishing.
        self._frozen.extend([self._segment(value) for value in frozen])
        if live is not None:
            self._live_source = tail
            self._live.value = live
        return True

    def _frozen_value(self, head: str) -> str:
        return self._markdown(head) if self._markdown is not None else self._render(head)

    def _segment(self, value: str) -> w.Widget:
        return markdown_output(value) if self._markdown is not None else flat_html(value)

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
        self._frozen.clear()
        self._text = ""
        self._consumed = 0
        self._carry = ""

    def close(self) -> None:
        close_tree(self.widget)
