"""ipywidgets views of transcript state (see ARCHITECTURE.md, ``ui/``).

Views read :mod:`acp_notebook.client` state and never parse protocol messages; what a
piece of content shows comes from :mod:`acp_notebook.client.display`, as in the saved
transcript. One module per concept: :mod:`.turn` (the whole turn) and
:mod:`.turn_status` (its status, title and footer lines), :mod:`.message`,
:mod:`.content`, :mod:`.toolcall`, :mod:`.diff`, :mod:`.terminal`, :mod:`.permission`
and :mod:`.elicitation` (on :mod:`.request`), :mod:`.plan`; :mod:`.markdown` renders the
agent's text; :mod:`.coalesce` limits how often widgets are updated.
"""

from __future__ import annotations

from .coalesce import Coalescer
from .diff import DiffView
from .markdown import render_markdown, split_frozen
from .message import MessageView, ThoughtView
from .permission import PermissionPrompt
from .plan import PlanWidget
from .terminal import TerminalOutputView
from .toolcall import ToolCallCard
from .turn import TurnView

__all__ = [
    "Coalescer",
    "DiffView",
    "MessageView",
    "PermissionPrompt",
    "PlanWidget",
    "TerminalOutputView",
    "ThoughtView",
    "ToolCallCard",
    "TurnView",
    "render_markdown",
    "split_frozen",
]
