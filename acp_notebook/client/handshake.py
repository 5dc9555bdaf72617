"""The handshake with an agent: `initialize` (protocol version, capabilities both ways),
`authenticate` and `logout`, and the time each may take.

:class:`Handshake` is the part of a connection that exists before any session:
:class:`~acp_notebook.client.connection.ClientConnection` builds sessions on top of it.
"""

from __future__ import annotations

import contextlib
import copy
import os
from typing import Any

import anyio

from .._version import __version__
from ..protocol import models as m
from ..protocol.errors import INVALID_PARAMS, RpcError
from ..protocol.jsonrpc import Peer
from ..protocol.process import AgentProcess, AgentStartError
from .auth import AuthMethodInfo, auth_method_info
from .errors import (
    AuthRequired,
    HandshakeTimeout,
    ProtocolVersionMismatch,
    UnsupportedByAgent,
    looks_like_auth,
)

__all__ = [
    "CLIENT_CAPABILITIES",
    "CLIENT_INFO",
    "HANDSHAKE_FLOOR",
    "HANDSHAKE_FLOOR_ENV",
    "HANDSHAKE_TIMEOUT",
    "PROTOCOL_VERSION",
    "START_TIMEOUT",
    "Handshake",
    "client_capabilities",
    "handshake_floor",
    "handshake_limit",
]

PROTOCOL_VERSION = 1
#: How long an agent may take to answer `initialize`: long enough for ``npx``/``uvx``
#: to download a large agent the first time (their progress is on stderr meanwhile).
START_TIMEOUT = 180.0
#: Seconds opening a session (`session/new|load|resume`) may take by default: an agent
#: that does not answer by then is stuck.
HANDSHAKE_TIMEOUT = 120.0
#: The least time a turn's timeout (``-t``) gives each handshake request: starting an
#: agent takes seconds (an interpreter, ``npx``) however short the turn may be.
HANDSHAKE_FLOOR = 10.0
#: Overrides :data:`HANDSHAKE_FLOOR` (seconds): the test suite sets it so a timeout test
#: waits a fraction of a second, not ten; an unreadable value leaves the floor as it is.
HANDSHAKE_FLOOR_ENV = "ACP_NOTEBOOK_HANDSHAKE_FLOOR"
CLIENT_INFO = {"name": "acp-notebook", "title": "acp_notebook", "version": __version__}
#: The models of a first turn, in the order it meets them: their validators (built on
#: first use) are built while the agent starts, before it answers `initialize`. Of the
#: updates, only the list of commands nearly every agent sends after `session/new`: each
#: update is read by its own variant (protocol/variants.py), and a text chunk by none.
FIRST_TURN_MODELS = (
    "InitializeResponse",
    "NewSessionRequest",
    "NewSessionResponse",
    "PromptRequest",
    "AvailableCommandsUpdate",
    "PromptResponse",
)


async def prepare_first_turn(answered: anyio.Event) -> None:
    """Build the validators of :data:`FIRST_TURN_MODELS` one at a time until the answer
    is in: a freshly started agent takes a while to answer, and this is work its answers
    need anyway (an answer that arrives meanwhile waits for at most one model's build)."""
    for name in FIRST_TURN_MODELS:
        if answered.is_set():
            return
        # Nothing to do for a model built already; one that cannot be built fails the same
        # way on its first use.
        with contextlib.suppress(Exception):
            getattr(m, name).model_rebuild()
        await anyio.sleep(0)


#: What we implement, and only that (spec: advertise honestly), as `initialize` sends it
#: (``clientCapabilities``): written on the wire as it is, with no model classes to make
#: for a message we write ourselves (eleven of them, about 10 ms of a first turn).
CLIENT_CAPABILITIES: dict[str, Any] = {
    "fs": {"readTextFile": True, "writeTextFile": True},
    "terminal": True,
    # Notices and compactions are shown live and saved (client/transcript.py, ui/notices.py).
    "session": {"configOptions": {"boolean": {}}, "notices": {}, "compaction": {}},
    # Both elicitation modes work end to end (client/elicitation/, ui/elicitation.py).
    "elicitation": {"form": {}, "url": {}},
}


