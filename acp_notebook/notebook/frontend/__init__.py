"""The kernel's end of the live notebook: the ``acp-notebook`` JupyterLab / Notebook 7
extension connects each open notebook to its kernel over a comm, and the notebook tools
read cells and propose edits through it.

    from acp_notebook.notebook.frontend import frontends
    live = frontends.current()          # None when no extension is connected
    cells = await live.list_cells()
    outcome = await live.propose_edit(cell.id, new, expected_source=cell.source, label="…")
    outcome.status                      # "accepted", "rejected" or "stale"

The wire protocol is documented in :mod:`.protocol`; the API in :mod:`.live`.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from .registry import Frontends

if TYPE_CHECKING:
    from .live import LiveNotebook
    from .protocol import (
        CellChange,
        CellDelete,
        CellEdit,
        CellInsert,
        CellNotFound,
        EditOutcome,
        LiveCell,
        LiveNotebookError,
        LiveTimeout,
        NotebookDisconnected,
        RunOutcome,
    )

#: This kernel's connected notebooks.
frontends = Frontends()

__all__ = [
    "CellChange",
    "CellDelete",
    "CellEdit",
    "CellInsert",
    "CellNotFound",
    "EditOutcome",
    "Frontends",
    "LiveCell",
    "LiveNotebook",
    "LiveNotebookError",
    "LiveTimeout",
    "NotebookDisconnected",
    "RunOutcome",
    "frontends",
    "install",
    "uninstall",
]


def __getattr__(name: str) -> Any:
    # The API's types are imported when first asked for: `%load_ext` installs `frontends`
    # without loading the messages' pydantic models (the first connection loads them).
    home = ".live" if name == "LiveNotebook" else ".protocol"
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(home, __name__), name)


def install(shell: Any) -> None:
    """Called by ``%load_ext``: only a Jupyter kernel has comms (not a terminal IPython)."""
    if getattr(shell, "kernel", None) is not None:
        frontends.install()


def uninstall(shell: Any) -> None:
    frontends.uninstall()
