"""Text that grows at its end, shown as frozen HTML segments plus one live tail.

Each trait change sends the whole new value, so one ``HTML`` widget holding a growing
reply costs O(n²) bytes. Here, once the live tail has a safe cut, the part before it
goes into a new ``HTML`` widget that is rendered and sent exactly once; only the short
tail is re-rendered and re-sent on each refresh (docs/jupyter-mechanics.md §2.4).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import ipywidgets as w

from .markdown import Cut

#: Renders a piece of source text to HTML.
Render = Callable[[str], str]
#: Finds where to cut a live tail (None: not yet).
Splitter = Callable[[str], "Cut | None"]


def flat_html(value: str = "") -> w.HTML:
    """An ``HTML`` widget without the widgets' default 2 px margin, so stacked segments
    read as one flow of text."""
    return w.HTML(value=value, layout=w.Layout(margin="0", width="100%"))


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
    """A ``VBox`` that only grows at the end, its children kept in groups of ``group``.

    A ``children`` update sends the ids of all children, so appending one at a time to a
    flat box of n children costs O(n²) bytes; in groups, an append re-sends at most one
    group's ids plus the (short) list of groups.
    """

    GROUP = 32

    def __init__(
        self,
        *,
        tail: w.Widget | None = None,
        initial: Sequence[w.Widget] = (),
        group: int = GROUP,
    ) -> None:
        self._group_size = group
        self._tail = tail
        self.items: list[w.Widget] = list(initial)
        self._groups = [
            w.VBox(self.items[i : i + group], layout=w.Layout(width="100%"))
            for i in range(0, len(self.items), group)
        ]
        tail_children = [tail] if tail is not None else []
        self.widget = w.VBox([*self._groups, *tail_children], layout=w.Layout(width="100%"))

    def extend(self, widgets: Sequence[w.Widget]) -> None:
        if not widgets:
            return
        self.items.extend(widgets)
        touched: dict[int, list[w.Widget]] = {}
        new_groups: list[list[w.Widget]] = []
        for widget in widgets:
            if new_groups and len(new_groups[-1]) < self._group_size:
                new_groups[-1].append(widget)
                continue
            last = len(self._groups) - 1
            if not new_groups and last >= 0:
                pending = touched.setdefault(last, list(self._groups[last].children))
                if len(pending) < self._group_size:
                    pending.append(widget)
                    continue
            new_groups.append([widget])
        for index, children in touched.items():
            self._groups[index].children = tuple(children)
        if new_groups:
            self._groups.extend(
                w.VBox(children, layout=w.Layout(width="100%")) for children in new_groups
            )
            tail = (self._tail,) if self._tail is not None else ()
            self.widget.children = (*self._groups, *tail)

    def clear(self) -> None:
        for widget in self.items:
            close_tree(widget)
        for group in self._groups:
            group.close()
        self._groups = []
        self.items = []
        self.widget.children = (self._tail,) if self._tail is not None else ()


class GrowingText:
    """A ``VBox`` showing ``text`` as frozen segments followed by a live tail.

    :meth:`update` with the full current text; it is cheap when nothing changed. When
    the text no longer extends what was frozen (a tool replaced its output), the view
    starts over.
    """

    def __init__(self, render: Render, split: Splitter, text: str = "") -> None:
        self._render = render
        self._split = split
        # The text shown so far, the part of it that is frozen, and the Markdown (a
        # reopened code fence) to put before the live rest.
        self._text = ""
        self._consumed = 0
        self._carry = ""
        # The first text goes into the widgets' initial state: one comm_open each, no
        # update messages right after.
        heads, tail = self._advance(text)
        self._live_source: str | None = tail
        self._live = flat_html(render(tail) if tail else "")
        self._frozen = AppendOnlyBox(tail=self._live, initial=[flat_html(render(h)) for h in heads])
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

    def update(self, text: str) -> None:
        if len(text) == len(self._text) and text == self._text:
            return
        if not text.startswith(self._text[: self._consumed]):
            self._restart()
        heads, tail = self._advance(text)
        # Frozen segments are added before the tail is shortened: for a moment the text
        # shows twice rather than vanishing.
        self._frozen.extend([flat_html(self._render(head)) for head in heads])
        self._set_live(tail)

    def _advance(self, text: str) -> tuple[list[str], str]:
        """Cut what can be frozen off ``text``: (new frozen sources, live source)."""
        self._text = text
        tail = self._carry + text[self._consumed :]
        heads: list[str] = []
        while True:
            cut = self._split(tail)
            if cut is None or not cut.head:
                return heads, tail
            heads.append(cut.head)
            self._consumed = len(text) - len(cut.rest)
            self._carry = cut.carry
            tail = cut.carry + cut.rest

    def _set_live(self, source: str) -> None:
        if source != self._live_source:
            self._live_source = source
            self._live.value = self._render(source) if source else ""

    def _restart(self) -> None:
        self._frozen.clear()
        self._text = ""
        self._consumed = 0
        self._carry = ""

    def close(self) -> None:
        close_tree(self.widget)
