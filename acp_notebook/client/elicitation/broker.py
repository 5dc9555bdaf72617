"""The elicitation broker: every `elicitation/create` of a session (or of a connection, for
request-scoped ones) waits here until a person, the headless rule or a cancellation
decides it — the same shape as the permission broker."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..handlers import Params, read_elicitation
from ..pending import Broker
from .form import validate_content
from .request import ElicitationRequest, State

if TYPE_CHECKING:  # a value made on first use: importing should not make its models
    from ..handlers import ElicitationParams

__all__ = ["HEADLESS", "Asker", "ElicitationBroker", "InvalidContent"]

#: Why a request was declined without asking anyone, when no UI is attached.
HEADLESS = "no one to ask: headless run"

Asker = Callable[[ElicitationRequest], Awaitable[None]]


class InvalidContent(ValueError):
    """Form content that does not fit the requested schema (``errors``: field → problem)."""

    def __init__(self, errors: dict[str, str]) -> None:
        self.errors = errors
        super().__init__("; ".join(f"{k or 'form'}: {v}" for k, v in errors.items()))


class ElicitationBroker(Broker[ElicitationRequest]):
    """Pending elicitations of one session (or of a connection, for request-scoped ones).

    ``on_change(request)`` is called whenever a request appears or changes. With an
    ``asker`` coroutine set, it is awaited for each request (a terminal prompt); else,
    when ``interactive`` (a bool, or a function read at each request) is true, the request
    waits for :meth:`accept` / :meth:`decline` / :meth:`cancel` (the notebook's buttons);
    else it is declined, and the transcript says that no one was there to ask.
    """

    prefix = "elicit"

    def __init__(
        self,
        *,
        interactive: bool | Callable[[], bool] = False,
        asker: Asker | None = None,
        on_change: Callable[[ElicitationRequest], None] | None = None,
    ) -> None:
        super().__init__(asker=asker, on_change=on_change)
        self.interactive = interactive

    def open(self, request: ElicitationParams | Params, *, agent: str = "") -> ElicitationRequest:
        """Register ``request`` (pending); :meth:`decide` waits for its answer.

        Wire params are read first (``RpcError(-32602)`` for a form or URL request that
        lacks what its mode needs).
        """
        pending = ElicitationRequest.of(self._next_key(), read_elicitation(request), agent=agent)
        self.requests[pending.key] = pending
        return pending

    async def _decide(self, request: ElicitationRequest) -> None:
        if not request.pending:
            return
        if request.mode == "unknown":
            # spec: an unknown mode MUST NOT be rendered as a known one.
            self.decline(request.key, by="client", reason=request.problem)
        elif self.asker is not None:
            await self._run_asker(request)
        elif not self._interactive():
            # spec: never accepted without a person (the client MUST NOT make up the user's
            # answer); a decline tells the agent to go on without.
            self.decline(request.key, by="headless", reason=HEADLESS)

    def _interactive(self) -> bool:
        return self.interactive() if callable(self.interactive) else self.interactive

    # ------------------------------------------------------------------ decisions

    def accept(
        self, key: str, content: Mapping[str, Any] | None = None, *, by: str = "user"
    ) -> bool:
        """Accept a pending request: a form with ``content`` (validated against its schema;
        :class:`InvalidContent` if it does not fit), a URL request with no content (the user
        consented to open it). False if the request is unknown or already decided."""
        request = self.requests.get(key)
        if request is None or not request.pending:
            return False
        if not request.can_accept:
            raise InvalidContent({"": f"This request cannot be accepted: {request.problem}."})
        values: dict[str, Any] | None = None
        if request.mode == "form":
            assert request.schema is not None
            values = dict(content or {})
            errors = validate_content(request.schema, values)
            if errors:
                raise InvalidContent(errors)
        elif content:
            raise InvalidContent({"": "A URL request is accepted without content."})
        request.state = "accepted"
        request.content = values
        request.decided_by = by
        request._decided.set()
        self._changed(request)
        return True

    def decline(self, key: str, *, by: str = "user", reason: str | None = None) -> bool:
        """Answer ``decline``: the user does not want to give this input."""
        return self._end(key, "declined", by, reason)

    def cancel(self, key: str, *, by: str = "user") -> bool:
        """Answer ``cancel``: dismissed without a choice (or the turn was cancelled)."""
        return self._end(key, "cancelled", by, None)

    def complete(self, elicitation_id: str) -> bool:
        """`elicitation/complete`: mark the URL request with this id completed. False (and
        nothing else) for unknown or already completed ids (spec: ignore them)."""
        for request in self.requests.values():
            if request.mode == "url" and request.elicitation_id == elicitation_id:
                if request.completed:
                    return False
                request.completed = True
                self._changed(request)
                return True
        return False

    def _end(self, key: str, state: State, by: str, reason: str | None) -> bool:
        request = self.requests.get(key)
        if request is None or not request.pending:
            return False
        request.state = state
        request.decided_by = by
        request.reason = reason
        request._decided.set()
        self._changed(request)
        return True
