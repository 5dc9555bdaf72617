"""A change to a cell of the live notebook (``edit_cell``, ``insert_cell``,
``delete_cell``): approved first (:func:`~.approval.ask`), then made, or proposed in the
cell as a diff with Accept and Reject, and what became of it told to the turn
(:meth:`~.registry.ToolContext.tell`) and answered to the agent.

A rule or the policy may deny the change or apply it without asking; otherwise the user
reviews it in the cell (:class:`~.approval.Review`). An edit or a delete is made against
the source the agent last read (:class:`~.cell_reads.CellReads`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from .approval import Approved, Denied, ToolApproval, ToolKind, ask
from .cell_reads import CellReads, current_notebook, describe_cell, guarded
from .registry import CellChangeReport, ToolContext, ToolResult

if TYPE_CHECKING:
    from ..frontend import Frontends
    from ..frontend.live import LiveNotebook
    from ..frontend.protocol import CellChange, EditOutcome

_TOOL = {"edit": "edit_cell", "insert": "insert_cell", "delete": "delete_cell"}
_DEFAULT_LABEL = {"edit": "Edit", "insert": "New cell", "delete": "Deletion"}


class CellChanges:
    """The handlers of the three changing tools of one kernel's live tools."""

    def __init__(self, frontends: Frontends, reads: CellReads) -> None:
        self.frontends = frontends
        self.reads = reads

    async def edit_cell(self, ctx: ToolContext, arguments: Mapping[str, Any]) -> ToolResult:
        cell_id = str(arguments["id"])
        source = str(arguments["source"])

        async def edit() -> ToolResult:
            live = current_notebook(self.frontends)
            read = self.reads.required(ctx.session, cell_id, "edit")
            if read.source == source:
                return ToolResult.text(f"Cell {read.index + 1} already has that source.")
            from ..frontend.protocol import CellEdit

            change = CellEdit(cell_id, source, read.source)
            report = CellChangeReport(
                "edit", cell_id, read.index, "denied", "", live.path, cell_type=read.cell_type
            )
            return await self._change(ctx, live, change, report, arguments, "edit", read.source)

        return await guarded(edit)

    async def insert_cell(self, ctx: ToolContext, arguments: Mapping[str, Any]) -> ToolResult:
        after_id = arguments.get("after_id")
        above = str(after_id) if after_id is not None else None
        source = str(arguments["source"])
        cell_type = str(arguments.get("cell_type") or "code")

        async def insert() -> ToolResult:
            live = current_notebook(self.frontends)
            index = 0
            if above is not None:
                index = (await live.read_cell(above, max_output_chars=0)).index + 1
            from ..frontend.protocol import CellInsert

            change = CellInsert(above, source, cell_type)  # type: ignore[arg-type]
            report = CellChangeReport(
                "insert", "", index, "denied", "", live.path, above_id=above, cell_type=cell_type
            )
            return await self._change(ctx, live, change, report, arguments, "edit", None)

        return await guarded(insert)

    async def delete_cell(self, ctx: ToolContext, arguments: Mapping[str, Any]) -> ToolResult:
        cell_id = str(arguments["id"])

        async def delete() -> ToolResult:
            live = current_notebook(self.frontends)
            read = self.reads.required(ctx.session, cell_id, "delete")
            cells = await live.list_cells(max_output_chars=0)
            index = next((c.index for c in cells if c.id == cell_id), read.index)
            above = cells[index - 1].id if 0 < index <= len(cells) else None
            from ..frontend.protocol import CellDelete

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

        return await guarded(delete)

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
            ctx.tell(
                replace(report, status="denied", by=decision.reason, refused_by=decision.decided_by)
            )
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
            self.reads.forget(ctx.session, report.cell_id)
            ctx.tell(replace(report, status="stale", by=by))
            return ToolResult.error(
                f"{report.label.capitalize()} changed since you read it (the user edited it, "
                "or it moved or went): nothing was changed. Read it again with read_cell and "
                "make the change against what it holds now."
            )
        if outcome.status == "rejected":
            ctx.tell(replace(report, status="rejected", by=by))
            return ToolResult.error(
                f"The user rejected the change to {report.label}; the notebook is unchanged. "
                "Ask what they want instead before trying again."
            )
        if cell is not None:
            self.reads.remember(ctx.session, cell)
        else:
            self.reads.forget(ctx.session, report.cell_id)
        applied = replace(
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
