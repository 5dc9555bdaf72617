"""The controls over what the session's turns changed: ``%acp --changes`` (the last
changing turn's files and cells, with Revert per hunk and Revert all) and ``%acp --undo``
(revert that turn)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...client.checkpoints import Change, TurnChanges
from ..answers import Text
from ..revert import revert
from .base import ControlContext, ControlFailed

if TYPE_CHECKING:
    import ipywidgets as w

NOTHING = "Nothing to undo: no turn of this session changed a file or a cell that is still kept."


def _last(ctx: ControlContext) -> TurnChanges | None:
    session = ctx.existing_session()
    return session.checkpoints.last() if session is not None else None


async def changes(ctx: ControlContext) -> Text | w.Widget:
    """The files and cells the session's last changing turn changed, to review and revert:
    buttons where someone can click, else the list and its diffs as text."""
    turn = _last(ctx)
    if turn is None:
        return Text(NOTHING)
    if not ctx.interactive:
        hunks = [h.diff() for change in turn.revertible for h in change.hunks()]
        return Text("\n".join([turn.summary(), *hunks, "`%acp --undo` reverts it."]))
    from ...ui.changes import ChangesView

    async def revert_one(change: Change | None, hunk: int | None) -> str:
        return (await revert(turn, change, hunk)).sentence()

    return ChangesView(turn, revert_one, ctx.agents.loop.submit).widget


async def undo(ctx: ControlContext) -> Text:
    """Revert the files and cells the session's last changing turn changed, unless one of
    them was changed after it (then nothing is reverted, and the answer says which)."""
    turn = _last(ctx)
    if turn is None:
        return Text(NOTHING)
    if not ctx.awaited and any(change.target == "cell" for change in turn.revertible):
        raise ControlFailed(
            "The last turn changed cells, which are reverted only while the cell waits for "
            "the notebook: put `%acp --undo` alone on a line of a cell (ipykernel 7.4 or newer)."
        )
    return Text((await revert(turn)).sentence())
