"""What the agent reads of the live notebook: a cell as text, and what each session's
agent last read of each cell (an edit is made only against that read, so a cell the user
changed since is refused as stale, never merged). The live notebook's modules (its
messages are pydantic models) are imported when a tool reads or changes a cell, not with
this module: every turn offering the notebook tools imports it."""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ..summaries.model import cut_text, fence
from .registry import ToolResult

if TYPE_CHECKING:
    from ..frontend import Frontends
    from ..frontend.live import LiveNotebook
    from ..frontend.protocol import LiveCell

#: Output text given per cell by ``read_cell`` and ``list_cells``.
READ_OUTPUT_CHARS = 4000
LIST_OUTPUT_CHARS = 600
#: A source longer than this is cut in ``list_cells`` (and then not counted as read).
LIST_SOURCE_CHARS = 4000

NO_NOTEBOOK = (
    "No notebook is connected any more (its page was closed or reloaded); "
    "the kernel's own tools still work."
)


def describe_cell(cell: LiveCell, *, source_chars: int | None = None) -> tuple[str, bool]:
    """A cell as the agent reads it, and whether its whole source is in it."""
    count = f" · [{cell.execution_count}]" if cell.execution_count is not None else ""
    header = f"cell {cell.index + 1} · id `{cell.id}` · {cell.cell_type}{count}"
    source, cut = cell.source, None
    if source_chars is not None:
        source, cut = cut_text(source, source_chars)
    language = "python" if cell.cell_type == "code" else ""
    parts = [header, fence(source, language)]
    if cut:
        parts.append(f"(note: the source was cut to its {cut}; read_cell gives all of it)")
    if cell.outputs_text:
        parts.append("outputs:\n" + fence(cell.outputs_text.rstrip("\n")))
        if cell.truncated:
            parts.append("(note: the outputs were cut)")
    return "\n".join(parts), cut is None


def current_notebook(frontends: Frontends) -> LiveNotebook:
    """The connected notebook; none is the agent's error (:data:`NO_NOTEBOOK`)."""
    live = frontends.current()
    if live is None:
        from ..frontend.protocol import LiveNotebookError

        raise LiveNotebookError(NO_NOTEBOOK)
    return live


class CellReads:
    """What each session's agent last read of each cell; safe from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        #: (session, cell id) → the cell as that session's agent last read it.
        self._read: dict[tuple[str, str], LiveCell] = {}

    def remember(self, session: str, cell: LiveCell) -> None:
        with self._lock:
            self._read[(session, cell.id)] = cell

    def forget(self, session: str, cell_id: str) -> None:
        with self._lock:
            self._read.pop((session, cell_id), None)

    def clear(self) -> None:
        with self._lock:
            self._read.clear()

    def last(self, session: str, cell_id: str) -> LiveCell | None:
        with self._lock:
            return self._read.get((session, cell_id))

    def required(self, session: str, cell_id: str, action: str) -> LiveCell:
        """The cell as last read; not read yet is the agent's error."""
        read = self.last(session, cell_id)
        if read is None:
            from ..frontend.protocol import LiveNotebookError

            raise LiveNotebookError(
                f"Read the cell first (read_cell with id {cell_id!r}, or list_cells): "
                f"a cell is {action}ed only as you last read it."
            )
        return read


async def guarded(call: Callable[..., Awaitable[ToolResult]], *args: Any) -> ToolResult:
    """``call(*args)``; a live-notebook failure (gone, not answering, no such cell) is
    the agent's error result in one sentence."""
    from ..frontend.protocol import CellNotFound, LiveNotebookError

    try:
        return await call(*args)
    except CellNotFound as exc:
        return ToolResult.error(f"{exc} list_cells gives the ids.")
    except LiveNotebookError as exc:
        return ToolResult.error(str(exc))
