"""Asking before a notebook tool acts: what is asked, and the three possible answers.

The notebook layer plugs its permission broker, rules and policy in as one async
callback (:data:`Approve`); the tools only await it (through :func:`ask`). The callback
runs on the agent loop thread, like every other permission request.

Who decides, in order: a rule or the policy (deny → :class:`Denied`; an allow rule or
the policy ``allow`` → :class:`Approved`; ``ask`` where no one can click → Denied);
otherwise the user. For most tools the user answers a permission card in the turn; a
tool whose change is reviewed where it lands (``review_in_place``: a cell edit, shown
as a diff in the cell with Accept and Reject) gets :class:`Review` instead, shows its
own review and reports the user's decision itself.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ...protocol.trace_event import DECISION, TraceEvent

log = logging.getLogger(__name__)

#: The ACP tool kind a notebook tool acts as (what ``allow KIND …`` rules name).
ToolKind = Literal["read", "edit", "delete", "execute"]


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
    #: What the tool does, as an ACP tool kind: rules match on it.
    kind: ToolKind = "execute"
    #: The tool shows the change for review where it lands (in the cell) and waits for
    #: the user there: answer :class:`Review` instead of showing a card.
    review_in_place: bool = False
    #: The files the call changes (a cell edit: the notebook's own path, as the server
    #: knows it); rules with a path glob match on them.
    paths: tuple[str, ...] = ()
    #: The live cell the call changes (its nbformat id), if it is a cell tool.
    cell_id: str | None = None


@dataclass(frozen=True)
class Approved:
    """Go ahead. ``by`` says who allowed it without asking, in words the transcript
    shows ("rule `allow edit *.ipynb`", "the policy allow"); empty when the user did."""

    by: str = ""


@dataclass(frozen=True)
class Denied:
    """Do not run it. ``reason`` says who decided, in words the agent is shown:
    "denied by the user", "denied by rule `deny execute *`", "denied by the policy".
    ``decided_by`` names who refused ("you", "rule `deny edit_cell`", "the policy deny")
    when someone did; None when nothing was decided (the session closed, asking failed)."""

    reason: str
    decided_by: str | None = None


@dataclass(frozen=True)
class Review:
    """No rule or policy decided: the tool shows its own review (``review_in_place``)
    and reports the user's decision."""


Decision = Approved | Denied | Review
Approve = Callable[[ToolApproval], Awaitable[Decision]]


async def ask(approve: Approve, request: ToolApproval) -> Decision:
    """``approve(request)``; a failure to ask is a denial (nothing runs unapproved), and
    :class:`Review` for a tool that cannot review in place is a denial too."""
    try:
        decision = await approve(request)
    except Exception as exc:
        log.exception("asking to approve %s failed", request.tool)
        return Denied(f"not approved: asking for approval failed ({type(exc).__name__})")
    if isinstance(decision, Review) and not request.review_in_place:
        return Denied("not approved: no one reviewed it")
    return decision


def traced(request: ToolApproval, decision: Decision) -> TraceEvent:
    """The decision as the message log keeps it (channel ``decision``: nothing travelled),
    so the inspector shows why a call ran or did not between the call and its answer."""
    record: dict[str, Any] = {"tool": request.tool, "title": request.title}
    if isinstance(decision, Approved):
        record.update(outcome="allowed", by=decision.by or "you")
    elif isinstance(decision, Denied):
        record.update(outcome="denied", by=decision.decided_by or "", reason=decision.reason)
    else:
        record.update(outcome="shown for review in its cell", by="")
    size = len(json.dumps(record, ensure_ascii=False).encode())
    return TraceEvent("send", time.time(), record, size=size, channel=DECISION)
