"""A connection to one agent: the handshake, sessions, and routing of the agent's
requests to the session they name.

    async with connect([sys.executable, "-m", "acp_notebook.agents.demo"]) as conn:
        session = await conn.new_session(os.getcwd(), policy="allow")
        turn = await session.prompt("/run echo hi")
        print(turn.bundle()["text/markdown"])

Every gated method checks the agent's capabilities first and raises
:class:`UnsupportedByAgent` instead of sending something the agent never offered
(spec: treat omitted capabilities as unsupported).

The agent's requests are read once and served by the session they name — or, for each
:class:`~acp_notebook.client.handlers.AgentRequests` method it defines, by the
``handlers`` object the connection was given (:mod:`~acp_notebook.client.routing`).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypedDict, cast

import anyio
import anyio.abc

from .._version import __version__
from ..protocol import models as m
from ..protocol.errors import INVALID_PARAMS, ConnectionClosed, RpcError
from ..protocol.jsonrpc import Observer, Peer
from ..protocol.modelbase import AcpModel
from ..protocol.process import AgentProcess, AgentStartError, open_agent_process
from ..protocol.tasks import background_tasks
from .auth import AuthMethodInfo, auth_method_info
from .elicitation import ElicitationBroker
from .errors import (
    AuthRequired,
    HandshakeTimeout,
    ProtocolVersionMismatch,
    UnsupportedByAgent,
    looks_like_auth,
)
from .handlers import HANDLER_NAMES
from .permissions import Policy
from .routing import Router
from .session import DEFAULT_CANCEL_GRACE, Session

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = [
    "CLIENT_INFO",
    "HANDSHAKE_TIMEOUT",
    "PROTOCOL_VERSION",
    "START_TIMEOUT",
    "ClientConnection",
    "SessionOptions",
    "client_capabilities",
    "connect",
]

PROTOCOL_VERSION = 1
#: How long an agent may take to answer `initialize`: long enough for ``npx``/``uvx``
#: to download a large agent the first time (their progress is on stderr meanwhile).
START_TIMEOUT = 180.0
#: Seconds opening a session (`session/new|load|resume`) may take by default: an agent
#: that does not answer by then is stuck.
HANDSHAKE_TIMEOUT = 120.0
CLIENT_INFO = {"name": "acp-notebook", "title": "acp_notebook", "version": __version__}

#: The request and response models of the three ways to open a session.
_OPENERS: dict[str, tuple[type[AcpModel], type[AcpModel]]] = {
    "session/new": (m.NewSessionRequest, m.NewSessionResponse),
    "session/load": (m.LoadSessionRequest, m.LoadSessionResponse),
    "session/resume": (m.ResumeSessionRequest, m.ResumeSessionResponse),
}


def client_capabilities() -> m.ClientCapabilities:
    """What we implement, and only that (spec: advertise honestly)."""
    return m.ClientCapabilities(
        fs=m.FileSystemCapabilities(read_text_file=True, write_text_file=True),
        terminal=True,
        # Notices and compactions are shown live and saved (client/transcript.py, ui/notices.py).
        session=m.ClientSessionCapabilities(
            config_options=m.SessionConfigOptionsCapabilities(
                boolean=m.BooleanConfigOptionCapabilities()
            ),
            notices=m.NoticeCapabilities(),
            compaction=m.CompactionCapabilities(),
        ),
        # Both elicitation modes work end to end (client/elicitation/, ui/elicitation.py).
        elicitation=m.ElicitationCapabilities(
            form=m.ElicitationFormCapabilities(), url=m.ElicitationUrlCapabilities()
        ),
    )


class SessionOptions(TypedDict, total=False):
    """How :meth:`ClientConnection.new_session` (and load, resume) set a session up."""

    #: More directories the session may use (sent only when the agent advertises them;
    #: roots for files and terminals either way).
    additional_directories: Sequence[str]
    #: MCP servers for the agent, as models or in their wire shape.
    mcp_servers: Sequence[m.McpServer | dict[str, Any]]
    #: Who answers permission requests no rule decides: ``ask`` (a UI), ``allow``, ``deny``.
    policy: Policy
    #: Whether a person can answer (buttons); without one, ``ask`` rejects.
    interactive: bool
    #: Environment variables for the session's terminals, over the client's own.
    env: Mapping[str, str] | None
    #: The notebook open in Jupyter that the session works for: the agent never writes
    #: it behind the browser's back (it edits cells through the notebook tools).
    notebook_path: str | None


def _checked_handlers(handlers: object | None) -> object | None:
    if handlers is not None and not any(
        callable(getattr(handlers, n, None)) for n in HANDLER_NAMES
    ):
        raise TypeError(
            f"The handlers object {handlers!r} defines none of the agent request methods "
            f"({', '.join(HANDLER_NAMES)})."
        )
    return handlers


class ClientConnection:
    """The client side of one agent connection.

    ``handlers`` is any object defining some of the :class:`AgentRequests` methods: each
    one it defines serves that request for every session, instead of the session's own.
    """

    def __init__(
        self,
        peer: Peer,
        *,
        process: AgentProcess | None = None,
        name: str = "agent",
        task_group: anyio.abc.TaskGroup,
        cancel_grace: float = DEFAULT_CANCEL_GRACE,
        handlers: object | None = None,
    ) -> None:
        self.peer = peer
        self.process = process
        self.name = name
        self.cancel_grace = cancel_grace
        #: Seconds ``initialize`` and ``session/new|load|resume`` may take.
        self.handshake_timeout = HANDSHAKE_TIMEOUT
        self.handlers = _checked_handlers(handlers)
        self.sessions: dict[str, Session] = {}
        self.initialize_response: m.InitializeResponse | None = None
        #: What `initialize` advertised (before it is sent: what it would advertise);
        #: elicitation modes it did not offer are refused.
        self.advertised = client_capabilities()
        #: Who answers request-scoped elicitations (outside any session); None: declined.
        self.elicitations: ElicitationBroker | None = None
        self._task_group = task_group
        self.router = Router(self)

    # ------------------------------------------------------------------ construction

    @classmethod
    @contextlib.asynccontextmanager
    async def spawn(
        cls,
        command: str | Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        name: str | None = None,
        observers: Sequence[Observer] = (),
        on_stderr: Callable[[str], None] | None = None,
        cancel_grace: float = DEFAULT_CANCEL_GRACE,
        handlers: object | None = None,
    ) -> AsyncIterator[ClientConnection]:
        """Start the agent subprocess and connect to it; on exit every session is
        cleaned up and the agent shut down with all its children."""
        async with open_agent_process(
            command, env=env, cwd=cwd, name=name, on_stderr=on_stderr
        ) as process:
            peer = Peer(
                process.stdout, process.stdin, name=process.name, close_reason=process.describe_exit
            )
            for observer in observers:
                peer.add_observer(observer)
            async with cls.over(
                peer,
                process=process,
                name=process.name,
                cancel_grace=cancel_grace,
                handlers=handlers,
            ) as conn:
                yield conn

    @classmethod
    @contextlib.asynccontextmanager
    async def over(
        cls,
        peer: Peer,
        *,
        process: AgentProcess | None = None,
        name: str = "agent",
        cancel_grace: float = DEFAULT_CANCEL_GRACE,
        handlers: object | None = None,
    ) -> AsyncIterator[ClientConnection]:
        """Connect over an existing peer (in-memory pairs, replays)."""
        async with background_tasks() as task_group:
            conn = cls(
                peer,
                process=process,
                name=name,
                task_group=task_group,
                cancel_grace=cancel_grace,
                handlers=handlers,
            )
            task_group.start_soon(peer.run)
            try:
                yield conn
            finally:
                await conn.aclose()

    def start_soon(self, func: Callable[..., Coroutine[Any, Any, Any]], *args: Any) -> None:
        """Run a task for as long as the connection lives."""
        self._task_group.start_soon(func, *args)

    # ------------------------------------------------------------------ handshake

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
        request = m.InitializeRequest(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=capabilities or client_capabilities(),
            client_info=m.Implementation(**CLIENT_INFO),
        )
        self.advertised = request.client_capabilities
        with anyio.move_on_after(timeout) as waiting:
            result = await self.peer.request("initialize", request)
        if waiting.cancelled_caught:
            raise AgentStartError(self._no_answer(timeout))
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

    def _no_answer(self, timeout: float | None) -> str:
        sentence = f"{self.agent_name} did not answer `initialize` within {timeout or 0:g} s"
        tail = [line for line in (self.process.stderr_tail(3) if self.process else []) if line]
        return sentence + (
            "; its last stderr lines: " + " | ".join(tail) + "."
            if tail
            else " and wrote nothing on stderr."
        )

    async def authenticate(self, method_id: str) -> None:
        """`authenticate` with one of the methods the agent advertised, of any ``type``
        but ``terminal`` (that one is run by the user, not through `authenticate`)."""
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
        await self.peer.request("authenticate", m.AuthenticateRequest(method_id=method_id))

    async def logout(self) -> None:
        if self.agent_capabilities.auth.logout is None:
            raise UnsupportedByAgent("logout", "agentCapabilities.auth.logout", self.agent_name)
        await self.peer.request("logout", m.LogoutRequest())

    # ------------------------------------------------------------------ sessions

    async def new_session(
        self, cwd: str | os.PathLike[str], **options: Unpack[SessionOptions]
    ) -> Session:
        """`session/new` in ``cwd`` (made absolute; spec: cwd MUST be absolute)."""
        return await self._open_session("session/new", None, cwd, **options)

    async def load_session(
        self, session_id: str, cwd: str | os.PathLike[str], **options: Unpack[SessionOptions]
    ) -> Session:
        """`session/load`: the agent replays the history as updates before answering."""
        if not self.agent_capabilities.load_session:
            raise UnsupportedByAgent(
                "session/load", "agentCapabilities.loadSession", self.agent_name
            )
        return await self._open_session("session/load", session_id, cwd, **options)

    async def resume_session(
        self, session_id: str, cwd: str | os.PathLike[str], **options: Unpack[SessionOptions]
    ) -> Session:
        """`session/resume`: continue a session without replaying its history."""
        if self._session_caps().resume is None:
            raise UnsupportedByAgent(
                "session/resume", "sessionCapabilities.resume", self.agent_name
            )
        return await self._open_session("session/resume", session_id, cwd, **options)

    async def _open_session(
        self,
        method: str,
        session_id: str | None,
        cwd: str | os.PathLike[str],
        *,
        additional_directories: Sequence[str] = (),
        mcp_servers: Sequence[m.McpServer | dict[str, Any]] = (),
        policy: Policy = "ask",
        interactive: bool = False,
        env: Mapping[str, str] | None = None,
        notebook_path: str | None = None,
    ) -> Session:
        """Send ``method`` (new, load or resume) and set up the session it opens."""
        cwd = os.path.abspath(cwd)
        directories = [os.path.abspath(d) for d in additional_directories]
        request_type, response_type = _OPENERS[method]
        request = request_type.model_validate(
            {
                "cwd": cwd,
                "mcpServers": self._mcp_servers(mcp_servers),
                # Sent only when advertised; they are roots for fs and terminals either way.
                "additionalDirectories": directories
                if directories and self._session_caps().additional_directories is not None
                else None,
                **({"sessionId": session_id} if session_id is not None else {}),
            }
        )

        session = Session(
            self,
            session_id or "",  # a new session's id comes with the answer
            cwd=cwd,
            additional_directories=directories,
            policy=policy,
            interactive=interactive,
            env=dict(env) if env else None,
            notebook_path=os.path.abspath(notebook_path) if notebook_path else None,
        )
        # The connection's task group runs the terminals' helper tasks: it outlives every
        # session and is exited in the task that entered it.
        session.terminals.attach(self._task_group)
        if method == "session/load":
            # Registered before the request: the replayed history arrives before the answer.
            self.router.register(session)
        try:
            result = await self._handshake(method, request)
        except (RpcError, HandshakeTimeout) as exc:
            if self.sessions.get(session.session_id) is session:
                del self.sessions[session.session_id]
            await session._shutdown()
            if isinstance(exc, RpcError):
                raise self.auth_error(exc) from None
            raise
        response = cast(
            "m.NewSessionResponse | m.LoadSessionResponse | m.ResumeSessionResponse",
            response_type.parse(result if isinstance(result, dict) else {}),
        )
        if isinstance(response, m.NewSessionResponse):
            session.session_id = response.session_id
        session.transcript.set_modes(response.modes)
        session.transcript.set_config_options(response.config_options)
        return session if method == "session/load" else self.router.register(session)

    async def _handshake(self, method: str, request: Any) -> Any:
        """A request opening a session: its answer within :attr:`handshake_timeout`
        seconds, else :class:`HandshakeTimeout` (an agent that never answers must not hang
        a cell or the command line forever)."""
        with anyio.move_on_after(self.handshake_timeout):
            return await self.peer.request(method, request)
        raise HandshakeTimeout(
            f"{self.agent_name} did not answer `{method}` within {self.handshake_timeout:g} s; "
            "check that it is an ACP agent and see its stderr for why it is stuck."
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

    def _session_caps(self) -> m.SessionCapabilities:
        return self.agent_capabilities.session_capabilities

    async def list_sessions(
        self, *, cwd: str | None = None, cursor: str | None = None
    ) -> m.ListSessionsResponse:
        """One page of `session/list` (``next_cursor`` None = last page)."""
        if self._session_caps().list is None:
            raise UnsupportedByAgent("session/list", "sessionCapabilities.list", self.agent_name)
        request = m.ListSessionsRequest(cwd=os.path.abspath(cwd) if cwd else None, cursor=cursor)
        result = await self.peer.request("session/list", request)
        return m.ListSessionsResponse.parse(result if isinstance(result, dict) else {})

    async def close_session(self, session_id: str) -> None:
        """`session/close` (the agent cancels in-flight work), then local cleanup."""
        if self._session_caps().close is None:
            raise UnsupportedByAgent("session/close", "sessionCapabilities.close", self.agent_name)
        await self.peer.request("session/close", m.CloseSessionRequest(session_id=session_id))
        await self._forget(session_id)

    async def delete_session(self, session_id: str) -> None:
        if self._session_caps().delete is None:
            raise UnsupportedByAgent(
                "session/delete", "sessionCapabilities.delete", self.agent_name
            )
        await self.peer.request("session/delete", m.DeleteSessionRequest(session_id=session_id))
        await self._forget(session_id)

    async def _forget(self, session_id: str) -> None:
        session = self.sessions.pop(session_id, None)
        if session is not None:
            await session._shutdown()

    def _mcp_servers(self, servers: Sequence[m.McpServer | dict[str, Any]]) -> list[m.McpServer]:
        parsed = [m.parse(m.McpServer, s) if isinstance(s, dict) else s for s in servers]
        caps = self.agent_capabilities.mcp_capabilities
        for server in parsed:
            # spec: http/sse servers only when the agent advertises them.
            if isinstance(server, m.McpServerHttp) and not caps.http:
                raise UnsupportedByAgent(
                    f"HTTP MCP server `{server.name}`", "mcpCapabilities.http", self.agent_name
                )
            if isinstance(server, m.McpServerSse) and not caps.sse:
                raise UnsupportedByAgent(
                    f"SSE MCP server `{server.name}`", "mcpCapabilities.sse", self.agent_name
                )
        return parsed

    # ------------------------------------------------------------------ closing

    async def aclose(self) -> None:
        """Clean up every session locally (terminals killed) and close the agent's stdin."""
        with anyio.CancelScope(shield=True):
            for session in list(self.sessions.values()):
                await session._shutdown()
            await self.peer.aclose()

    @property
    def closed(self) -> bool:
        return self.peer.closed

    def raise_if_closed(self) -> None:
        if self.peer.closed:
            raise ConnectionClosed(self.peer.closed_message or "The agent connection is closed.")


@contextlib.asynccontextmanager
async def connect(
    command: str | Sequence[str],
    *,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    name: str | None = None,
    handlers: object | None = None,
    observers: Sequence[Observer] = (),
    on_stderr: Callable[[str], None] | None = None,
    capabilities: m.ClientCapabilities | None = None,
    cancel_grace: float = DEFAULT_CANCEL_GRACE,
) -> AsyncIterator[ClientConnection]:
    """Start an agent and `initialize` it: ``async with connect(command) as conn``.

    ``command`` is the agent's command line (a string is split like a shell would), run in
    ``cwd`` with ``env`` over this process's environment. ``handlers`` defines any of the
    :class:`~acp_notebook.client.handlers.AgentRequests` methods to serve those requests
    itself (the sessions serve the rest); ``observers`` see every JSON-RPC message;
    ``capabilities`` replace what the client advertises. On exit every session is cleaned
    up and the agent is shut down with all its children.
    """
    async with ClientConnection.spawn(
        command,
        env=env,
        cwd=cwd,
        name=name,
        observers=observers,
        on_stderr=on_stderr,
        cancel_grace=cancel_grace,
        handlers=handlers,
    ) as conn:
        await conn.initialize(capabilities)
        yield conn
