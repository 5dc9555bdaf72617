"""The controls over what the session's turns changed: ``%acp --changes`` (the last
changing turn's files and cells, with Revert per hunk and Revert all) and ``%acp --undo``
(revert that turn)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...client.formatting import fence
from ..frontend import frontends
from .answers import Text
from .base import ControlContext, ControlFailed

if TYPE_CHECKING:
    import ipywidgets as w

    from ...client.checkpoints import Change, TurnChanges

NOTHING = "Nothing to undo: no turn of this session changed a file or a cell that is still kept."


UNDO_HINT = "`%acp --undo` reverts it."


def saved_form(turn: TurnChanges) -> dict[str, str]:
    """The changes as words and diffs (Markdown and plain text): the answer where no one
    can click, and what the widget leaves where it cannot run (nbconvert, a viewer
    without widgets)."""
    hunks = [h.diff() for change in turn.revertible for h in change.hunks()]
    plain = "\n".join([turn.summary(), *hunks, UNDO_HINT])
    markdown = "\n\n".join([turn.summary(), *(fence(h, "diff") for h in hunks), UNDO_HINT])
    return {"text/markdown": markdown + "\n", "text/plain": plain}


class WithSavedForm:
    """A widget displayed with its saved form beside it in the same output: JupyterLab
    shows the widget; nbconvert and viewers without the widget's state show the text."""

    def __init__(self, widget: w.Widget, saved: dict[str, str]) -> None:
        self.widget = widget
        self.saved = saved

    def _repr_mimebundle_(self, **kwargs: object) -> dict[str, object]:
        return {**self.widget._repr_mimebundle_(**kwargs), **self.saved}


def _last(ctx: ControlContext) -> TurnChanges | None:
    session = ctx.existing_session()
    return session.checkpoints.last() if session is not None else None


async def changes(ctx: ControlContext) -> Text | WithSavedForm:
    """The files and cells the session's last changing turn changed, to review and revert:
    the page's review bar in this cell (JupyterLab, Notebook 7 with the extension), else
    buttons where someone can click, else the list and its diffs as text (which the
    buttons also leave in the saved notebook)."""
    turn = _last(ctx)
    if turn is None:
        return Text(NOTHING)
    if not ctx.interactive:
        return Text(saved_form(turn)["text/plain"])
    cell_id = frontends.executing_cell()
    if cell_id is not None and ctx.agents.page_changes.offer(turn, cell_id):
        # The page draws the list in this cell, outside the saved notebook: no widget
        # that would be dead once the notebook is reopened; the words stay.
        return Text(turn.summary())
    from ...ui.changes import ChangesView
    from ..changes.revert import revert

    async def revert_one(change: Change | None, hunk: int | None) -> str:
        return (await revert(turn, change, hunk)).sentence()

    view = ChangesView(turn, revert_one, ctx.agents.loop.submit)
    return WithSavedForm(view.widget, saved_form(turn))


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
    from ..changes.revert import revert

    said = (await revert(turn)).sentence()
    ctx.agents.page_changes.redraw(turn, said)
    return Text(said)
