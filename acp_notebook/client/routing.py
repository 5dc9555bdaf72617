"""The agent's messages to the client, routed: each request read once
(:mod:`~acp_notebook.client.handlers`) and served by the session it names — or by the
connection's ``handlers`` for the methods those define — and each `session/update` applied
to its session's transcript, in arrival order.

An agent's first messages can race the `session/new` answer that registers their session:
updates for an unknown session are kept until it registers, and a request naming one waits
for it (briefly) before it is refused.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

import anyio

from ..protocol import models as m
from ..protocol.errors import INVALID_PARAMS, RpcError
from ..protocol.jsonrpc import Peer
from ..protocol.modelbase import AcpModel
from ..protocol.text_chunk import text_chunk
from ..protocol.variants import member
from .elicitation import ElicitationBroker, scope_of
from .handlers import (
    SESSION_REQUESTS,
    AgentRequests,
    Route,
    read_elicitation,
    read_params,
)

if TYPE_CHECKING:
    from .handlers import ElicitationParams, ElicitationResponse
    from .session import Session

__all__ = ["Routed", "Router"]

log = logging.getLogger(__name__)

#: How long a request naming a session we do not know yet may wait for it: an agent's
#: first requests can race the `session/new` answer that registers the session.
_SESSION_WAIT = 2.0
#: Updates kept per unknown session id until it registers (same race, for notifications).
_ORPHAN_LIMIT = 10_000
#: Unknown session ids kept at once (only a session being opened can be one for real).
_ORPHAN_SESSIONS = 8


def _read_update(params: Any) -> tuple[str, m.SessionUpdate] | None:
    """The session id and the update of a `session/update`'s params (None: unreadable).

    The update is validated by the one variant its ``sessionUpdate`` names (the union is
    made only for what that cannot read: see protocol/variants.py); anything else is the
    whole notification's lenient parse."""
    if type(params) is dict and len(params) == 2 and type(params.get("sessionId")) is str:
        update = member("SessionUpdate", params.get("update"))
        if update is not None:
            return params["sessionId"], update  # type: ignore[return-value]
    try:
        notification = m.SessionNotification.parse(params)
    except Exception:
        return None
    return notification.session_id, notification.update


class Routed(Protocol):
    """What the router reads of the connection whose messages it routes
    (``ClientConnection``): its peer, its open sessions, who serves what."""

    @property
    def peer(self) -> Peer: ...

    @property
    def name(self) -> str: ...

    @property
    def agent_label(self) -> str: ...

    @property
    def advertised(self) -> m.ClientCapabilities: ...

    @property
    def handlers(self) -> object | None: ...

    @property
    def sessions(self) -> dict[str, Session]: ...

    @property
    def elicitations(self) -> ElicitationBroker | None: ...


