"""The notebook tools: what one is, and the registry the MCP server lists and calls.

A tool is a name, a description, a JSON schema for its arguments and an async
function. Tools return :class:`ToolResult` (text and PNG blocks), not MCP types, so a
tool never needs the ``mcp`` package; the server converts. The registry can change
while agents are connected — the live-notebook tools are registered when the
JupyterLab extension connects, one ``register`` call each — and every server built on
it tells its connected agents that the tool list changed.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ..listeners import Listeners
from .approval import Approve

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from .execute import CodeResult
    from .runner import MainThreadRunner

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ToolImage:
    png: bytes


#: One content block of a result: text, or an image.
ToolContent = str | ToolImage


@dataclass(frozen=True)
class ToolResult:
    content: tuple[ToolContent, ...]
    #: The call failed (denied, bad arguments, the code raised); the agent is told so.
    is_error: bool = False

    @classmethod
    def text(cls, text: str) -> ToolResult:
        return cls((text,))

    @classmethod
    def error(cls, text: str) -> ToolResult:
        return cls((text,), is_error=True)


#: What became of a proposed cell change: the user accepted or rejected it in the cell, a
#: rule or the policy applied it without asking or denied it, or the cell had changed
#: since the agent read it.
CellStatus = Literal["accepted", "rejected", "applied", "denied", "stale"]


@dataclass(frozen=True)
class CellChangeReport:
    """One cell tool call's change and what became of it, for the turn: the transcript
    lists it, and the turn's undo keeps the cell as it was."""

    #: ``edit``, ``insert`` or ``delete``.
    op: Literal["edit", "insert", "delete"]
    #: The cell changed (for an insert: the new cell; its id once it exists).
    cell_id: str
    #: Its position in the notebook, 0-based (as it was before a delete).
    index: int | None
    status: CellStatus
    #: Who decided: "you", "rule `allow edit *`", or the denial's reason.
    by: str
    #: The live notebook's path (server-relative).
    notebook: str
    #: The source before and after; None where the cell did not exist. Only an applied
    #: change (accepted or applied) carries ``after``.
    before: str | None = None
    after: str | None = None
    #: The cell above (where a deleted cell goes back; None: at the top).
    above_id: str | None = None
    cell_type: str = "code"
    #: For a denied change: who refused it ("rule `deny edit_cell`", "the policy deny"),
    #: when someone did — the agent's call then reads "rejected by" them, not "failed".
    refused_by: str | None = None

    @property
    def applied(self) -> bool:
        return self.status in ("accepted", "applied")

    @property
    def label(self) -> str:
        return f"cell {self.index + 1}" if self.index is not None else "a cell"

    def sentence(self) -> str:
        """The transcript's line: "Edit of cell 3: accepted by you."."""
        what = {"edit": "Edit of", "insert": "New cell at", "delete": "Deletion of"}[self.op]
        outcome = {
            "accepted": f"accepted by {self.by}",
            "rejected": f"rejected by {self.by}; the notebook is unchanged",
            "applied": f"applied without asking ({self.by})",
            "denied": f"not made: {self.by}",
            "stale": "refused: the cell changed after the agent read it",
        }[self.status]
        return f"{what} {self.label} of {self.notebook}: {outcome}."


@dataclass(frozen=True)
class ToolContext:
    """What a tool call may use: which session calls, the user's shell, the main thread,
    approval, and where to show what the call did."""

    session: str
    #: The kernel's IPython shell (``user_ns``, ``In``/``Out``, formatters).
    shell: InteractiveShell
    runner: MainThreadRunner
    approve: Approve
    #: Shows run_code's output in the turn; called on the agent loop thread.
    show: Callable[[CodeResult], None] | None = None
    #: Tells the turn what a cell tool changed (or failed to); agent loop thread.
    report: Callable[[CellChangeReport], None] | None = None

    def tell(self, report: CellChangeReport) -> None:
        """``report`` to the turn; a failing listener never loses the agent its result."""
        if self.report is None:
            return
        try:
            self.report(report)
        except Exception:
            log.exception("reporting a cell change to the turn failed")


@dataclass(frozen=True)
class NotebookTool:
    name: str
    description: str
    #: JSON Schema of the arguments (an object).
    input_schema: Mapping[str, Any]
    call: Callable[[ToolContext, Mapping[str, Any]], Awaitable[ToolResult]]
    #: The tool only reads (an MCP hint for agents that auto-approve reads).
    read_only: bool = True


@dataclass
class ToolRegistry:
    """The tools by name; safe to change from any thread while agents are connected."""

    _tools: dict[str, NotebookTool] = field(default_factory=dict)
    _listeners: Listeners = field(default_factory=lambda: Listeners("the notebook tools"))
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def of(cls, tools: Iterable[NotebookTool]) -> ToolRegistry:
        registry = cls()
        for tool in tools:
            registry._tools[tool.name] = tool
        return registry

    def register(self, tool: NotebookTool) -> Callable[[], None]:
        """Add (or replace) a tool; returns the function that removes it again."""
        with self._lock:
            self._tools = {**self._tools, tool.name: tool}
        self._changed()
        return lambda: self.unregister(tool.name)

    def unregister(self, name: str) -> None:
        with self._lock:
            if name not in self._tools:
                return
            self._tools = {k: v for k, v in self._tools.items() if k != name}
        self._changed()

    def get(self, name: str) -> NotebookTool | None:
        return self._tools.get(name)

    def tools(self) -> list[NotebookTool]:
        return list(self._tools.values())

    def on_change(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call ``listener()`` (on the changing thread) after every change; returns the
        function that stops it."""
        return self._listeners.add(listener)

    def _changed(self) -> None:
        self._listeners.notify()
