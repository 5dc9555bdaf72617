"""The live-notebook tools: the agent reads, edits, adds, deletes and runs the cells of the
notebook open in JupyterLab or Notebook 7, through the ``acp-notebook`` extension.

They are in the registry only while a notebook is connected (:class:`LiveTools` follows
the connections): then ``list_cells`` and ``read_cell`` read the live document (unsaved
edits, cell ids) instead of the kernel's history, and ``edit_cell``, ``insert_cell``,
``delete_cell`` and ``run_cell`` appear. Without the extension (VS Code, classic
Notebook, nbclient, ``jupyter console``) the kernel's tools are all there is.

Every change is approved first (:func:`~.approval.ask`): a rule or the policy may deny
it or apply it without asking; otherwise it is proposed in the cell itself, as a diff
with Accept and Reject (:class:`~.approval.Review`). A change is made against the source
the agent last read (``list_cells`` or ``read_cell`` in the same session): a cell the
user changed since is refused as stale, never merged, and the agent reads it again. What
became of each change goes to the turn (:meth:`~.registry.ToolContext.tell`).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..frontend import (
    CellChange,
    CellDelete,
    CellEdit,
    CellInsert,
    CellNotFound,
    EditOutcome,
    LiveCell,
    LiveNotebook,
    LiveNotebookError,
)
from ..summaries.model import cut_text, fence
from .approval import Approved, Denied, ToolApproval, ToolKind, ask
from .kernel_tools import KERNEL_TOOLS
from .registry import CellChangeReport, NotebookTool, ToolContext, ToolRegistry, ToolResult

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from ..frontend import Frontends

#: Output text given per cell by ``read_cell`` and ``list_cells``.
READ_OUTPUT_CHARS = 4000
LIST_OUTPUT_CHARS = 600
#: A source longer than this is cut in ``list_cells`` (and then not counted as read).
LIST_SOURCE_CHARS = 4000

_CELL_ID = {"type": "string", "description": "The cell's id, as list_cells gives it."}
_SOURCE = {"type": "string", "description": "The cell's complete new source."}
_WHY = {
    "type": "string",
    "description": "One line saying what the change does, shown to the user above the diff.",
}

NO_NOTEBOOK = (
    "No notebook is connected any more (its page was closed or reloaded); "
    "the kernel's own tools still work."
)


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
        #: (session, cell id) → the cell as that session's agent last read it.
        self._read: dict[tuple[str, str], LiveCell] = {}
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
                self._edit_cell,
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
                self._insert_cell,
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
                self._delete_cell,
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
        with self._lock:
            self._read.clear()
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

    def _notebook(self) -> LiveNotebook:
        live = self.frontends.current()
        if live is None:
            raise LiveNotebookError(NO_NOTEBOOK)
        return live

    def _remember(self, session: str, cell: LiveCell) -> None:
        with self._lock:
            self._read[(session, cell.id)] = cell

    def _forget(self, session: str, cell_id: str) -> None:
        with self._lock:
            self._read.pop((session, cell_id), None)

    def last_read(self, session: str, cell_id: str) -> LiveCell | None:
        with self._lock:
            return self._read.get((session, cell_id))

    async def _list_cells(self, ctx: ToolContext, arguments: Mapping[str, Any]) -> ToolResult:
        return await _guarded(self._list_cells_of, ctx)

    async def _list_cells_of(self, ctx: ToolContext) -> ToolResult:
        live = self._notebook()
        cells = await live.list_cells(max_output_chars=LIST_OUTPUT_CHARS)
        parts = [f"The notebook {live.path} ({live.app}), {len(cells)} cells:"]
        for cell in cells:
            text, whole = describe_cell(cell, source_chars=LIST_SOURCE_CHARS)
            if whole:
                self._remember(ctx.session, cell)
            parts.append(text)
        return ToolResult.text("\n\n".join(parts))

    async def _read_cell(self, ctx: ToolContext, arguments: Mapping[str, Any]) -> ToolResult:
        cell_id = str(arguments["id"])

        async def read() -> ToolResult:
            cell = await self._notebook().read_cell(cell_id, max_output_chars=READ_OUTPUT_CHARS)
            self._remember(ctx.session, cell)
            return ToolResult.text(describe_cell(cell)[0])

        return await _guarded(read)

    # ------------------------------------------------------------------ changing

    async def _edit_cell(self, ctx: ToolContext, arguments: Mapping[str, Any]) -> ToolResult:
        cell_id = str(arguments["id"])
        source = str(arguments["source"])

        async def edit() -> ToolResult:
            live = self._notebook()
            read = self._read_first(ctx.session, cell_id, "edit")
            if read.source == source:
                return ToolResult.text(f"Cell {read.index + 1} already has that source.")
            change = CellEdit(cell_id, source, read.source)
            report = CellChangeReport(
                "edit", cell_id, read.index, "denied", "", live.path, cell_type=read.cell_type
            )
            return await self._change(ctx, live, change, report, arguments, "edit", read.source)

        return await _guarded(edit)

    async def _insert_cell(self, ctx: ToolContext, arguments: Mapping[str, Any]) -> ToolResult:
        after_id = arguments.get("after_id")
        above = str(after_id) if after_id is not None else None
        source = str(arguments["source"])
        cell_type = str(arguments.get("cell_type") or "code")

        async def insert() -> ToolResult:
            live = self._notebook()
            index = 0
            if above is not None:
                index = (await live.read_cell(above, max_output_chars=0)).index + 1
            change = CellInsert(above, source, cell_type)  # type: ignore[arg-type]
            report = CellChangeReport(
                "insert", "", index, "denied", "", live.path, above_id=above, cell_type=cell_type
            )
            return await self._change(ctx, live, change, report, arguments, "edit", None)

        return await _guarded(insert)

    async def _delete_cell(self, ctx: ToolContext, arguments: Mapping[str, Any]) -> ToolResult:
        cell_id = str(arguments["id"])

        async def delete() -> ToolResult:
            live = self._notebook()
            read = self._read_first(ctx.session, cell_id, "delete")
            cells = await live.list_cells(max_output_chars=0)
            index = next((c.index for c in cells if c.id == cell_id), read.index)
            above = cells[index - 1].id if 0 < index <= len(cells) else None
            change = CellDelete(cell_id, read.source)
            report = CellChangeReport(
                "delete",
                cell_id,
                index,
                "denied",
                "",
                live.path,
                read.source,
                above_id=above,
                cell_type=read.cell_type,
            )
            return await self._change(ctx, live, change, report, arguments, "delete", read.source)

        return await _guarded(delete)

    def _read_first(self, session: str, cell_id: str, action: str) -> LiveCell:
        read = self.last_read(session, cell_id)
        if read is None:
            raise LiveNotebookError(
                f"Read the cell first (read_cell with id {cell_id!r}, or list_cells): "
                f"a cell is {action}ed only as you last read it."
            )
        return read

    async def _change(
        self,
        ctx: ToolContext,
        live: LiveNotebook,
        change: CellChange,
        report: CellChangeReport,
        arguments: Mapping[str, Any],
        kind: ToolKind,
        before: str | None,
    ) -> ToolResult:
        """Approve ``change``, make or propose it, tell the turn, answer the agent."""
        label = str(arguments.get("description") or "").strip() or _DEFAULT_LABEL[report.op]
        title = f"{_DEFAULT_LABEL[report.op]}: {report.label} of {live.path}"
        request = ToolApproval(
            ctx.session,
            _TOOL[report.op],
            title,
            arguments=dict(arguments),
            kind=kind,
            review_in_place=True,
            paths=(live.path,),
            cell_id=report.cell_id or None,
        )
        decision = await ask(ctx.approve, request)
        if isinstance(decision, Denied):
            ctx.tell(_with(report, status="denied", by=decision.reason))
            return ToolResult.error(
                f"The change to {report.label} was not made: {decision.reason}."
            )
        if isinstance(decision, Approved):
            outcome = await live.apply(change)
            by = decision.by or "approved"
        else:
            outcome = await live.propose(change, label=label)
            by = "you"
        return self._outcome(ctx, report, outcome, by, before)

    def _outcome(
        self,
        ctx: ToolContext,
        report: CellChangeReport,
        outcome: EditOutcome,
        by: str,
        before: str | None,
    ) -> ToolResult:
        cell = outcome.cell
        if outcome.status == "stale":
            self._forget(ctx.session, report.cell_id)
            ctx.tell(_with(report, status="stale", by=by))
            return ToolResult.error(
                f"{report.label.capitalize()} changed since you read it (the user edited it, "
                "or it moved or went): nothing was changed. Read it again with read_cell and "
                "make the change against what it holds now."
            )
        if outcome.status == "rejected":
            ctx.tell(_with(report, status="rejected", by=by))
            return ToolResult.error(
                f"The user rejected the change to {report.label}; the notebook is unchanged. "
                "Ask what they want instead before trying again."
            )
        if cell is not None:
            self._remember(ctx.session, cell)
        else:
            self._forget(ctx.session, report.cell_id)
        applied = _with(
            report,
            status=outcome.status,
            by=by,
            cell_id=cell.id if cell is not None else report.cell_id,
            index=cell.index if cell is not None else report.index,
            before=before,
            after=cell.source if cell is not None else None,
        )
        ctx.tell(applied)
        how = "the user accepted it" if outcome.status == "accepted" else f"{by}"
        if cell is None:
            return ToolResult.text(f"Deleted {report.label} ({how}).")
        return ToolResult.text(f"Done ({how}). The cell now:\n\n" + describe_cell(cell)[0])

    # ------------------------------------------------------------------ running

    async def _run_cell(self, ctx: ToolContext, arguments: Mapping[str, Any]) -> ToolResult:
        cell_id = str(arguments["id"])

        async def run() -> ToolResult:
            live = self._notebook()
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
                cell_id, wait=not busy, max_output_chars=READ_OUTPUT_CHARS
            )
            self._remember(ctx.session, outcome.cell)
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

        return await _guarded(run)


_TOOL = {"edit": "edit_cell", "insert": "insert_cell", "delete": "delete_cell"}
_DEFAULT_LABEL = {"edit": "Edit", "insert": "New cell", "delete": "Deletion"}


def _with(report: CellChangeReport, **fields: Any) -> CellChangeReport:
    return replace(report, **fields)


async def _guarded(call: Callable[..., Awaitable[ToolResult]], *args: Any) -> ToolResult:
    """``call(*args)``; a live-notebook failure (gone, not answering, no such cell) is
    the agent's error result in one sentence."""
    try:
        return await call(*args)
    except CellNotFound as exc:
        return ToolResult.error(f"{exc} list_cells gives the ids.")
    except LiveNotebookError as exc:
        return ToolResult.error(str(exc))
