"""One `elicitation/create` of the agent, as the client keeps it: what it asks, where it
belongs, how it was decided, and how that reads in a transcript and on the wire."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import anyio

from ...protocol import models as m
from ..permission_request import _CANCEL_REASONS
from .form import FieldSpec, fields, schema_problem
from .redaction import format_values
from .url import url_host, url_problem

if TYPE_CHECKING:  # values made on first use: importing should not make their models
    from ..handlers import ElicitationParams, ElicitationResponse

__all__ = ["ElicitationRequest", "Mode", "Scope", "State", "scope_of"]

Mode = Literal["form", "url", "unknown"]
State = Literal["pending", "accepted", "declined", "cancelled"]


@dataclass(frozen=True)
class Scope:
    """Where an elicitation belongs: a session (and maybe one of its tool calls), or a
    JSON-RPC request outside any session (e.g. while authenticating)."""

    session_id: str | None
    tool_call_id: str | None
    request_id: m.RequestId
    #: ``requestId`` was sent (even as null): the elicitation is request-scoped.
    request_scoped: bool


def scope_of(request: ElicitationParams) -> Scope:
    """The scope an elicitation names (an unknown mode's raw params are read defensively)."""
    if isinstance(request, m.UnknownCreateElicitationRequest):
        raw = request.raw
        session_id, tool_call_id, request_id = (
            raw.get("sessionId"),
            raw.get("toolCallId"),
            raw.get("requestId"),
        )
        return Scope(
            session_id if isinstance(session_id, str) else None,
            tool_call_id if isinstance(tool_call_id, str) else None,
            request_id if isinstance(request_id, (int, str)) else None,
            "requestId" in raw,
        )
    return Scope(
        request.session_id,
        request.tool_call_id,
        request.request_id,
        "request_id" in request.model_fields_set,
    )


@dataclass
class ElicitationRequest:
    """One `elicitation/create` of the agent: pending, then decided (accepted / declined /
    cancelled) with who decided and, for forms, the values sent."""

    key: str
    mode: Mode
    message: str
    #: The agent that asks (spec: identify the requesting agent).
    agent: str = ""
    #: The mode as received (differs from ``mode`` only for unknown modes).
    raw_mode: str | None = None
    schema: m.ElicitationSchema | None = None
    url: str | None = None
    elicitation_id: str | None = None
    session_id: str | None = None
    tool_call_id: str | None = None
    request_id: m.RequestId = None
    #: The params as received (spec: preserve unknown modes' raw payload).
    raw: dict[str, Any] = field(default_factory=dict)
    #: Why it cannot be accepted here (unknown mode or field type, unsafe URL), or None.
    problem: str | None = None
    state: State = "pending"
    content: dict[str, Any] | None = None
    #: "user", "headless", "client" (declined by this client's rules), "cancel", …
    decided_by: str | None = None
    reason: str | None = None
    #: URL mode: the agent sent `elicitation/complete` for it.
    completed: bool = False
    _decided: anyio.Event = field(default_factory=anyio.Event, repr=False)

    @classmethod
    def of(cls, key: str, request: ElicitationParams, *, agent: str = "") -> ElicitationRequest:
        """The pending request for the agent's (already read) params."""
        schema: m.ElicitationSchema | None = None
        url: str | None = None
        elicitation_id: str | None = None
        mode: Mode
        raw_mode: str | None
        if isinstance(request, m.CreateElicitationFormRequest):
            mode, raw_mode, message = "form", request.mode, request.message
            schema = request.requested_schema
            problem = schema_problem(schema)
        elif isinstance(request, m.CreateElicitationUrlRequest):
            mode, raw_mode, message = "url", request.mode, request.message
            url, elicitation_id = request.url, request.elicitation_id
            problem = url_problem(url)
        else:
            raw_message = request.raw.get("message")
            mode, raw_mode = "unknown", request.mode
            message = raw_message if isinstance(raw_message, str) else ""
            problem = f"the mode `{raw_mode}` is not one acp_notebook knows"
        scope = scope_of(request)
        return cls(
            key, mode, message, agent, raw_mode, schema, url, elicitation_id,
            scope.session_id, scope.tool_call_id, scope.request_id, request.to_wire(), problem,
        )  # fmt: skip

    @property
    def pending(self) -> bool:
        return self.state == "pending"

    @property
    def can_accept(self) -> bool:
        return self.problem is None and self.mode != "unknown"

    @property
    def host(self) -> str | None:
        return url_host(self.url) if self.url else None

    @property
    def fields(self) -> list[FieldSpec]:
        return fields(self.schema) if self.schema is not None else []

    def reply(self) -> ElicitationResponse:
        """The `elicitation/create` result for the agent."""
        if self.state == "accepted":
            if self.mode == "form":
                return m.AcceptElicitationResponse(content=self.content or {})
            return m.AcceptElicitationResponse()
        if self.state == "declined":
            return m.DeclineElicitationResponse()
        return m.CancelElicitationResponse()

    def response(self) -> dict[str, Any]:
        """:meth:`reply` as it goes on the wire."""
        return self.reply().to_wire()

    def describe(self) -> str:
        """The decision in words: "accepted by user", "declined (no one to ask: headless run)"."""
        if self.state == "pending":
            return "waiting for an answer"
        if self.state == "accepted":
            text = f"accepted by {self.decided_by}"
            return text + " (consented to open the URL)" if self.mode == "url" else text
        if self.state == "declined":
            if self.decided_by == "user":
                return "declined by user"
            if self.decided_by == "client":
                return f"declined automatically ({self.reason})"
            return f"declined ({self.reason or self.decided_by})"
        if self.decided_by == "user":
            return "cancelled by user"
        reason = _CANCEL_REASONS.get(self.decided_by or "cancel", self.decided_by)
        return f"cancelled ({reason})"

    def outcome(self) -> str:
        """:meth:`describe` plus what was sent or what followed (values redacted where secret)."""
        text = self.describe()
        if self.state == "accepted" and self.mode == "form":
            text += ": " + format_values(self.content)
        if self.state == "accepted" and self.mode == "url":
            text += (
                " · the agent reported the flow complete"
                if self.completed
                else " · not reported complete yet"
            )
        return text
