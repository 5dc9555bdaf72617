"""The kernel's end of the live notebook: the ``acp-notebook`` JupyterLab / Notebook 7
extension connects each open notebook to its kernel over a comm, and the notebook tools
read cells and propose edits through it.

    from acp_notebook.notebook.frontend import frontends
    live = frontends.current()          # None when no extension is connected
    cells = await live.list_cells()
    outcome = await live.propose_edit(cell.id, new, expected_source=cell.source, label="…")
    outcome.status                      # "accepted", "rejected" or "stale"

The wire protocol and its values (``CellEdit``, ``LiveCell``, ``LiveNotebookError``, …) are
:mod:`.protocol`; the API, :class:`~.live.LiveNotebook`, is :mod:`.live`: both imported from
there, so ``%load_ext`` installs ``frontends`` without loading the messages' pydantic
models (the first connection loads them).
"""

from __future__ import annotations

from typing import Any

from .registry import Frontends

#: This kernel's connected notebooks.
frontends = Frontends()


def install(shell: Any) -> None:
    """Called by ``%load_ext``: only a Jupyter kernel has comms (not a terminal IPython)."""
    if getattr(shell, "kernel", None) is not None:
        frontends.install()


def uninstall(shell: Any) -> None:
    frontends.uninstall()
