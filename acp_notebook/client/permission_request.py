"""A `session/request_permission` as the client keeps it: the options the agent offered,
the merged tool call it is about, that call's risk rating, and the decision once made (which
option, who chose it, the rule that decided). The permission broker (``permissions.py``)
opens and decides these; a tool call (``toolcall.py``) lists the ones about it, so every
renderer shows a call with its requests.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import anyio

from .notebook_names import IN_KERNEL, RUNS_IN_KERNEL
from .toolcall import EDIT_KINDS, ToolCallState

if TYPE_CHECKING:
    from .danger import Danger
    from .rules import RuleMatch

__all__ = ["Origin", "PermissionOption", "PermissionRequest"]

log = logging.getLogger(__name__)

#: Who asks: the agent's own request, or the client about a write, a command or one of
#: its notebook tools.
Origin = Literal["request", "write", "command", "tool"]


@dataclass
class PermissionOption:
    option_id: str
    name: str
    kind: str

    @classmethod
    def from_wire(cls, raw: Any) -> PermissionOption | None:
        if not isinstance(raw, dict) or not isinstance(raw.get("optionId"), str):
            return None
        name = raw.get("name")
        kind = raw.get("kind")
        return cls(
            raw["optionId"],
            name if isinstance(name, str) else raw["optionId"],
            kind if isinstance(kind, str) else "",
        )

    @property
    def allows(self) -> bool:
        return self.kind.startswith("allow")


@dataclass
class PermissionRequest:
    """One pending (or decided) `session/request_permission`."""

    key: str
    tool_call_id: str
    tool_call: dict[str, Any]
    options: list[PermissionOption]
    state: Literal["pending", "selected", "cancelled"] = "pending"
    chosen: PermissionOption | None = None
    decided_by: str | None = None  # "user", "policy allow", "rule `allow read`", "cancel"…
    #: Why the decision is not what a rule or the policy would say alone (for the transcript).
    note: str | None = None
    #: The merged tool call and the session's directory (see :meth:`attach`).
    call: ToolCallState | None = field(default=None, repr=False, compare=False)
    cwd: str | None = None
    #: The tool call's risk rating, computed once by :meth:`attach` (None: nothing found).
    danger: Danger | None = None
    #: How the session's agent runs, in its turn header's words (``Session.sandbox``:
    #: "🔒 confined to `project/` · network on"); empty when the client did not start it.
    confinement: str = ""
    #: The rule that decided (or forced asking), if one matched.
    rule: RuleMatch | None = None
    #: The client asks this itself, about a write or command the agent did not ask for
    #: (``guard.py`` applied the rules and the policy already): only a person decides.
    unasked: bool = False
    #: ``tool``: the client's own question about its notebook tool (``receive`` with
    #: ``notebook_tool``); ``request``: the agent's.
    origin: Origin = "request"
    _decided: anyio.Event = field(default_factory=anyio.Event, repr=False)

    @property
    def pending(self) -> bool:
        return self.state == "pending"

    def option(self, option_id: str) -> PermissionOption | None:
        return next((o for o in self.options if o.option_id == option_id), None)

    @property
    def sandbox(self) -> str:
        """Whether what it asks for would run confined, for its card: for a command or a
        write, how the agent runs (:attr:`confinement`: commands run, and files are
        written, by the agent's confined processes or inside the session's folders); for
        a notebook tool that runs code, that the kernel is not confined; else empty."""
        call = self.call
        if call is None:
            return ""
        if call.notebook_tool is not None:
            return IN_KERNEL if call.notebook_tool in RUNS_IN_KERNEL else ""
        if call.command is not None or call.kind in EDIT_KINDS or call.diffs:
            return self.confinement
        return ""

    def attach(
        self, call: ToolCallState, cwd: str, roots: Sequence[str] = (), confinement: str = ""
    ) -> None:
        """Give the request its merged tool call (rules match it) and rate its risk:
        the command it runs, and its paths against the session's ``roots``;
        ``confinement``: how the session's agent runs (``Session.sandbox``)."""
        from .danger import assess_call  # imported here: rules.py (PermissionRules.match) says why

        self.call = call
        self.cwd = cwd
        self.confinement = confinement
        try:
            self.danger = assess_call(call, list(roots) or [cwd])
        except Exception:  # a rating must never break a request: it is only a hint
            log.exception("could not rate the risk of %s", self.tool_call_id)
            self.danger = None

    def outcome(self) -> dict[str, Any]:
        if self.state == "selected" and self.chosen is not None:
            return {"outcome": {"outcome": "selected", "optionId": self.chosen.option_id}}
        return {"outcome": {"outcome": "cancelled"}}

    def describe(self) -> str:
        """How the decision reads in a transcript: 'Allow once (chosen by user)'."""
        if self.state == "pending":
            return "waiting for permission"
        if self.state == "cancelled" or self.chosen is None:
            reason = _CANCEL_REASONS.get(self.decided_by or "cancel", self.decided_by)
            text = f"Cancelled ({reason})"
        else:
            text = f"{self.chosen.name} (chosen by {self.decided_by})"
        return f"{text} — {self.note}" if self.note else text


_CANCEL_REASONS = {
    "cancel": "the turn was cancelled",
    "timeout": "the turn timed out",
    "withdrawn": "the agent withdrew the request",
    "session closed": "the session closed",
    "user": "by user",
}
