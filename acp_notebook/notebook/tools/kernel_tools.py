"""The tools every kernel offers: its variables, its cells, its last error, and running
code in it (with approval).

Each tool reads or runs on the main thread through the context's runner; only the
approval of ``run_code`` is awaited on the agent loop thread.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import anyio

from ..summaries import NOT_FOUND, Summary, resolve, summarise
from . import execute, history
from .approval import Denied, ToolApproval, ask
from .registry import NotebookTool, ToolContent, ToolContext, ToolImage, ToolRegistry, ToolResult

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

log = logging.getLogger(__name__)

_NO_ARGUMENTS: Mapping[str, Any] = {"type": "object", "properties": {}}


def summary_content(summary: Summary) -> tuple[ToolContent, ...]:
    """A summary as result blocks: a header with its label and notes, its text, its image."""
    notes = "".join(f"\n(note: {note})" for note in summary.notes)
    text = f"`{summary.name}`: {summary.label} ({summary.mime_type}){notes}\n\n{summary.text}"
    return (text, ToolImage(summary.png)) if summary.png is not None else (text,)


def code_content(result: execute.CodeResult) -> tuple[ToolContent, ...]:
    """What the code did, as result blocks: one text block per output, then images."""
    parts = [
        f"{title}:\n{text}"
        for title, text in (
            ("stdout", result.stdout),
            ("stderr", result.stderr),
            *(("display", shown) for shown in result.displays),
            ("value", result.value),
            ("error", result.error),
        )
        if text
    ]
    if not parts:
        parts.append("The code ran and printed nothing.")
    parts.extend(f"(note: {note})" for note in result.notes)
    return (*parts, *(ToolImage(png) for png in result.images))


async def _list_variables(ctx: ToolContext, arguments: Mapping[str, Any]) -> ToolResult:
    return ToolResult.text(await ctx.runner.run(history.list_variables, ctx.shell))


def _inspect(shell: InteractiveShell, name: str) -> Summary | None:
    value = resolve(name, shell.user_ns)
    return None if value is NOT_FOUND else summarise(value, name)


async def _inspect_variable(ctx: ToolContext, arguments: Mapping[str, Any]) -> ToolResult:
    name = str(arguments["name"])
    summary = await ctx.runner.run(_inspect, ctx.shell, name)
    if summary is None:
        return ToolResult.error(
            f"The notebook has no variable `{name}`; list_variables gives the names."
        )
    return ToolResult(summary_content(summary))


def _title(code: str) -> str:
    lines = [line for line in code.strip().splitlines() if line.strip()]
    first = lines[0] if lines else ""
    if len(lines) <= 1:
        return f"Run in the notebook's kernel: {first[:80]}"
    return f"Run {len(lines)} lines in the notebook's kernel: {first[:60]} …"


async def _run_code(ctx: ToolContext, arguments: Mapping[str, Any]) -> ToolResult:
    code = str(arguments["code"])
    request = ToolApproval(ctx.session, "run_code", _title(code), code, dict(arguments))
    decision = await ask(ctx.approve, request)
    if isinstance(decision, Denied):
        return ToolResult.error(f"The code did not run: {decision.reason}.")
    with ctx.runner.interruptible(ctx.session) as interruption:
        job = ctx.runner.submit(execute.run, ctx.shell, code, interruption)
        try:
            result = await asyncio.wrap_future(job)
        except anyio.get_cancelled_exc_class():
            if job.cancel():  # withdrawn before it started: it never runs
                raise
            # Withdrawn while it runs (the agent cancelled the call, or its turn was
            # cancelled, which interrupted it first): interrupted, and how it ended is
            # still shown in its tool call before the cancel goes on.
            interruption.interrupt("the agent withdrew the call")
            with anyio.CancelScope(shield=True):
                _show(ctx, await asyncio.wrap_future(job))
            raise
        _show(ctx, result)
    return ToolResult(code_content(result), is_error=not result.ok)


def _show(ctx: ToolContext, result: execute.CodeResult) -> None:
    if ctx.show is not None:
        try:
            ctx.show(result)
        except Exception:  # the turn view failing must not lose the agent its result
            log.exception("showing run_code's output failed")


async def _list_cells(ctx: ToolContext, arguments: Mapping[str, Any]) -> ToolResult:
    return ToolResult.text(await ctx.runner.run(history.list_cells, ctx.shell))


async def _read_cell(ctx: ToolContext, arguments: Mapping[str, Any]) -> ToolResult:
    n = int(arguments["n"])
    try:
        text, summary = await ctx.runner.run(history.read_cell, ctx.shell, n)
    except LookupError:
        return ToolResult.error(f"No cell [{n}] has been executed; list_cells gives the numbers.")
    image = (ToolImage(summary.png),) if summary is not None and summary.png is not None else ()
    return ToolResult((text, *image))


async def _last_error(ctx: ToolContext, arguments: Mapping[str, Any]) -> ToolResult:
    text = await ctx.runner.run(history.last_error, ctx.shell)
    return ToolResult.text(text if text is not None else "No cell has raised an error yet.")


KERNEL_TOOLS: tuple[NotebookTool, ...] = (
    NotebookTool(
        "list_variables",
        "List the variables of the user's notebook: name, type, shape and size.",
        _NO_ARGUMENTS,
        _list_variables,
    ),
    NotebookTool(
        "inspect_variable",
        "Summarise one variable of the user's notebook for its type: a data frame's "
        "dtypes, nulls, describe() and first rows; an array's statistics; a function's "
        "source; a figure as an image. `name` may be `df`, `df.column`, `d['key']`, `Out[3]`.",
        {
            "type": "object",
            "properties": {"name": {"type": "string", "description": "The variable's name."}},
            "required": ["name"],
        },
        _inspect_variable,
    ),
    NotebookTool(
        "run_code",
        "Run Python in the user's live notebook kernel (its variables, its imports), after "
        "the user approves it. Returns stdout, stderr, displays, the last expression's "
        "value, images and any traceback. It does not add a cell to the notebook.",
        {
            "type": "object",
            "properties": {"code": {"type": "string", "description": "Python code to run."}},
            "required": ["code"],
        },
        _run_code,
        read_only=False,
    ),
    NotebookTool(
        "list_cells",
        "List the cells the user has executed, by execution count, with their first line.",
        _NO_ARGUMENTS,
        _list_cells,
    ),
    NotebookTool(
        "read_cell",
        "Read one executed cell: its code and its result as text (images as images).",
        {
            "type": "object",
            "properties": {"n": {"type": "integer", "description": "The execution count."}},
            "required": ["n"],
        },
        _read_cell,
    ),
    NotebookTool(
        "last_error",
        "The last error the user's notebook raised: its traceback and the code of its cell.",
        _NO_ARGUMENTS,
        _last_error,
    ),
)


def kernel_tools() -> ToolRegistry:
    """A registry holding the kernel's tools (one per kernel; frontends add theirs)."""
    return ToolRegistry.of(KERNEL_TOOLS)
