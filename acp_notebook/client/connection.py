"""A connection to one agent: sessions on top of the handshake, and routing of the agent's
requests to the session they name.

    async with connect([sys.executable, "-m", "acp_notebook.agents.demo"]) as conn:
        session = await conn.new_session(os.getcwd(), policy="allow")
        turn = await session.prompt("/run echo hi")
        print(turn.bundle()["text/markdown"])

The handshake (`initialize`, `authenticate`, what each side advertised) is
:class:`~acp_notebook.client.handshake.Handshake`, which the connection extends.

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

from ..protocol import models as m
from ..protocol.errors import ConnectionClosed, RpcError
from ..protocol.jsonrpc import Observer, Peer
from ..protocol.modelbase import AcpModel
from ..protocol.process import AgentProcess, open_agent_process
from ..protocol.sandbox import Confinement
from ..protocol.tasks import background_tasks
from .elicitation import ElicitationBroker
from .errors import HandshakeTimeout, SessionIdInUse, UnsupportedByAgent
from .handlers import HANDLER_NAMES
from .handshake import (
    CLIENT_INFO,
    HANDSHAKE_TIMEOUT,
    PROTOCOL_VERSION,
    START_TIMEOUT,
    Handshake,
    client_capabilities,
)
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

#: The request and response models of the three ways to open a session, by name: a model
#: is made when first looked up (protocol/lazy_names.py), and a turn uses one of the three.
_OPENERS: dict[str, tuple[str, str]] = {
    "session/new": ("NewSessionRequest", "NewSessionResponse"),
    "session/load": ("LoadSessionRequest", "LoadSessionResponse"),
    "session/resume": ("ResumeSessionRequest", "ResumeSessionResponse"),
}


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
    #: Seconds the agent may take to answer the request opening the session (None: the
    #: connection's :attr:`~ClientConnection.handshake_timeout`).
    timeout: float | None


def _checked_handlers(handlers: object | None) -> object | None:
    if handlers is not None and not any(
        callable(getattr(handlers, n, None)) for n in HANDLER_NAMES
    ):
        raise TypeError(
            f"The handlers object {handlers!r} defines none of the agent request methods "
            f"({', '.join(HANDLER_NAMES)})."
        )
    return handlers


class ClientConnection(Handshake):
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
        super().__init__(peer, process=process, name=name)
        self.cancel_grace = cancel_grace
        self.handlers = _checked_handlers(handlers)
        self.sessions: dict[str, Session] = {}
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
        confinement: Confinement | None = None,
    ) -> AsyncIterator[ClientConnection]:
        """Start the agent subprocess and connect to it (confined as ``confinement``
        says, its terminals too); on exit every session is cleaned up and the agent shut
        down with all its children."""
        async with (
            open_agent_process(
                command,
                env=env,
                cwd=cwd,
                name=name,
                on_stderr=on_stderr,
                confinement=confinement,
            ) as process,
            cls.over_process(
                process, observers=observers, cancel_grace=cancel_grace, handlers=handlers
            ) as conn,
        ):
            yield conn

    @classmethod
    @contextlib.asynccontextmanager
    async def over_process(
        cls,
        process: AgentProcess,
        *,
        observers: Sequence[Observer] = (),
        cancel_grace: float = DEFAULT_CANCEL_GRACE,
        handlers: object | None = None,
    ) -> AsyncIterator[ClientConnection]:
        """Connect to an agent subprocess already started (``acp-notebook run`` starts it
        before loading the client, so both load at once)."""
        peer = Peer(
            process.stdout, process.stdin, name=process.name, close_reason=process.describe_exit
        )
        for observer in observers:
            peer.add_observer(observer)
        async with cls.over(
            peer, process=process, name=process.name, cancel_grace=cancel_grace, handlers=handlers
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
        timeout: float | None = None,
    ) -> Session:
        """Send ``method`` (new, load or resume) and set up the session it opens."""
        cwd = os.path.abspath(cwd)
        directories = [os.path.abspath(d) for d in additional_directories]
        request_name, response_name = _OPENERS[method]
        request_type: type[AcpModel] = getattr(m, request_name)
        response_type: type[AcpModel] = getattr(m, response_name)
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
        if session_id is not None:
            # Reopening a session that is open here: the new Session replaces the old one,
            # which is closed first, its terminals killed (never orphaned).
            await self._forget(session_id)
        if method == "session/load":
            # Registered before the request: the replayed history arrives before the answer.
            self.router.register(session)
        try:
            result = await self.answer_within(method, request, timeout or self.handshake_timeout)
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
            if response.session_id in self.sessions:
                # spec: session/new answers the id of the session it created; an id that
                # names an open session would take its updates and orphan its terminals.
                await session._shutdown()
                raise SessionIdInUse(
                    f"{self.agent_name} answered `session/new` with the id "
                    f"`{response.session_id}` of a session already open, so no new session "
                    "was opened; the open one goes on (report this to the agent's authors)."
                )
            session.session_id = response.session_id
        session.transcript.set_modes(response.modes)
        session.transcript.set_config_options(response.config_options)
        return session if method == "session/load" else self.router.register(session)

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
            if self.process is not None:
                # Seen while it runs: an agent may end at once on its stdin's end, and its
                # shutdown reports what ended.
                self.process.alive()
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
