"""A turn's changes as the ``review`` message draws them in the page (the bar under the
``%acp`` cell): each file and cell with its counts, its hunks as diff lines, and what
can be reverted. Derived from the turn's record
(:class:`~acp_notebook.client.checkpoints.TurnChanges`) each time it is sent, so a bar
always shows the record as it is now."""

from __future__ import annotations

import hashlib
from typing import Any, Literal

from ...client.checkpoints import Change, Hunk, TurnChanges, lines_of

#: Unchanged lines shown on each side of a hunk.
CONTEXT = 2
#: A hunk longer than this shows its first lines and how many more there are: a bar is
#: for review, and a comm message must stay small (the whole text is on disk).
MAX_HUNK_LINES = 200

Status = Literal["changed", "new", "deleted", "reverted", "unavailable"]


def status(change: Change) -> Status:
    if change.unavailable:
        return "unavailable"
    if change.reverted:
        return "reverted"
    if change.before is None:
        return "new"
    if change.after is None:
        return "deleted"
    return "changed"


def revision(change: Change) -> str:
    """Names the change's text now: a click on a bar drawn before a revert is refused."""
    text = "\0gone" if change.after is None else change.after
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _line(kind: str, text: str) -> dict[str, Any]:
    return {"kind": kind, "text": text.rstrip("\n")}


def hunk_wire(hunk: Hunk, after: list[str], low: int, high: int) -> dict[str, Any]:
    """A hunk with up to :data:`CONTEXT` unchanged lines of the after-text on each side,
    taken between ``low`` and ``high`` (the neighbouring hunks' ends): never a line of
    another hunk."""
    head = after[max(hunk.after_start - CONTEXT, low) : hunk.after_start]
    tail = after[hunk.after_end : min(hunk.after_end + CONTEXT, high)]
    lines = [_line("context", t) for t in head]
    lines += [_line("removed", t) for t in hunk.removed]
    lines += [_line("added", t) for t in hunk.added]
    lines += [_line("context", t) for t in tail]
    if len(lines) > MAX_HUNK_LINES:
        rest = len(lines) - MAX_HUNK_LINES
        lines = [*lines[:MAX_HUNK_LINES], {"kind": "fold", "text": "", "count": rest}]
    return {"header": hunk.header(), "lines": lines}


def hunks_wire(change: Change) -> list[dict[str, Any]]:
    after = lines_of(change.after)
    hunks = change.hunks()
    ends = [0, *(h.after_end for h in hunks)]
    starts = [*(h.after_start for h in hunks), len(after)]
    return [hunk_wire(h, after, ends[i], starts[i + 1]) for i, h in enumerate(hunks)]


def change_wire(change: Change, forgotten: bool) -> dict[str, Any]:
    added, removed = change.stats
    shown = not forgotten and change.revertible
    return {
        "label": change.label,
        "target": change.target,
        "status": status(change),
        "added": added,
        "removed": removed,
        "revertible": not forgotten and change.revertible,
        "whole": change.whole(),
        "revision": revision(change),
        "hunks": hunks_wire(change) if shown else [],
    }


def review_fields(
    turn: TurnChanges, review: str, cell_id: str | None, said: str | None = None
) -> dict[str, Any]:
    """The fields of a ``review`` message (``cell_id`` None: redraw the bar ``review``)."""
    return {
        "review": review,
        "cell_id": cell_id,
        "changes": [change_wire(change, turn.forgotten) for change in turn],
        "revert_all": bool(turn.revertible),
        "forgotten": turn.forgotten,
        "message": said,
    }