def client_capabilities() -> m.ClientCapabilities:
    """:data:`CLIENT_CAPABILITIES` read as the model."""
    return m.ClientCapabilities.parse(copy.deepcopy(CLIENT_CAPABILITIES))


def handshake_floor() -> float:
    """:data:`HANDSHAKE_FLOOR`, or the positive number of seconds in
    :data:`HANDSHAKE_FLOOR_ENV`."""
    try:
        floor = float(os.environ.get(HANDSHAKE_FLOOR_ENV, ""))
    except ValueError:
        return HANDSHAKE_FLOOR
    return floor if floor > 0 else HANDSHAKE_FLOOR


def handshake_limit(turn_timeout: float | None, default: float | None) -> float | None:
    """Seconds one handshake request may take when the user bounded the turn with
    ``turn_timeout`` (None: ``default``): that bound, never less than
    :func:`handshake_floor`."""
    return default if turn_timeout is None else max(turn_timeout, handshake_floor())


class Handshake:
    """An agent connection before its sessions: what `initialize` said both ways, and the
    requests that may come before a session (`authenticate`, `logout`)."""

    def __init__(self, peer: Peer, *, process: AgentProcess | None, name: str) -> None:
        self.peer = peer
        self.process = process
        self.name = name
        #: Seconds `session/new|load|resume` may take.
        self.handshake_timeout = HANDSHAKE_TIMEOUT
        self.initialize_response: m.InitializeResponse | None = None
        #: Capabilities passed to `initialize`; None: ours (:data:`CLIENT_CAPABILITIES`).
        self._advertised: m.ClientCapabilities | None = None

    @property
    def advertised(self) -> m.ClientCapabilities:
        """What `initialize` advertised (before it is sent: what it would advertise);
        elicitation modes it did not offer are refused. Ours are read as the model when
        first asked (an elicitation), not when sent."""
        if self._advertised is None:
            self._advertised = client_capabilities()
        return self._advertised

    @property
    def agent_capabilities(self) -> m.AgentCapabilities:
        if self.initialize_response is None:
            return m.AgentCapabilities()
        return self.initialize_response.agent_capabilities

    @property
    def auth_methods(self) -> list[m.AuthMethod]:
        return list(self.initialize_response.auth_methods) if self.initialize_response else []

    @property
    def auth_method_infos(self) -> list[AuthMethodInfo]:
        """The advertised auth methods as the client lists and chooses them (any ``type``)."""
        return [auth_method_info(method) for method in self.auth_methods]

    @property
    def agent_info(self) -> m.Implementation | None:
        return self.initialize_response.agent_info if self.initialize_response else None

    @property
    def agent_name(self) -> str:
        """The agent as error messages name it: "The agent `Demo`"."""
        return f"The agent `{self.agent_label}`"

    @property
    def agent_label(self) -> str:
        """The agent's own name for itself (spec: elicitations identify the requesting agent)."""
        info = self.agent_info
        return (info.title or info.name) if info is not None else self.name

    async def initialize(
        self,
        capabilities: m.ClientCapabilities | None = None,
        *,
        timeout: float | None = START_TIMEOUT,
    ) -> m.InitializeResponse:
        """`initialize` with protocol version 1, our capabilities and clientInfo.

        An agent that has not answered within ``timeout`` seconds (None: wait forever)
        is reported as not started, with its last stderr lines.
        """
        request: m.InitializeRequest | dict[str, Any]
        if capabilities is None:
            # Ours: its wire form as it is (the same message the model would write).
            request = {
                "protocolVersion": PROTOCOL_VERSION,
                "clientCapabilities": copy.deepcopy(CLIENT_CAPABILITIES),
                "clientInfo": dict(CLIENT_INFO),
            }
            self._advertised = None
        else:
            request = m.InitializeRequest(
                protocol_version=PROTOCOL_VERSION,
                client_capabilities=capabilities,
                client_info=m.Implementation(**CLIENT_INFO),
            )
            self._advertised = capabilities
        with anyio.move_on_after(timeout) as waiting:
            result = await self.peer.request("initialize", request, meanwhile=prepare_first_turn)
        if waiting.cancelled_caught:
            raise AgentStartError(self._no_answer("initialize", timeout))
        if self.process is not None:
            self.process.starting = False
        response = m.InitializeResponse.parse(result if isinstance(result, dict) else {})
        # spec: the agent answers our version if it supports it, else its latest; a
        # client that cannot speak the answer SHOULD close the connection and say so.
        if response.protocol_version != PROTOCOL_VERSION:
            await self.peer.aclose()
            raise ProtocolVersionMismatch(
                f"{self.agent_name} speaks ACP protocol version {response.protocol_version}; "
                f"acp_notebook speaks version {PROTOCOL_VERSION}."
            )
        self.initialize_response = response
        return response

    async def authenticate(self, method_id: str, *, timeout: float | None = None) -> None:
        """`authenticate` with one of the methods the agent advertised, of any ``type``
        but ``terminal`` (that one is run by the user, not through `authenticate`);
        :class:`HandshakeTimeout` when not answered within ``timeout`` seconds (None: no
        bound, as a login may wait for a person in a browser)."""
        offered = self.auth_method_infos
        method = next((info for info in offered if info.id == method_id), None)
        if method is None:
            ids = ", ".join(f"`{info.id}`" for info in offered) or "none"
            raise RpcError(
                INVALID_PARAMS,
                f"{self.agent_name} did not offer the auth method `{method_id}` (offered: {ids}).",
            )
        if method.type == "terminal":
            raise UnsupportedByAgent(
                f"terminal auth method `{method_id}`", "auth.terminal (client side)", "acp_notebook"
            )
        request = m.AuthenticateRequest(method_id=method_id)
        await self.answer_within("authenticate", request, timeout)

    async def logout(self) -> None:
        if self.agent_capabilities.auth.logout is None:
            raise UnsupportedByAgent("logout", "agentCapabilities.auth.logout", self.agent_name)
        await self.peer.request("logout", m.LogoutRequest())

    async def answer_within(self, method: str, request: Any, timeout: float | None) -> Any:
        """The answer to a handshake request within ``timeout`` seconds (None: no bound),
        else :class:`HandshakeTimeout`: an agent that never answers must not hang a cell or
        the command line forever."""
        with anyio.move_on_after(timeout):
            return await self.peer.request(method, request)
        raise HandshakeTimeout(self._no_answer(method, timeout))

    def _no_answer(self, method: str, timeout: float | None) -> str:
        """One sentence: which request got no answer, the agent's last words on stderr,
        and what the user can do."""
        tail = [line for line in (self.process.stderr_tail(3) if self.process else []) if line]
        said = f" (its last stderr lines: {' | '.join(tail)})" if tail else ""
        return (
            f"{self.agent_name} did not answer `{method}` within {timeout or 0:g} s{said}; "
            "check that it is an ACP agent, or allow it more time with a longer timeout."
        )

    def auth_error(self, exc: RpcError) -> RpcError:
        """``exc`` as :class:`AuthRequired` when it asks for a login (with the methods
        advertised at `initialize`, or those its ``data`` names), else unchanged."""
        if isinstance(exc, AuthRequired) or not looks_like_auth(exc):
            return exc
        methods = self.auth_method_infos
        data_methods = exc.data.get("authMethods") if isinstance(exc.data, dict) else None
        if not methods and isinstance(data_methods, list):
            methods = [
                auth_method_info(m.parse(m.AuthMethod, item))
                for item in data_methods
                if isinstance(item, dict)
            ]
        return AuthRequired(exc.code, exc.message, exc.data, methods)
