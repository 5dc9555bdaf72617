"""``%acp --inspect`` / ``acp.inspector()``: the live protocol inspector in the cell.

The view (``ui/inspector_view.py``) follows the notebook's message log (``inspector.py``,
bounded in bytes) as messages arrive. Where no one can click (headless runs), and in a saved
notebook, the same timeline is the lanes picture and a Markdown table of the last
:data:`TABLE_ROWS` messages, checked against the schema.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .base import ControlContext

if TYPE_CHECKING:
    from ...client.timeline import Timeline
    from ...ui.inspector_view import InspectorView
    from ..inspector import MessageLog

#: Rows of the Markdown table (headless, saved).
TABLE_ROWS = 50
#: Live views following the log at once; an older one stops following (a cell re-run
#: must not leave views refreshing forever behind it).
LIVE_VIEWS = 2


class TimelineTable:
    """The timeline as a Markdown table (and plain text), the last rows checked."""

    def __init__(self, timeline: Timeline, rows: int = TABLE_ROWS) -> None:
        self.timeline = timeline
        self.rows = rows
        for row in timeline.rows[-rows:]:
            timeline.flags(row)  # a batch after the traffic, never on the message path

    def _repr_markdown_(self) -> str:
        return self.timeline.markdown(limit=self.rows)

    def _repr_html_(self) -> str:
        from ...ui.timeline_html import lanes_html

        return lanes_html(self.timeline.rows[-self.rows :], self.timeline)

    def __repr__(self) -> str:
        return self.timeline.last(self.rows).text()


class InspectorDisplay:
    """The live view, with the Markdown table beside it for renderers without widgets
    (a saved notebook on GitHub, nbconvert)."""

    def __init__(
        self,
        view: InspectorView,
        table: Callable[[], TimelineTable],
        unsubscribe: Callable[[], None],
    ) -> None:
        self.view = view
        self.widget = view.widget
        self._table = table
        self._unsubscribe = unsubscribe

    def close(self) -> None:
        """Stop following the log (the view keeps what it shows)."""
        self._unsubscribe()
        self.view.close()

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle: dict[str, Any] = dict(self.widget._repr_mimebundle_(**kwargs) or {})
        table = self._table()
        bundle["text/markdown"] = table._repr_markdown_()
        bundle["text/html"] = table._repr_html_()
        bundle["text/plain"] = repr(table)
        return bundle


_live: deque[InspectorDisplay] = deque()


def _snapshot(log: MessageLog) -> tuple[list[Any], int, int]:
    dropped = log.dropped
    return log.events(), dropped.messages, dropped.bytes


async def inspector(ctx: ControlContext) -> TimelineTable | InspectorDisplay:
    """Every JSON-RPC message of the notebook's agents, both ways, live: the `sessionUpdate`
    kind, requests paired with their answers and the time between, error answers and
    messages that break the schema marked; filter by method, kind and session; choose a
    row for the message in full and the spec section that defines it."""
    log = ctx.agents.log

    def table() -> TimelineTable:
        from ...client.timeline import Timeline

        events, dropped, dropped_bytes = _snapshot(log)
        return TimelineTable(Timeline.of(events, dropped=dropped, dropped_bytes=dropped_bytes))

    if not ctx.interactive:
        return table()
    from ...ui.inspector_view import InspectorView

    loop = ctx.agents.loop  # built here, on the loop: only it writes the view's widgets
    view = InspectorView(
        lambda: _snapshot(log),
        post=loop.post,
        schedule_later=loop.call_later,
        cwd=ctx.agents.cwd,
    )
    display = InspectorDisplay(view, table, log.subscribe(view.poke))
    _live.append(display)
    while len(_live) > LIVE_VIEWS:
        _live.popleft().close()
    return display
