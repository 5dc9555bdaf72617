"""The control that reverts what the last turn changed: ``%acp --undo``."""

from __future__ import annotations

from ..answers import Text
from ..revert import revert
from .base import ControlContext, ControlFailed


async def undo(ctx: ControlContext) -> Text:
    """Revert the files and cells the session's last changing turn changed, unless one of
    them was changed after it (then nothing is reverted, and the answer says which)."""
    session = ctx.existing_session()
    turn = session.checkpoints.last() if session is not None else None
    if turn is None:
        return Text(
            "Nothing to undo: no turn of this session changed a file or a cell that is still kept."
        )
    if not ctx.awaited and any(change.target == "cell" for change in turn.revertible):
        raise ControlFailed(
            "The last turn changed cells, which are reverted only while the cell waits for "
            "the notebook: put `%acp --undo` alone on a line of a cell (ipykernel 7.4 or newer)."
        )
    return Text((await revert(turn)).sentence())
