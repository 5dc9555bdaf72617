"""The live protocol inspector (``%acp --inspect``): the timeline of every JSON-RPC message
both ways, filterable, one message in full with the spec section that defines it.

What a row means comes from :mod:`acp_notebook.client.timeline`; this module only shows it.
Above the list, the last :data:`DRAWN` rows are drawn as arrows between the lanes of the
client, the agent and the notebook tools (``ui/timeline_html.py``); a click on one opens its
JSON and schema check. The rows are a ``Select`` (plain text: nothing an agent writes can
become markup there); choosing one shows its pretty JSON, the request or answer it pairs with, the time between,
its schema verdict and the spec link (all escaped).

Threads, like the turn view: the widgets are written on the agent loop thread only. The log
pokes :meth:`InspectorView.poke` as messages arrive (on the loop); refreshes are coalesced.
A selection or filter change (a comm thread) is posted to the loop.

Cheap while a turn streams: a refresh adds only the new messages to the timeline and shows
the last :data:`SHOWN` rows. Schema checks run when the traffic pauses (a refresh that found
nothing new), for the rows shown, and for a row when it is chosen; never per message.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import ipywidgets as w

from ..client.timeline import Row, Timeline, TimelineBuilder, text_cells, warm_up
from ..protocol.jsonrpc import TraceEvent
from .coalesce import Coalescer, ScheduleLater
from .request import Post, safe_post
from .style import ERROR, MUTED, SMALL_SIZE, div, esc, span
from .timeline_html import detail_html, lanes_html

__all__ = ["InspectorView", "detail_html", "row_label"]

#: What the view reads: the log's messages, and how many messages / bytes it dropped.
LogSnapshot = tuple[Sequence[tuple[str, TraceEvent]], int, int]
LogSource = Callable[[], LogSnapshot]

#: Rows shown (the newest); the log itself keeps more, bounded in bytes.
SHOWN = 200
#: Rows drawn in the lanes picture (the newest of those shown).
DRAWN = 40
#: Rows "Schema breaks only" checks at most (the newest), so a click stays quick.
CHECKED = 1000
#: Seconds between two refreshes while messages stream.
INTERVAL = 0.25
ALL = "(all)"


def row_label(row: Row, timeline: Timeline) -> str:
    """One line of the list: a mark (✖ error, ⚠ breaks the schema), then the row's cells."""
    checked = timeline.checked(row)
    mark = "✖" if row.category == "error" else "⚠" if checked and timeline.flags(row) else " "
    cells = text_cells(row, timeline)[:8]  # the verdict is in the detail
    arrow = "→" if row.sender == "client" else "←"
    number, sender, *rest = cells
    return f"{mark} #{number} {arrow} {sender}: " + "  ".join(cell for cell in rest if cell)