class Router:
    """Serves one connection's incoming agent requests and notifications."""

    def __init__(self, connection: Routed) -> None:
        self.connection = connection
        self._orphans: dict[str, list[m.SessionUpdate]] = {}
        self._registered = anyio.Event()
        peer = connection.peer
        peer.handle_notification("session/update", self._on_session_update)
        for route in SESSION_REQUESTS:
            peer.handle_request(route.method, functools.partial(self._serve, route))
        peer.handle_request("elicitation/create", self._on_elicitation_create)
        peer.handle_notification("elicitation/complete", self._on_elicitation_complete)

    def register(self, session: Session) -> Session:
        """Route to ``session`` from now on: the updates kept for it are applied first."""
        self.connection.sessions[session.session_id] = session
        for update in self._orphans.pop(session.session_id, []):
            session.transcript.apply(update)
        self._registered.set()
        self._registered = anyio.Event()
        return session

    async def session_for(self, session_id: str) -> Session:
        """The open session ``session_id`` names (waiting briefly for it to register)."""
        sessions = self.connection.sessions
        with anyio.move_on_after(_SESSION_WAIT):
            while session_id not in sessions:
                await self._registered.wait()
        session = sessions.get(session_id)
        if session is None or session.closed:
            raise RpcError(
                INVALID_PARAMS, f"Unknown session `{session_id}`.", {"sessionId": session_id}
            )
        return session

    def _custom(self, handler: str) -> Callable[..., Any] | None:
        """The connection's ``handlers`` object's own method for ``handler``, if any."""
        method = getattr(self.connection.handlers, handler, None)
        return method if callable(method) else None

    # ------------------------------------------------------------------ session/update

    def _on_session_update(self, params: Any) -> None:
        # Most updates of a streamed reply are text chunks: read without the models.
        chunk = text_chunk(params)
        if chunk is not None:
            session = self.connection.sessions.get(chunk.session_id)
            if session is not None:
                session.transcript.apply_text_chunk(chunk)
                return
        read = _read_update(params)
        if read is None:
            log.warning(
                "%s: a session/update could not be read even leniently: %.300r",
                self.connection.name,
                params,
            )
            return
        session_id, update = read
        session = self.connection.sessions.get(session_id)
        if session is not None:
            session.transcript.apply(update)
            return
        # An update can race the answer that creates its session (the reader applies the
        # lines after a `session/new` answer before the caller resumes): keep it.
        orphans = self._orphans.get(session_id)
        if orphans is None:
            if len(self._orphans) >= _ORPHAN_SESSIONS:
                # Bounded in ids too: an agent inventing ids forgets its oldest one.
                del self._orphans[next(iter(self._orphans))]
            orphans = self._orphans[session_id] = []
        if len(orphans) < _ORPHAN_LIMIT:
            orphans.append(update)

    # ------------------------------------------------------------------ requests

    async def _serve(self, route: Route, params: Any) -> AcpModel:
        """Read a session-scoped request once, then let its handler serve it."""
        request = route.read(params)
        custom = self._custom(route.handler)
        if custom is not None:
            result: AcpModel = await custom(request)
            return result
        session: AgentRequests = await self.session_for(request.session_id)
        served: AcpModel = await getattr(session, route.handler)(request)
        return served

    async def _on_elicitation_create(self, params: Any) -> ElicitationResponse:
        """Session-scoped requests go to their session; request-scoped ones (``requestId``,
        outside any session) to the connection's ``elicitations`` broker, or are declined
        when it has none."""
        request = read_elicitation(params)
        self._check_advertised(request)
        custom = self._custom("create_elicitation")
        if custom is not None:
            result: ElicitationResponse = await custom(request)
            return result
        scope = scope_of(request)
        if scope.session_id is not None:
            session: AgentRequests = await self.session_for(scope.session_id)
            return await session.create_elicitation(request)
        if not scope.request_scoped:
            raise RpcError(INVALID_PARAMS, "The elicitation has neither sessionId nor requestId.")
        connection = self.connection
        broker = connection.elicitations
        if broker is None:
            log.info(
                "%s: declined a request-scoped elicitation: no one answers it", connection.name
            )
            broker = ElicitationBroker()  # not interactive: records and declines it
        return (await broker.decide(broker.open(request, agent=connection.agent_label))).reply()

    def _check_advertised(self, request: ElicitationParams) -> None:
        mode = request.mode
        caps = self.connection.advertised.elicitation
        if mode in ("form", "url") and (caps is None or getattr(caps, mode) is None):
            # spec: a mode the client never advertised is invalid params.
            raise RpcError(
                INVALID_PARAMS,
                f"acp_notebook did not advertise elicitation.{mode} for this connection.",
            )

    def _on_elicitation_complete(self, params: Any) -> None:
        try:
            notification = read_params(m.CompleteElicitationNotification, params)
        except RpcError as exc:
            log.info(
                "%s: ignored an unreadable elicitation/complete: %s",
                self.connection.name,
                exc.message,
            )
            return
        custom = self._custom("complete_elicitation")
        if custom is not None:
            custom(notification)
            return
        # spec: unknown or already completed ids are ignored (each broker ignores them).
        for session in self.connection.sessions.values():
            session.complete_elicitation(notification)
        if self.connection.elicitations is not None:
            self.connection.elicitations.complete(notification.elicitation_id)
