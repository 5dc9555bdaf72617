"""The permission broker: every `session/request_permission` of a session waits here
until a person, a policy or a cancellation decides it.

Policies:

* ``ask``   — a UI decides (the notebook's buttons, the CLI's terminal prompt). With
  no UI attached the request is rejected, never silently allowed.
* ``allow`` — the first ``allow_once`` option, else ``allow_always``.
* ``deny``  — the first ``reject_once`` option, else ``reject_always``.

Each decision keeps the chosen option and who chose it, for the transcript.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio

from .pending import Broker

log = logging.getLogger(__name__)

Policy = Literal["ask", "allow", "deny"]
POLICIES: tuple[Policy, ...] = ("ask", "allow", "deny")

_PREFERENCES: dict[str, tuple[str, ...]] = {
    "allow": ("allow_once", "allow_always"),
    "deny": ("reject_once", "reject_always"),
}


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
    decided_by: str | None = None  # "user", "policy allow", "policy deny", "no UI", "cancel"
    _decided: anyio.Event = field(default_factory=anyio.Event, repr=False)

    @property
    def pending(self) -> bool:
        return self.state == "pending"

    def option(self, option_id: str) -> PermissionOption | None:
        return next((o for o in self.options if o.option_id == option_id), None)

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
            return f"Cancelled ({reason})"
        return f"{self.chosen.name} (chosen by {self.decided_by})"


_CANCEL_REASONS = {
    "cancel": "the turn was cancelled",
    "timeout": "the turn timed out",
    "withdrawn": "the agent withdrew the request",
    "session closed": "the session closed",
    "user": "by user",
}


def pick_by_policy(options: list[PermissionOption], policy: str) -> PermissionOption | None:
    """The option a non-interactive policy picks, or None when no option fits."""
    for kind in _PREFERENCES.get(policy, ()):
        for option in options:
            if option.kind == kind:
                return option
    return None


Asker = Callable[[PermissionRequest], Awaitable[None]]


class PermissionBroker(Broker[PermissionRequest]):
    """Pending permission requests of one session, keyed by a request key.

    With policy ``ask`` an ``asker`` coroutine is awaited (the CLI's terminal prompt) —
    or, when none is set but ``interactive`` is true, the request simply waits for
    :meth:`choose` (the notebook's buttons call it).
    """

    prefix = "perm"

    def __init__(
        self,
        policy: Policy = "ask",
        *,
        interactive: bool = False,
        asker: Asker | None = None,
        on_change: Callable[[PermissionRequest], None] | None = None,
    ) -> None:
        super().__init__(asker=asker, on_change=on_change)
        self.policy: Policy = policy
        self.interactive = interactive

    def open(self, tool_call: dict[str, Any], raw_options: Any) -> PermissionRequest:
        """Register a request (pending); :meth:`decide` then waits for its answer."""
        options = [o for o in map(PermissionOption.from_wire, raw_options or []) if o is not None]
        tool_call_id = str(tool_call.get("toolCallId", ""))
        request = PermissionRequest(self._next_key(), tool_call_id, tool_call, options)
        self.requests[request.key] = request
        return request

    async def _decide(self, request: PermissionRequest) -> None:
        if self.policy in ("allow", "deny"):
            option = pick_by_policy(request.options, self.policy)
            if option is not None:
                self._select(request, option, f"policy {self.policy}")
            else:
                self.cancel(request.key, by=f"policy {self.policy}: no matching option")
        elif self.asker is not None:
            await self.asker(request)
        elif not self.interactive:
            option = pick_by_policy(request.options, "deny")
            if option is not None:
                self._select(request, option, "policy ask without a UI")
            else:
                self.cancel(request.key, by="policy ask without a UI")

    def choose(self, key: str, option_id: str, *, by: str = "user") -> bool:
        """Decide a pending request; False if it is unknown, decided or the option is not offered."""
        request = self.requests.get(key)
        if request is None or not request.pending:
            return False
        option = request.option(option_id)
        if option is None:
            return False
        self._select(request, option, by)
        return True

    def cancel(self, key: str, *, by: str = "cancel") -> bool:
        """Answer one pending request `cancelled`."""
        request = self.requests.get(key)
        if request is None or not request.pending:
            return False
        request.state = "cancelled"
        request.decided_by = by
        request._decided.set()
        self._changed(request)
        return True

    def _select(self, request: PermissionRequest, option: PermissionOption, by: str) -> None:
        request.state = "selected"
        request.chosen = option
        request.decided_by = by
        request._decided.set()
        self._changed(request)