class InspectorView:
    """The inspector's widget (``.widget``); see the module docstring."""

    def __init__(
        self,
        source: LogSource,
        *,
        post: Post,
        schedule_later: ScheduleLater | None = None,
        interval: float = INTERVAL,
        cwd: str | None = None,
        shown: int = SHOWN,
    ) -> None:
        self.source = source
        self.post = post
        self.cwd = cwd
        self.shown = shown
        self.builder = TimelineBuilder()
        self.timeline = self.builder.timeline()
        self._visible: list[Row] = []
        self._coalescer = (
            Coalescer(schedule_later, interval, callback=self.refresh)
            if schedule_later is not None
            else None
        )
        self._closed = False
        self._choices: dict[str, tuple[str, ...]] = {}

        self.header = w.HTML()
        self.method = w.Dropdown(options=[ALL], value=ALL, description="method")
        self.kind = w.Dropdown(options=[ALL], value=ALL, description="kind")
        self.session = w.Dropdown(options=[ALL], value=ALL, description="session")
        # Auto width: a button's default 148 px cut its own label ("Schema breaks o…").
        self.flagged = w.ToggleButton(
            value=False, description="Schema breaks only", layout=w.Layout(width="auto")
        )
        for control in (self.method, self.kind, self.session):
            control.layout = w.Layout(width="auto")
            control.style = {"description_width": "auto"}
            control.observe(self._on_filter, names="value")
        self.flagged.observe(self._on_filter, names="value")
        self.rows = w.Select(options=[], rows=14, layout=w.Layout(width="100%"))
        self.rows.observe(self._on_choose, names="value")
        self.detail = w.HTML()
        self.lanes = w.HTML()
        filters = w.HBox([self.method, self.kind, self.session, self.flagged])
        self.widget = w.VBox([self.header, filters, self.lanes, self.rows, self.detail])
        threading.Thread(target=warm_up, name="acp-inspector-warm-up", daemon=True).start()
        self.refresh()

    # ------------------------------------------------------------------ following the log

    def poke(self) -> None:
        """A message was recorded (loop thread): refresh within the interval."""
        if self._coalescer is not None:
            self._coalescer.poke()
        else:
            self.refresh()

    def close(self) -> None:
        self._closed = True
        if self._coalescer is not None:
            self._coalescer.close()

    def refresh(self) -> bool:
        """Add the new messages and redraw what changed; True if anything did."""
        if self._closed:
            return False
        events, dropped, dropped_bytes = self.source()
        added = self.builder.sync(events, dropped, dropped_bytes)
        if not added and self.timeline.rows:
            # The traffic paused: the time to check the rows shown (never while streaming).
            return self._check_visible()
        self.timeline = self.builder.timeline()
        self._sync_choices()
        self._show_rows()
        if self._coalescer is not None and added:
            self._coalescer.poke()  # one more pass after the burst, to check the rows
        return True

    def _check_visible(self) -> bool:
        unchecked = [row for row in self._visible if not self.timeline.checked(row)]
        if not unchecked:
            return False
        for row in unchecked:
            self.timeline.flags(row)
        self._show_rows()
        return True

    # ------------------------------------------------------------------ filters

    def filtered(self) -> Timeline:
        """The timeline as the filters choose it."""

        def chosen(control: w.Dropdown) -> str | None:
            return None if control.value == ALL else str(control.value)

        timeline = self.timeline.filter(
            method=chosen(self.method), kind=chosen(self.kind), session=chosen(self.session)
        )
        if self.flagged.value:
            # Checks (once each) at most the newest CHECKED rows: a click must not keep the
            # agent loop busy validating a whole 5,000-message log.
            return timeline.breaking(check=CHECKED)
        return timeline

    def _sync_choices(self) -> None:
        for name, control, present in (
            ("method", self.method, self.timeline.methods()),
            ("kind", self.kind, self.timeline.kinds()),
            ("session", self.session, self.timeline.sessions()),
        ):
            options = (ALL, *present)
            if self._choices.get(name) != options:
                self._choices[name] = options
                value = control.value if control.value in options else ALL
                control.options = options
                control.value = value

    def _on_filter(self, _change: Any) -> None:
        safe_post(self.post, self._show_rows)

    # ------------------------------------------------------------------ rows and detail

    def _show_rows(self) -> None:
        filtered = self.filtered()
        self._visible = filtered.rows[-self.shown :]
        labels = [(row_label(row, self.timeline), row.number) for row in self._visible]
        chosen = self.rows.value
        if list(self.rows.options) != labels:
            self.rows.options = labels
            if chosen in {number for _, number in labels}:
                self.rows.value = chosen
        self.header.value = self._header_html(filtered)
        lanes = lanes_html(self._visible[-DRAWN:], self.timeline, self.cwd, check=False)
        if self.lanes.value != lanes:  # a redraw closes the message opened in it
            self.lanes.value = lanes

    def _header_html(self, filtered: Timeline) -> str:
        timeline = self.timeline
        parts = [f"{len(timeline)} messages"]
        errors = sum(1 for row in timeline if row.category == "error")
        if errors:
            parts.append(span(esc(f"{errors} error answers"), f"color: {ERROR}"))
        flagged = sum(1 for row in timeline if timeline.checked(row) and timeline.flags(row))
        if flagged:
            parts.append(span(esc(f"{flagged} break the schema"), f"color: {ERROR}"))
        pending = sum(1 for row in timeline if row.pending)
        if pending:
            parts.append(f"{pending} awaiting an answer")
        if len(filtered) > len(self._visible):
            parts.append(f"showing the last {len(self._visible)} of {len(filtered)}")
        if timeline.dropped:
            parts.append(esc(timeline.dropped_note()))
        return div(" · ".join(parts), f"color: {MUTED}; font-size: {SMALL_SIZE}")

    def _on_choose(self, change: dict[str, Any]) -> None:
        number = change.get("new")
        if isinstance(number, int):
            safe_post(self.post, lambda: self.show(number))

    def show(self, number: int) -> None:
        """Show message ``number`` in full below the list (loop thread)."""
        try:
            row = self.timeline.row(number)
        except IndexError:
            self.detail.value = ""
            return
        self.detail.value = detail_html(row, self.timeline, self.cwd)
