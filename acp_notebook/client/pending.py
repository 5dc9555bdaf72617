"""What the permission and elicitation brokers share: requests from the agent that wait
until a policy, a person or a cancellation decides them."""

from __future__ import annotations

import itertools
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Generic, Protocol, TypeVar

import anyio

__all__ = ["Broker", "PendingRequest"]

log = logging.getLogger(__name__)


class PendingRequest(Protocol):
    key: str
    tool_call_id: Any
    _decided: anyio.Event

    @property
    def pending(self) -> bool: ...


R = TypeVar("R", bound=PendingRequest)


class Broker(Generic[R]):
    """Pending requests of one kind, keyed by a request key.

    ``on_change(request)`` is called whenever a request appears or is decided, so the
    transcript and the UI can follow. Subclasses say how a request is decided when it
    arrives (:meth:`_decide`) and how it is cancelled (:meth:`cancel`).
    """

    prefix = "req"

    def __init__(
        self,
        *,
        asker: Callable[[R], Awaitable[None]] | None = None,
        on_change: Callable[[R], None] | None = None,
    ) -> None:
        self.asker = asker
        self.on_change = on_change
        self.requests: dict[str, R] = {}
        self._counter = itertools.count(1)

    def _next_key(self) -> str:
        return f"{self.prefix}-{next(self._counter)}"

    @property
    def pending(self) -> list[R]:
        return [r for r in self.requests.values() if r.pending]

    def for_tool_call(self, tool_call_id: str) -> list[R]:
        """The requests about one tool call, oldest first."""
        return [r for r in self.requests.values() if r.tool_call_id == tool_call_id]

    async def decide(self, request: R) -> R:
        """Wait until ``request`` is decided by the policy, the UI or a cancellation."""
        self._changed(request)
        try:
            await self._decide(request)
            await request._decided.wait()
        except BaseException:
            # The agent withdrew the request ($/cancel_request) or the session is closing.
            self.cancel(request.key, by="withdrawn")
            raise
        return request

    async def _decide(self, request: R) -> None:
        raise NotImplementedError

    async def _run_asker(self, request: R) -> None:
        """Await the asker on ``request`` until the request is decided by anyone: one
        cancelled meanwhile (spec: a cancelled turn answers its pending requests
        `cancelled`) stops its asker, so the answer is sent and no prompt lingers."""
        asker = self.asker
        if asker is None:
            return

        async def run() -> None:
            await asker(request)

        async with anyio.create_task_group() as group:
            group.start_soon(run)
            await request._decided.wait()
            group.cancel_scope.cancel()

    def cancel(self, key: str, *, by: str) -> bool:
        raise NotImplementedError

    def cancel_all(self, *, by: str = "cancel") -> int:
        """spec: every pending request is answered `cancelled` when the turn is cancelled."""
        return sum(self.cancel(r.key, by=by) for r in self.pending)

    def _changed(self, request: R) -> None:
        if self.on_change is not None:
            try:
                self.on_change(request)
            except Exception:
                log.exception("%s on_change failed", type(self).__name__)
