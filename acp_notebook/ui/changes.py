"""A turn's changes list: each file and cell the turn changed, its hunks tinted as a
diff, a **Revert** per hunk (per change for a created or deleted target) and
**Revert all**.

A click only posts to the agent loop (``post``), where ``revert(change, hunk)`` (None,
None: everything) runs and says what it did in one sentence; the view then redraws from
the turn's record (:class:`~acp_notebook.client.checkpoints.TurnChanges`), which the
revert updated. Reverting a target changed after the turn is refused by the revert, and
the sentence says so. Everything here but the constructor runs on the agent loop.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import ipywidgets as w

from ..client.checkpoints import Change, TurnChanges
from .diff import diff_body_html
from .segments import flat_html
from .style import CODE_FONT, ERROR, FG, SUCCESS, UI_SIZE, esc, muted, span

#: ``revert(change or None for all, hunk index or None for all of it)`` → a sentence.
Revert = Callable[[Change | None, int | None], Awaitable[str]]
#: Runs a coroutine function on the agent loop (from a click's thread).
Submit = Callable[[Callable[[], Awaitable[None]]], object]


def change_header(change: Change) -> str:
    added, removed = change.stats
    icon = "📓" if change.target == "cell" else "📝"
    parts = [span(esc(change.label), f"font-family: {CODE_FONT}; font-weight: 600; color: {FG}")]
    if change.whole() or change.unavailable or change.reverted:
        parts.append(muted(esc(change.describe().removeprefix(change.label).strip())))
    else:
        parts.append(span(f"+{added}", f"color: {SUCCESS}; font-family: {CODE_FONT}"))
        parts.append(span(f"−{removed}", f"color: {ERROR}; font-family: {CODE_FONT}"))
    return f'<div style="font-size: {UI_SIZE}; line-height: 1.6">{icon} {" ".join(parts)}</div>'


class ChangesView:
    """The changes of one turn, with Revert buttons."""

    def __init__(self, changes: TurnChanges, revert: Revert, submit: Submit) -> None:
        self.changes = changes
        self._revert = revert
        self._submit = submit
        self._status = w.HTML("")
        self._rows = w.VBox([])
        self.widget = w.VBox([self._rows, self._status], layout=w.Layout(width="100%"))
        self.render()

    def render(self) -> None:
        rows: list[w.Widget] = [flat_html("<b>Changed in this turn</b>")]
        for change in self.changes:
            rows.append(flat_html(change_header(change)))
            if not change.revertible or self.changes.forgotten:
                continue
            if change.whole():
                rows.append(self._button("Revert", change, None))
                continue
            for index, hunk in enumerate(change.hunks()):
                rows.append(flat_html(diff_body_html(hunk.diff())))
                rows.append(self._button("Revert", change, index))
        if self.changes.revertible:
            rows.append(self._button("Revert all", None, None))
        self._rows.children = tuple(rows)

    def _button(self, label: str, change: Change | None, hunk: int | None) -> w.Button:
        button = w.Button(description=label, layout=w.Layout(width="auto"))
        button.on_click(lambda _button: self._submit(lambda: self._clicked(change, hunk)))
        return button

    async def _clicked(self, change: Change | None, hunk: int | None) -> None:
        sentence = await self._revert(change, hunk)
        self._status.value = f'<div style="font-size: {UI_SIZE}">{esc(sentence)}</div>'
        self.render()
