"""The turn's review bar: when a turn changed files or cells, the page that ran its
``%acp`` cell draws the changes in that cell (outside the notebook's model, so nothing of
it is saved) with a Revert per hunk and Revert all; a click comes back here and runs
:func:`~acp_notebook.notebook.changes.revert.revert` on the agent loop, and the bar is redrawn
with what it did. The wire shape is :mod:`..frontend.changes`; the messages are
``review`` and ``revert`` (:mod:`..frontend.protocol`).

Without the extension (VS Code, classic Notebook, headless) nothing is sent: the turn's
transcript keeps its "Changed in this turn" line, and ``%acp --changes`` its widget.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...client.checkpoints import TurnChanges
from ..frontend import frontends
from ..frontend.changes import review_fields, revision
from ..frontend.live import LiveNotebook
from ..runtime.loop import AgentLoop
from .revert import revert

GONE = (
    "This kernel no longer knows these changes (acp_notebook was reloaded): nothing was "
    "reverted; run the turn's %acp cell again to review what is left."
)
MOVED = (
    "Nothing was reverted: that change was reverted or changed meanwhile; the list below "
    "is as it is now."
)


@dataclass(frozen=True)
class Offer:
    turn: TurnChanges
    cell_id: str


class PageChanges:
    """The turns' changes drawn in the page, each with its Revert buttons, by review id
    (the wire's name; this kernel's)."""

    def __init__(self, loop: Callable[[], AgentLoop]) -> None:
        self._loop = loop
        self._offers: dict[str, Offer] = {}
        self._ids = itertools.count(1)
        #: One revert at a time (agent loop): two quick clicks must not interleave.
        self._lock: asyncio.Lock | None = None
        #: The pages (comm ids) that were sent every offer (no offer before this).
        self._shown = {live.comm_id for live in frontends.connected()}
        frontends.handle("revert", self._on_revert)
        frontends.on_change(self._on_connections)

    def offer(self, turn: TurnChanges, cell_id: str) -> bool:
        """Draw ``turn``'s changes in the cell ``cell_id`` of every connected page (a page
        without that cell ignores it); False when no page is connected. Any thread."""
        notebooks = frontends.connected()
        if not notebooks:
            return False
        review = f"r{next(self._ids)}"
        self._offers[review] = Offer(turn, cell_id)
        for live in notebooks:
            self._shown.add(live.comm_id)
            live.send("review", **review_fields(turn, review, cell_id))
        return True

    def redraw(self, turn: TurnChanges, said: str | None = None) -> None:
        """Every bar of ``turn`` shows it as it is now (after a revert, from a bar or
        ``%acp --undo``), with ``said``. Any thread."""
        reviews = [review for review, offer in list(self._offers.items()) if offer.turn is turn]
        for live in frontends.connected() if reviews else []:
            for review in reviews:
                live.send("review", **review_fields(turn, review, None, said))

    def _on_connections(self) -> None:
        """A page connected (opened, reloaded): it gets the bars of the turns that have
        something left to revert (the newest per cell). Any thread."""
        connected = frontends.connected()
        self._shown &= {live.comm_id for live in connected}
        newest = {offer.cell_id: (review, offer) for review, offer in list(self._offers.items())}
        for live in connected:
            if live.comm_id in self._shown:
                continue
            self._shown.add(live.comm_id)
            for review, offer in newest.values():
                if offer.turn.revertible:
                    live.send("review", **review_fields(offer.turn, review, offer.cell_id))

    def _on_revert(self, live: LiveNotebook, data: dict[str, Any]) -> None:
        """A Revert click (kernel main thread): the revert waits for the page's answers
        on this thread, so it runs on the agent loop."""
        self._loop().submit(self._revert, live, data)

    async def _revert(self, live: LiveNotebook, data: dict[str, Any]) -> None:
        review = str(data.get("review"))
        offer = self._offers.get(review)
        if offer is None:
            live.send(
                "review",
                review=review,
                cell_id=None,
                changes=[],
                revert_all=False,
                forgotten=True,
                message=GONE,
            )
            return
        turn = offer.turn
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            said = await self._run(live, turn, data)
        self.redraw(turn, said)  # every bar of the turn (its %acp cell, --changes)

    @staticmethod
    async def _run(live: LiveNotebook, turn: TurnChanges, data: dict[str, Any]) -> str:
        """The revert ``data`` asks for, in one sentence."""
        index, hunk = data.get("change"), data.get("hunk")
        if index is None:
            return (await revert(turn, live=live)).sentence()
        changes = list(turn)
        if not isinstance(index, int) or not 0 <= index < len(changes):
            return MOVED
        change = changes[index]
        if data.get("revision") != revision(change) or not change.revertible:
            return MOVED
        if hunk is not None and (
            change.whole() or not isinstance(hunk, int) or not 0 <= hunk < len(change.hunks())
        ):
            return MOVED
        return (await revert(turn, change, hunk, live=live)).sentence()
