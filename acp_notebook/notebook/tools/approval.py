"""Asking before a notebook tool acts: what is asked, and the two possible answers.

The notebook layer plugs its permission broker, rules and policy in as one async
callback (:data:`Approve`); the tools only await it. The callback runs on the agent
loop thread, like every other permission request.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ToolApproval:
    """One tool call waiting for approval."""

    #: The notebook's name for the ACP session whose agent calls the tool.
    session: str
    #: The MCP tool's name (``run_code``).
    tool: str
    #: One line for the permission card ("Run 3 lines of Python in the kernel").
    title: str
    #: The code that would run, shown in full before the buttons.
    code: str | None = None
    #: The tool call's arguments as the agent sent them (the card's raw input).
    arguments: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Approved:
    """Go ahead."""


@dataclass(frozen=True)
class Denied:
    """Do not run it. ``reason`` says who decided, in words the agent is shown:
    "denied by the user", "denied by rule `deny execute *`", "denied by the policy"."""

    reason: str


Decision = Approved | Denied
Approve = Callable[[ToolApproval], Awaitable[Decision]]
