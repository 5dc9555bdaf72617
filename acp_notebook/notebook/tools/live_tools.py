"""The live-notebook tools: the agent reads, edits, adds, deletes and runs the cells of the
notebook open in JupyterLab or Notebook 7, through the ``acp-notebook`` extension.

They are in the registry only while a notebook is connected (:class:`LiveTools` follows
the connections): then ``list_cells`` and ``read_cell`` read the live document (unsaved
edits, cell ids) instead of the kernel's history, and ``edit_cell``, ``insert_cell``,
``delete_cell`` and ``run_cell`` appear. Without the extension (VS Code, classic
Notebook, nbclient, ``jupyter console``) the kernel's tools are all there is.

What the agent reads and last read is in :mod:`.cell_reads`; a change (approved, made or
proposed in the cell as a diff with Accept and Reject, reported to the turn) is in
:mod:`.cell_changes`; running a cell is here.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from .approval import Denied, ToolApproval, ask
from .cell_changes import CellChanges
from .cell_reads import (
    LIST_OUTPUT_CHARS,
    LIST_SOURCE_CHARS,
    READ_OUTPUT_CHARS,
    CellReads,
    current_notebook,
    describe_cell,
    guarded,
)
from .kernel_tools import KERNEL_TOOLS
from .registry import NotebookTool, ToolContext, ToolRegistry, ToolResult

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from ..frontend import Frontends

_CELL_ID = {"type": "string", "description": "The cell's id, as list_cells gives it."}
_SOURCE = {"type": "string", "description": "The cell's complete new source."}
_WHY = {
    "type": "string",
    "description": "One line saying what the change does, shown to the user above the diff.",
}


def offered_line(frontends: Frontends) -> str:
    """Whether the live tools are offered, and why not (``%acp --status``)."""
    live = frontends.current()
    if live is not None:
        return (
            f"Notebook tools: the live cell tools are offered ({live.app}, {live.path}), "
            "with the kernel's tools."
        )
    return (
        "Notebook tools: the kernel's tools only; the live cell tools (edit_cell …) need "
        "JupyterLab 4 or Notebook 7 with the acp-notebook extension (not VS Code, the "
        "classic Notebook, nbclient or jupyter console)."
    )


class CellActivity:
    """Whether the kernel is running a cell now (IPython's ``pre_run_cell`` and
    ``post_run_cell`` events): a cell the agent runs waits behind it."""

    def __init__(self, shell: InteractiveShell) -> None:
        self._shell = shell
        self.running = False

    def _started(self, *_: object) -> None:
        self.running = True

    def _ended(self, *_: object) -> None:
        self.running = False

    def install(self) -> None:
        self._shell.events.register("pre_run_cell", self._started)
        self._shell.events.register("post_run_cell", self._ended)

    def uninstall(self) -> None:
        for event, callback in (("pre_run_cell", self._started), ("post_run_cell", self._ended)):
            with contextlib.suppress(ValueError):
                self._shell.events.unregister(event, callback)


class LiveTools:
    """The live tools of one kernel: registered in ``registry`` while a notebook is
    connected, and what each session's agent last read of each cell."""

    def __init__(
        self, registry: ToolRegistry, frontends: Frontends, shell: InteractiveShell
    ) -> None:
        self.registry = registry
        self.frontends = frontends
        self.activity = CellActivity(shell)
        self._lock = threading.Lock()
        #: What each session's agent last read of each cell.
        self.reads = CellReads()
        changes = CellChanges(frontends, self.reads)
        self._offered = False
        self._stop: Callable[[], None] | None = None
        self.tools: tuple[NotebookTool, ...] = (
            NotebookTool(
                "list_cells",
                "List every cell of the notebook open in the browser, in order: its id, type, "
                "execution count, source (unsaved edits included) and outputs as text.",
                {"type": "object", "properties": {}},
                self._list_cells,
            ),
            NotebookTool(
                "read_cell",
                "Read one cell of the open notebook by id: its whole source and its outputs.",
                {"type": "object", "properties": {"id": _CELL_ID}, "required": ["id"]},
                self._read_cell,
            ),
            NotebookTool(
                "edit_cell",
                "Replace a cell's source. The user reviews the change in the cell (a diff with "
                "Accept and Reject) unless a rule decides. Read the cell first: an edit of a "
                "cell the user changed since you read it is refused.",
                {
                    "type": "object",
                    "properties": {"id": _CELL_ID, "source": _SOURCE, "description": _WHY},
                    "required": ["id", "source"],
                },
                changes.edit_cell,
                read_only=False,
            ),
            NotebookTool(
                "insert_cell",
                "Add a cell below another one (after_id null: at the top), after the user "
                "accepts it.",
                {
                    "type": "object",
                    "properties": {
                        "after_id": {
                            "type": ["string", "null"],
                            "description": "The id of the cell the new one goes below; null "
                            "for the top of the notebook.",
                        },
                        "source": {"type": "string", "description": "The new cell's source."},
                        "cell_type": {"enum": ["code", "markdown", "raw"], "default": "code"},
                        "description": _WHY,
                    },
                    "required": ["after_id", "source"],
                },
                changes.insert_cell,
                read_only=False,
            ),
            NotebookTool(
                "delete_cell",
                "Delete a cell, after the user accepts it. Read the cell first.",
                {
                    "type": "object",
                    "properties": {"id": _CELL_ID, "description": _WHY},
                    "required": ["id"],
                },
                changes.delete_cell,
                read_only=False,
            ),
            NotebookTool(
                "run_cell",
                "Run a cell of the open notebook as the user would (its outputs and execution "
                "count land in the cell), after the user approves it. While the user's own cell "
                "runs, the cell is queued behind it and its outputs come later (read_cell).",
                {"type": "object", "properties": {"id": _CELL_ID}, "required": ["id"]},
                self._run_cell,
                read_only=False,
            ),
        )

    # ------------------------------------------------------------------ lifecycle

    @property
    def offered(self) -> bool:
        """Whether the live tools are in the registry now (a notebook is connected)."""
        return self._offered

    def install(self) -> None:
        """Follow the notebooks' connections (from now on, and the current state)."""
        if self._stop is None:
            self.activity.install()
            self._stop = self.frontends.on_change(self.sync)
        self.sync()

    def uninstall(self) -> None:
        if self._stop is not None:
            self._stop()
            self._stop = None
            self.activity.uninstall()
        self._withdraw()

    def sync(self) -> None:
        """Offer the live tools while a notebook is connected; otherwise the kernel's.

        What the agents read is forgotten: it may be of another notebook now, and an edit
        is made only against a read of the notebook it lands in."""
        self.reads.clear()
        if self.frontends.current() is not None:
            self._offer()
        else:
            self._withdraw()

    def _offer(self) -> None:
        with self._lock:
            if self._offered:
                return
            self._offered = True
        for tool in self.tools:
            self.registry.register(tool)

    def _withdraw(self) -> None:
        with self._lock:
            if not self._offered:
                return
            self._offered = False
        kernel = {tool.name: tool for tool in KERNEL_TOOLS}
        for tool in self.tools:
            if tool.name in kernel:
                self.registry.register(kernel[tool.name])
            else:
                self.registry.unregister(tool.name)

    # ------------------------------------------------------------------ reading

    async def _list_cells(self, ctx: ToolContext, arguments: Mapping[str, Any]) -> ToolResult:
        return await guarded(self._list_cells_of, ctx)

    async def _list_cells_of(self, ctx: ToolContext) -> ToolResult:
        live = current_notebook(self.frontends)
        cells = await live.list_cells(max_output_chars=LIST_OUTPUT_CHARS)
        parts = [f"The notebook {live.path} ({live.app}), {len(cells)} cells:"]
        for cell in cells:
            text, whole = describe_cell(cell, source_chars=LIST_SOURCE_CHARS)
            if whole:
                self.reads.remember(ctx.session, cell)
            parts.append(text)
        return ToolResult.text("\n\n".join(parts))

    async def _read_cell(self, ctx: ToolContext, arguments: Mapping[str, Any]) -> ToolResult:
        cell_id = str(arguments["id"])

        async def read() -> ToolResult:
            cell = await current_notebook(self.frontends).read_cell(
                cell_id, max_output_chars=READ_OUTPUT_CHARS
            )
            self.reads.remember(ctx.session, cell)
            return ToolResult.text(describe_cell(cell)[0])

        return await guarded(read)

    # ------------------------------------------------------------------ running

    async def _run_cell(self, ctx: ToolContext, arguments: Mapping[str, Any]) -> ToolResult:
        cell_id = str(arguments["id"])

        async def run() -> ToolResult:
            live = current_notebook(self.frontends)
            cell = await live.read_cell(cell_id, max_output_chars=0)
            if cell.cell_type != "code":
                return ToolResult.error(f"Cell {cell.index + 1} is {cell.cell_type}, not code.")
            request = ToolApproval(
                ctx.session,
                "run_cell",
                f"Run cell {cell.index + 1} of {live.path}",
                cell.source,
                dict(arguments),
                kind="execute",
                paths=(live.path,),
                cell_id=cell_id,
            )
            decision = await ask(ctx.approve, request)
            if isinstance(decision, Denied):
                return ToolResult.error(f"The cell did not run: {decision.reason}.")
            busy = self.activity.running
            outcome = await live.run_cell(
                cell_id, source=cell.source, wait=not busy, max_output_chars=READ_OUTPUT_CHARS
            )
            self.reads.remember(ctx.session, outcome.cell)
            if outcome.status == "stale":
                return ToolResult.error(
                    f"The cell did not run: cell {outcome.cell.index + 1} changed after its "
                    "code was approved; read it again and ask to run it again."
                )
            if outcome.status == "started":
                return ToolResult.text(
                    f"Cell {cell.index + 1} is queued: it runs when the cell running now ends "
                    "(the user's prompt is still open). Read it later with read_cell for its "
                    "outputs."
                )
            text = describe_cell(outcome.cell)[0]
            if outcome.status == "ok":
                return ToolResult.text("It ran.\n\n" + text)
            return ToolResult.error(f"It ran and ended {outcome.status}.\n\n" + text)

        return await guarded(run)
