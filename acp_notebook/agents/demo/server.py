"""The demo agent's side of one connection: a handler per ACP method.

Sessions live in a :class:`~.store.SessionStore`; each ``session/prompt`` is a
:class:`~.turn.Turn` that :func:`~.scenes.run_prompt` hands to its demonstration.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
import anyio.abc
from pydantic import ValidationError

from ..._version import __version__
from ...client.formatting import first_line
from ...protocol import models as m
from ...protocol.errors import (
    AUTH_REQUIRED,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    RpcError,
)
from ...protocol.jsonrpc import Peer, Reply
from ...protocol.modelbase import AcpModel
from ..interface import serve_agent
from .prompt import prompt_chars
from .scenes import available_commands, run_prompt
from .session import MODELS, MODES, ClientCaps, DemoSession, config_options
from .store import SessionStore, timestamp
from .turn import Turn

if TYPE_CHECKING:
    from ..interface import ConfigOptionRequest

    #: The answers that open a session (the command list follows them).
    Opened = TypeVar("Opened", m.NewSessionResponse, m.LoadSessionResponse, m.ResumeSessionResponse)

__all__ = ["DemoAgent", "DemoOptions", "serve"]

log = logging.getLogger(__name__)

PROTOCOL_VERSION = 1
#: Seconds a prompt waits for its session's command list to go out (see :meth:`DemoAgent.prompt`).
ANNOUNCE_WAIT = 5.0
AGENT_INFO = m.Implementation(
    name="acp-notebook-demo", title="acp_notebook demo agent", version=__version__
)
AUTH_METHOD = m.AuthMethodAgent(
    id="demo-login",
    name="Demo login",
    description="Logs in to the demo agent at once; it needs no credentials.",
)
DEFAULT_PAGE_SIZE = 50
#: How long the shielded clean-up after a turn (kill/release terminals, close tool calls)
#: may take before it is abandoned.
CLEANUP_SECONDS = 5.0
#: When the client closes our input, how long the agent may take to answer what it
#: already received (a piped script: ``printf '...' | python -m acp_notebook.agents.demo``).
DRAIN_SECONDS = 10.0


@dataclass(frozen=True)
class DemoOptions:
    """How the demo agent behaves (see the package docstring for the command line)."""

    require_auth: bool = False
    state_file: Path | None = None
    page_size: int = DEFAULT_PAGE_SIZE


class DemoAgent:
    """The agent side of one connection: sessions, and a handler per ACP method."""

    def __init__(
        self,
        receive: anyio.abc.ByteReceiveStream,
        send: anyio.abc.ByteSendStream,
        options: DemoOptions | None = None,
    ) -> None:
        self.options = options or DemoOptions()
        #: What turns use (:class:`~.turn.TurnHost`): the connection and the client's caps.
        self.peer = Peer(receive, send, name="demo-agent", drain=DRAIN_SECONDS)
        self.caps = ClientCaps()
        self.authenticated = False
        self.store = SessionStore(self.options.state_file)
        serve_agent(self.peer, self)

    async def run(self) -> None:
        """Serve until the client closes the connection (our input ends)."""
        try:
            await self.peer.run()
        finally:
            # Like a process whose stdout closes when it exits: the client sees the end.
            await self.peer.aclose()

    async def change_mode(self, session: DemoSession, mode_id: str) -> None:
        """The agent changes the mode itself (``/mode``): tell the client at once."""
        session.mode = mode_id
        await self._send_mode_updates(session)
        await self.store.save()

    # -- updates -------------------------------------------------------------------------

    async def _update(self, session_id: str, update: AcpModel | dict[str, Any]) -> None:
        wire = update.to_wire() if isinstance(update, AcpModel) else update
        await self.peer.notify("session/update", {"sessionId": session_id, "update": wire})

    async def _send_mode_updates(self, session: DemoSession) -> None:
        await self._update(session.id, m.CurrentModeUpdate(current_mode_id=session.mode))
        await self._send_config_update(session)

    async def _send_config_update(self, session: DemoSession) -> None:
        options = config_options(session, self.caps)
        await self._update(session.id, m.ConfigOptionUpdate(config_options=options))

    def _opened(self, session: DemoSession, result: Opened) -> Reply[Opened]:
        """The answer that opened ``session``, followed by its command list (real agents
        send it right after that answer, before anything of a prompt: see :meth:`prompt`)."""
        announced = session.announced = anyio.Event()

        async def announce() -> None:
            try:
                await self._update(session.id, available_commands())
            finally:
                announced.set()

        return Reply(result, announce)

    # -- sessions ------------------------------------------------------------------------

    def _known(self, session_id: str) -> DemoSession:
        session = self.store.get(session_id)
        if session is None:
            raise _session_error(session_id, f"Unknown session {session_id!r}.")
        return session

    def _active(self, session_id: str) -> DemoSession:
        session = self._known(session_id)
        if not session.active:
            raise _session_error(
                session_id,
                f"Session {session_id!r} is not open in this connection: load or resume it first.",
            )
        return session

    def _require_auth(self) -> None:
        if self.options.require_auth and not self.authenticated:
            # spec: -32000 auth_required; the message is shown to the user verbatim.
            raise RpcError(
                AUTH_REQUIRED,
                "Authentication required: log in with the “Demo login” method "
                "(authenticate with methodId demo-login; it needs no credentials).",
                {"authMethods": [AUTH_METHOD.to_wire()]},
            )

    def _open(
        self,
        session: DemoSession,
        cwd: str,
        directories: Sequence[str] | None,
        mcp_servers: Sequence[Any] | None,
    ) -> None:
        session.cwd = _absolute(cwd, "cwd")
        if directories is not None:
            # spec: the list sent on load/resume is the complete new list.
            session.additional_directories = [
                _absolute(d, "additionalDirectories") for d in directories
            ]
        if mcp_servers is not None:
            session.mcp_servers = [_server_name(server) for server in mcp_servers]
            session.mcp_stdio = {
                server.name: server
                for server in mcp_servers
                if isinstance(server, m.McpServerStdio)
            }
        session.active = True

    async def _stop_turn(self, session: DemoSession) -> None:
        turn = session.turn
        if turn is not None:
            turn.cancel()
            # Answer after the prompt's own answer (stopReason cancelled) went out.
            with anyio.move_on_after(CLEANUP_SECONDS + 1):
                await turn.done.wait()

    # -- handlers: connection ------------------------------------------------------------

    async def initialize(self, request: m.InitializeRequest) -> m.InitializeResponse:
        self.caps = ClientCaps.of(request.client_capabilities)
        if request.protocol_version != PROTOCOL_VERSION:
            # spec: answer with our latest version; the client decides whether to go on.
            log.info("client asked for protocol %s; answering %s", request.protocol_version, 1)
        return m.InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=m.AgentCapabilities(
                load_session=True,
                prompt_capabilities=m.PromptCapabilities(
                    image=True, audio=False, embedded_context=True
                ),
                mcp_capabilities=m.McpCapabilities(http=False, sse=False),
                session_capabilities=m.SessionCapabilities(
                    list=m.SessionListCapabilities(),
                    resume=m.SessionResumeCapabilities(),
                    close=m.SessionCloseCapabilities(),
                    delete=m.SessionDeleteCapabilities(),
                    additional_directories=m.SessionAdditionalDirectoriesCapabilities(),
                ),
                auth=m.AgentAuthCapabilities(logout=m.LogoutCapabilities()),
            ),
            auth_methods=[AUTH_METHOD],
            agent_info=AGENT_INFO,
        )

    async def authenticate(self, request: m.AuthenticateRequest) -> m.AuthenticateResponse:
        if request.method_id != AUTH_METHOD.id:
            raise RpcError(
                INVALID_PARAMS,
                f"Unknown authentication method {request.method_id!r}: this agent offers "
                f"{AUTH_METHOD.id!r}.",
                {"authMethods": [AUTH_METHOD.to_wire()]},
            )
        self.authenticated = True
        return m.AuthenticateResponse()

    async def logout(self, request: m.LogoutRequest) -> m.LogoutResponse:
        self.authenticated = False
        return m.LogoutResponse()

    # -- handlers: sessions --------------------------------------------------------------

    async def new_session(self, request: m.NewSessionRequest) -> Reply[m.NewSessionResponse]:
        self._require_auth()
        session = DemoSession(id=self.store.next_id(), cwd="/")
        # Checked before the session is kept: a bad cwd must not leave a session behind.
        self._open(session, request.cwd, request.additional_directories, request.mcp_servers)
        self.store.add(session)
        self.store.touch(session)
        await self.store.save()
        modes, options = session.modes(), config_options(session, self.caps)
        return self._opened(
            session,
            m.NewSessionResponse(session_id=session.id, modes=modes, config_options=options),
        )

    async def load_session(self, request: m.LoadSessionRequest) -> Reply[m.LoadSessionResponse]:
        self._require_auth()
        session = self._known(request.session_id)
        if session.turn is not None:
            raise RpcError(INVALID_REQUEST, "The session is answering a prompt; cancel it first.")
        self._open(session, request.cwd, request.additional_directories, request.mcp_servers)
        # spec: the whole history is replayed as session/update before the answer.
        if session.title:
            await self._update(
                session.id, m.SessionInfoUpdate(title=session.title, updated_at=session.updated_at)
            )
        for update in session.history:
            await self._update(session.id, update)
        options = config_options(session, self.caps)
        return self._opened(
            session, m.LoadSessionResponse(modes=session.modes(), config_options=options)
        )

    async def resume_session(
        self, request: m.ResumeSessionRequest
    ) -> Reply[m.ResumeSessionResponse]:
        self._require_auth()
        session = self._known(request.session_id)
        self._open(session, request.cwd, request.additional_directories, request.mcp_servers)
        options = config_options(session, self.caps)
        # spec: no replay
        return self._opened(
            session, m.ResumeSessionResponse(modes=session.modes(), config_options=options)
        )

    async def list_sessions(self, request: m.ListSessionsRequest) -> m.ListSessionsResponse:
        page, cursor = self.store.page(request.cwd, request.cursor, self.options.page_size)
        sessions = [
            m.SessionInfo(
                session_id=s.id,
                cwd=s.cwd,
                additional_directories=s.additional_directories or None,
                title=s.title,
                updated_at=s.updated_at or None,
            )
            for s in page
        ]
        if cursor is None:
            return m.ListSessionsResponse(sessions=sessions)
        return m.ListSessionsResponse(sessions=sessions, next_cursor=cursor)

    async def close_session(self, request: m.CloseSessionRequest) -> m.CloseSessionResponse:
        session = self._known(request.session_id)
        await self._stop_turn(session)  # spec: as if session/cancel had been sent
        session.active = False
        return m.CloseSessionResponse()

    async def delete_session(self, request: m.DeleteSessionRequest) -> m.DeleteSessionResponse:
        session = self.store.get(request.session_id)
        if session is not None:  # spec: deleting an unknown session succeeds
            await self._stop_turn(session)
            self.store.remove(session.id)
            await self.store.save()
        return m.DeleteSessionResponse()

    async def set_session_mode(
        self, request: m.SetSessionModeRequest
    ) -> Reply[m.SetSessionModeResponse]:
        session = self._active(request.session_id)
        if request.mode_id not in {mode.id for mode in MODES}:
            raise RpcError(
                INVALID_PARAMS,
                f"Unknown mode {request.mode_id!r}: the modes are ask and code.",
                {"modeId": request.mode_id},
            )
        session.mode = request.mode_id
        await self.store.save()
        # The mode is also a config option, so both updates follow the answer.
        return Reply(m.SetSessionModeResponse(), lambda: self._send_mode_updates(session))

    async def set_config_option(
        self, request: ConfigOptionRequest
    ) -> Reply[m.SetSessionConfigOptionResponse]:
        if isinstance(request, m.UnknownSetSessionConfigOptionRequest):
            raise RpcError(
                INVALID_PARAMS,
                f"Unknown config value type {request.type!r}.",
                {"type": request.type},
            )
        session = self._active(request.session_id)
        config_id, value = request.config_id, request.value
        is_boolean = isinstance(request, m.SetSessionConfigOptionBooleanRequest)
        mode_changed = False
        if config_id == "mode" and not is_boolean and value in {mode.id for mode in MODES}:
            mode_changed = session.mode != value
            session.mode = str(value)
        elif config_id == "model" and not is_boolean and value in {x.value for x in MODELS}:
            session.model = str(value)
        elif config_id == "verbose" and is_boolean and self.caps.boolean_options:
            session.verbose = bool(value)
        else:
            offered = {option.to_wire()["id"] for option in config_options(session, self.caps)}
            problem = (
                "is not one of this session's options"
                if config_id not in offered
                else (f"does not accept {json.dumps(value)}")
            )
            raise RpcError(
                INVALID_PARAMS,
                f"The config option {config_id!r} {problem}.",
                {"configId": config_id, "value": value},
            )
        await self.store.save()

        async def updates() -> None:
            if mode_changed:
                await self._update(session.id, m.CurrentModeUpdate(current_mode_id=session.mode))
            await self._send_config_update(session)

        options = config_options(session, self.caps)
        return Reply(m.SetSessionConfigOptionResponse(config_options=options), updates)

    # -- handlers: prompts ---------------------------------------------------------------

    async def prompt(self, request: m.PromptRequest) -> m.PromptResponse:
        session = self._active(request.session_id)
        if session.announced is not None:
            # A prompt sent as soon as the session opened waits for the command list: the
            # first one makes its models and could lose the race to the prompt's own
            # updates (bounded: an answer never written runs no announcement).
            with anyio.move_on_after(ANNOUNCE_WAIT):
                await session.announced.wait()
        if session.turn is not None:
            # v1 defines no queueing: one prompt at a time per session.
            raise RpcError(
                INVALID_REQUEST,
                "This session is already answering a prompt; cancel it (session/cancel) first.",
            )
        turn = Turn(self, session, request.prompt)
        session.turn = turn
        try:
            session.prompts += 1
            user_message = session.new_user_message_id()
            turn.records.extend(
                m.UserMessageChunk(content=block, message_id=user_message).to_wire()
                for block in request.prompt
            )
            if not session.title:
                session.title = first_line(turn.first_text) or "Untitled demo session"
                update = m.SessionInfoUpdate(title=session.title, updated_at=timestamp())
                await turn.send(update, record=False)
            with turn.scope:
                stop = await _run_scene(turn)
            if turn.scope.cancelled_caught or turn.cancel_requested:
                stop = "cancelled"  # spec: a cancelled turn ends with this, not an error
            await _shielded(turn.finish())
            turn.account(prompt_chars(request.prompt))
            await turn.send(turn.usage_update(), record=False)
            return m.PromptResponse(stop_reason=stop)
        except BaseException:
            await _shielded(turn.finish())
            raise
        finally:
            session.history.extend(turn.compacted())
            self.store.touch(session)
            session.turn = None
            turn.done.set()
            with anyio.CancelScope(shield=True):
                await self.store.save()

    def cancel(self, notification: m.CancelNotification) -> None:
        session = self.store.get(notification.session_id)
        if session is not None and session.turn is not None:
            session.turn.cancel()


async def _run_scene(turn: Turn) -> str:
    """The turn's demonstration; a client answer it could not use becomes the prompt's
    error, phrased for the user."""
    try:
        return await run_prompt(turn)
    except ValidationError as exc:
        raise RpcError(
            INTERNAL_ERROR, f"A client answer did not match the ACP schema: {exc}"
        ) from exc
    except RpcError as exc:
        if exc.code == INTERNAL_ERROR:
            raise  # ours (/error), or already phrased for the user
        # A client error no scene handled: answering with the client's own code
        # would blame the client's request on the prompt.
        raise RpcError(
            INTERNAL_ERROR,
            f"The demo agent could not finish: the client answered with an error: {exc.message}",
            {"clientError": exc.to_wire()},
        ) from exc


async def _shielded(cleanup: Awaitable[None]) -> None:
    # Runs even when the turn was cancelled; a deadline keeps a silent client from
    # holding the turn forever.
    with anyio.CancelScope(shield=True), anyio.move_on_after(CLEANUP_SECONDS):
        await cleanup


def _session_error(session_id: str, message: str) -> RpcError:
    return RpcError(INVALID_PARAMS, message, {"sessionId": session_id})


def _absolute(path: str, what: str) -> str:
    if not os.path.isabs(path):
        # spec: session directories are absolute paths.
        raise RpcError(INVALID_PARAMS, f"{what} must be an absolute path, not {path!r}.")
    return os.path.normpath(path)


def _server_name(server: Any) -> str:
    name = getattr(server, "name", None)
    if name is None and isinstance(getattr(server, "raw", None), dict):
        name = server.raw.get("name")
    return str(name or "unnamed")


async def serve(
    receive: anyio.abc.ByteReceiveStream,
    send: anyio.abc.ByteSendStream,
    options: DemoOptions | None = None,
) -> None:
    """Serve one client over the given byte streams until ``receive`` ends (e.g. a
    client and the demo agent in one process through :func:`~acp_notebook.protocol.memory.memory_pipe`)."""
    await DemoAgent(receive, send, options).run()
