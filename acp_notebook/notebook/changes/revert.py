"""Reverting what a turn changed — files and live cells — without destroying later work.

The turn's record is :class:`~acp_notebook.client.checkpoints.TurnChanges` (the session's
``checkpoints``); the cell tools feed it through :func:`record_cell_change`, the
``report`` hook of the notebook tools server. :func:`revert` checks every target first:
if one no longer holds what the turn left (the user or a later turn changed it), nothing
is reverted and the answer says which. One hunk is merged three ways instead: it goes
back when its own lines are as the turn left them, whatever changed elsewhere in the
target, and the answer names the lines that conflict when they are not. Then each target gets back its old text; a cell
goes through the live notebook (``apply``, on the notebook's own undo stack, refused
again as stale if the cell changed in between).

Runs on the agent loop thread: a cell's revert waits for the notebook's page, which
answers through the kernel's main thread — never from a blocked cell. The live notebook's
modules are imported by a revert, not with this module: every turn with the notebook tools
imports it for :func:`record_cell_change`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from ...client.checkpoints import (
    Change,
    ChangedSince,
    TurnChanges,
    check_file,
    read_file,
    restore_file,
)

if TYPE_CHECKING:
    from ...client.session import Session
    from ..frontend.live import LiveNotebook
    from ..frontend.protocol import CellType, LiveCell
    from ..tools.registry import CellChangeReport


#: Who refused a stale cell change: the notebook, because the cell moved on (the user
#: typed in it while the change waited, or since the agent read it).
STALE_BY = "the notebook: the cell changed after the agent read it"


def record_cell_change(session: Session, report: CellChangeReport) -> None:
    """The notebook tools' ``report`` hook: the turn's transcript says what became of the
    change, and an applied change is kept for review and undo. Agent loop thread."""
    session.transcript.add_note(report.sentence())
    refused_by = {"rejected": report.by, "stale": STALE_BY}.get(report.status, report.refused_by)
    if refused_by is not None:
        # The agent reports its call failed; it was the user's, a rule's or the notebook's
        # "no": the call reads "rejected by …", not "failed".
        session.transcript.reject_running_call(refused_by, mentions=report.cell_id or None)
    if report.applied:
        session.checkpoints.cell_changed(
            report.cell_id,
            report.label,
            report.before,
            report.after,
            notebook=report.notebook,
            anchor=report.above_id,
            cell_type=report.cell_type,
        )


@dataclass(frozen=True)
class Reverted:
    """What a revert did: the targets it reverted, and why it stopped (if it did)."""

    reverted: tuple[str, ...] = ()
    stopped: str | None = None

    def sentence(self) -> str:
        done = ", ".join(self.reverted)
        if self.stopped is not None:
            if not self.reverted:
                return f"Nothing was reverted: {self.stopped}"
            return f"Reverted {done}, then stopped: {self.stopped}"
        if not self.reverted:
            return "Nothing left to revert in that turn."
        return f"Reverted {done}."


async def revert(
    turn: TurnChanges,
    change: Change | None = None,
    hunk: int | None = None,
    *,
    live: LiveNotebook | None = None,
) -> Reverted:
    """Revert ``turn`` (every change), one ``change`` of it, or one ``hunk`` of that
    change; ``live`` defaults to the connected notebook."""
    if turn.forgotten:
        return Reverted(stopped="the turn's changes are no longer kept (the size bound).")
    targets = [change] if change is not None else turn.revertible
    targets = [target for target in targets if target.revertible]
    if not targets:
        return Reverted()
    from ..frontend import frontends
    from ..frontend.protocol import LiveNotebookError

    cells = [target for target in targets if target.target == "cell"]
    live = live if live is not None else frontends.current()
    one_hunk = change is not None and hunk is not None and not change.whole()
    merged: str | None = None
    try:
        document = await _document(cells, live)
        if one_hunk:  # three ways: edits since the turn outside the hunk's lines stay
            assert change is not None and hunk is not None
            now = read_file(change) if change.target == "file" else _cell_text(change, document)
            if now is None:
                raise ChangedSince(f"{change.label} was removed after the turn.")
            merged, expected = change.hunk_reverted_in(hunk, now), now
        for target in [] if one_hunk else targets:
            if target.target == "file":
                check_file(target)
            else:
                _check_cell(target, document)
    except ChangedSince as exc:
        return Reverted(stopped=str(exc))
    done: list[str] = []
    try:
        # Last change first: a deleted cell goes back below a neighbour the turn may
        # have added, before that neighbour goes.
        for target in reversed(targets):
            text = target.text_without(hunk if change is not None else None)
            written = merged if one_hunk else text
            if target.target == "file":
                restore_file(target, written)
            else:
                await _restore_cell(
                    cast("LiveNotebook", live), target, written, expected if one_hunk else None
                )
            # The record keeps the turn's own text: lines edited since stay the user's.
            target.after = text
            done.append(target.label)
    except (ChangedSince, LiveNotebookError, OSError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return Reverted(tuple(reversed(done)), f"{target.label}: {why}")
    return Reverted(tuple(reversed(done)))  # in the turn's order


async def _document(cells: list[Change], live: LiveNotebook | None) -> dict[str, LiveCell]:
    """The live notebook's cells by id (none needed: empty)."""
    if not cells:
        return {}
    notebooks = {change.notebook for change in cells}
    if live is None or not live.connected:
        raise ChangedSince(
            "the turn changed cells and no notebook is connected; open it in JupyterLab or "
            "Notebook 7 and try again."
        )
    if notebooks != {live.path}:
        other = ", ".join(sorted(n for n in notebooks if n is not None and n != live.path))
        raise ChangedSince(
            f"the turn changed cells of {other}, which is not the notebook open now."
        )
    from ..frontend.protocol import LiveNotebookError

    try:
        return {cell.id: cell for cell in await live.list_cells(max_output_chars=0)}
    except LiveNotebookError as exc:
        raise ChangedSince(str(exc)) from None


def _cell_text(change: Change, document: dict[str, LiveCell]) -> str | None:
    cell = document.get(change.key)
    return None if cell is None else cell.source


def _check_cell(change: Change, document: dict[str, LiveCell]) -> None:
    """:class:`ChangedSince` unless the cell holds the turn's after-state (a cell the
    turn deleted: it is still gone and the cell above it is still there)."""
    cell = document.get(change.key)
    if change.after is None:
        if cell is not None or (change.anchor is not None and change.anchor not in document):
            raise ChangedSince(f"the notebook around {change.label} was changed after the turn.")
        return
    if cell is None or cell.source != change.after:
        raise ChangedSince(f"{change.label} was changed after the turn.")


async def _restore_cell(
    live: LiveNotebook, change: Change, text: str | None, expected: str | None = None
) -> None:
    """Put ``text`` in the cell, refused as stale unless it holds ``expected`` (by
    default the turn's after-state)."""
    from ..frontend.protocol import CellDelete, CellEdit, CellInsert

    if change.after is None:  # the turn deleted it: it comes back below its old neighbour
        assert text is not None
        cell_type = cast("CellType", change.cell_type)
        outcome = await live.apply(CellInsert(change.anchor, text, cell_type))
        if outcome.cell is not None:
            change.key = outcome.cell.id
    elif text is None:  # the turn added it
        outcome = await live.apply(CellDelete(change.key, expected_source=change.after))
    else:
        held = change.after if expected is None else expected
        outcome = await live.apply(CellEdit(change.key, text, expected_source=held))
    if outcome.status == "stale":
        raise ChangedSince(f"{change.label} was changed after the turn.")
