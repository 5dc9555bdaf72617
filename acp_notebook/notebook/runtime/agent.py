"""One agent process per kernel per agent, started on first use, restartable.

Everything here runs on the agent loop thread.
"""

from __future__ import annotations

import contextlib
import functools
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal

import anyio

from ...agents.evidence import with_finding
from ...client.connection import ClientConnection
from ...client.errors import AcpClientError, HandshakeTimeout
from ...client.handshake import START_TIMEOUT, handshake_limit
from ...client.mcp import choose_for_agent
from ...client.permissions import Policy
from ...client.presets import AgentNotFound, LaunchSpec
from ...client.rules import PermissionRules
from ...client.session import Session
from ...protocol import models as m
from ...protocol.errors import ConnectionClosed, RpcError
from ...protocol.jsonrpc import Observer
from ...protocol.process import AgentProcess, AgentStartError
from ...protocol.sandbox import SandboxChoice
from ...protocol.tree import Stopped
from ..tools.session_tools import SessionTools
from .start import Launch, would_start

if TYPE_CHECKING:
    from .start import EarlyStart

log = logging.getLogger(__name__)

Status = Literal["stopped", "starting", "ready", "failed"]


class AgentFailed(Exception):
    """The agent could not be started or died; the message is one sentence for the user."""


#: Failures a user can act on: shown as their one sentence, never as a traceback.
EXPECTED_FAILURES = (AgentFailed, AgentNotFound, ConnectionClosed, RpcError, AcpClientError)


class AgentRuntime:
    """An agent subprocess, its connection, and the notebook's named sessions on it."""

    def __init__(
        self,
        spec: LaunchSpec,
        *,
        cwd: str,
        env: Mapping[str, str] | None = None,
        observers: tuple[Observer, ...] = (),
        auth_method: str | None = None,
        mcp_servers: Callable[[], list[dict[str, Any]]] = list,
        rules: PermissionRules | None = None,
        start_task: Callable[..., None],
        session_tools: Callable[[str], SessionTools | None] = lambda name: None,
        notebook_path: Callable[[], str | None] = lambda: None,
        sandbox: Callable[[], SandboxChoice] = SandboxChoice,
    ) -> None:
        self.spec = spec
        #: The notebook's sandbox settings, read at each start.
        self.sandbox = sandbox
        #: The name the notebook used for this agent (a preset or a command line).
        self.key = spec.name
        self.cwd = cwd
        #: The agent's own environment on top of the kernel's (credentials a login
        #: prompt collected go here: kept in memory only).
        self.env = dict(env or {})
        self.observers = observers
        #: The start (initialize, authenticate) while it runs, for stop() to cancel.
        self._starting: anyio.CancelScope | None = None
        #: The timeout (``-t``) of the turn that started the agent: it bounds each
        #: handshake request too (see ``handshake_limit``).
        self._turn_timeout: float | None = None
        #: The auth method to use again when the agent restarts.
        self.auth_method = auth_method
        self._start_task = start_task
        #: Where the agent is in its life; why it failed, if it did.
        self.status: Status = "stopped"
        self.error: str | None = None
        self.connection: ClientConnection | None = None
        #: Its agent process, from the moment it runs until the next start (an ended
        #: one says what its end ended: ``process.stopped``).
        self.process: AgentProcess | None = None
        #: The notebook's sessions on this agent, by name (``-s NAME``).
        self.sessions: dict[str, Session] = {}
        self.restarts = 0
        self._ready: anyio.Event | None = None
        self._stop: anyio.Event | None = None
        self._stopped: anyio.Event | None = None
        self.stderr_lines: list[str] = []
        #: Shown each stderr line while the agent starts (``npx`` progress), if set.
        self.progress: Callable[[str], None] | None = None
        #: Why the last turn on it failed (None: it worked), for ``--status``.
        self.last_error: str | None = None
        #: A login prompt for it waits in a cell (``turn/login.py``).
        self.login_waiting = False
        #: Called (agent loop) when its sessions' state may have changed beyond their
        #: transcripts (a login prompt shown or closed).
        self.on_change: Callable[[], None] = lambda: None
        #: Whether it failed by exiting after it had started (not while starting).
        self.exited = False
        #: The MCP servers to offer every new session (ACP wire shape, read when one
        #: opens), and what was actually passed / left out for the last one.
        self.mcp_servers = mcp_servers
        self.mcp_passed: list[str] = []
        self.mcp_skipped: list[str] = []
        self._creating: dict[str, anyio.Lock] = {}
        #: The permission rules of every session of this agent: the notebook's one
        #: object, shared (changed in place, never copied).
        self.rules = rules if rules is not None else PermissionRules()
        #: The open notebook's path, when the kernel knows it: its sessions never write
        #: it as a file (the agent edits cells through the notebook tools instead).
        self.notebook_path = notebook_path
        #: Makes a session's notebook tools (None: not offered), and those of the open
        #: sessions by name, closed with their session.
        self.session_tools = session_tools
        self.tools: dict[str, SessionTools] = {}
        #: Its process, started before this runtime existed (the first ``%acp``), for
        #: its first start to take (``start.py``).
        self.early: EarlyStart | None = None

    @property
    def name(self) -> str:
        return self.spec.display_name

    # ------------------------------------------------------------------ lifecycle

    async def ensure_started(self, timeout: float | None = None) -> ClientConnection:
        """The live connection, starting (or restarting) the agent when needed; a start
        gives each handshake request ``timeout`` seconds (a turn's ``-t``, at least
        ``HANDSHAKE_FLOOR``), or the defaults."""
        if self.status == "ready" and self.connection is not None and not self.connection.closed:
            return self.connection
        if self.status != "starting":
            if self.status in ("ready", "failed"):
                await self.stop()
                self.restarts += 1
            self.status = "starting"
            self.error = None
            self.exited = False
            self.last_error = None
            self.sessions = {}
            self.process = None
            self._ready = anyio.Event()
            self._stop = anyio.Event()
            self._stopped = anyio.Event()
            self._turn_timeout = timeout
            host = functools.partial(self._host, self._ready, self._stop, self._stopped)
            early, self.early = self.early, None
            if early is None or not early.hand_over(host, self._stderr_line, self.launch()):
                self._start_task(host, None)
        assert self._ready is not None
        await self._ready.wait()
        if self.status != "ready" or self.connection is None:
            raise AgentFailed(self.error or f"The agent `{self.name}` did not start.")
        return self.connection

    def launch(self) -> Launch:
        """The process this runtime starts now (its login variables included)."""
        return would_start(self.spec, self.cwd, self.env, self.sandbox())

    def _connection(
        self, process: AgentProcess | None
    ) -> contextlib.AbstractAsyncContextManager[ClientConnection]:
        """Over ``process`` (started early), or over the agent process it starts."""
        if process is not None:
            return ClientConnection.over_process(process, observers=self.observers)
        launch = self.launch()
        return ClientConnection.spawn(
            list(launch.argv),
            env=dict(launch.env),
            cwd=launch.cwd,
            name=launch.name,
            observers=self.observers,
            on_stderr=self._stderr_line,
            confinement=launch.confinement,
        )

    async def _host(
        self,
        ready: anyio.Event,
        stop: anyio.Event,
        stopped: anyio.Event,
        process: AgentProcess | None,
    ) -> None:
        """Owns the connection for its whole life (an async context lives in one task),
        over ``process`` (started early) or the agent process it starts."""
        failure: BaseException | None = None
        try:
            async with self._connection(process) as conn:
                self.process = conn.process
                # `%acp --stop` cancels this too (an agent that never answers `initialize`
                # would otherwise keep --stop waiting): see stop().
                with anyio.CancelScope() as self._starting:
                    if stop.is_set():  # stopped while the process was being started
                        self._starting.cancel()
                    await conn.initialize(
                        timeout=handshake_limit(self._turn_timeout, START_TIMEOUT)
                    )
                    if self.auth_method:
                        await conn.authenticate(
                            self.auth_method, timeout=handshake_limit(self._turn_timeout, None)
                        )
                if stop.is_set():
                    self.status = "stopped"
                    return
                self.connection = conn
                self.status = "ready"
                ready.set()
                async with anyio.create_task_group() as watch:

                    async def until_closed() -> None:
                        await conn.peer.wait_finished()
                        watch.cancel_scope.cancel()

                    async def until_stopped() -> None:
                        await stop.wait()
                        watch.cancel_scope.cancel()

                    watch.start_soon(until_closed)
                    watch.start_soon(until_stopped)
                if conn.closed and not stop.is_set():
                    self.status = "failed"
                    self.exited = True
                    self.error = conn.peer.closed_message or f"The agent `{self.name}` stopped."
        except (AgentStartError, ConnectionClosed, RpcError, AcpClientError) as exc:
            self.status = "failed"
            failure = exc
        except Exception as exc:  # never let an agent problem kill the loop
            log.exception("agent host failed")
            self.status = "failed"
            self.error = f"The agent `{self.name}` failed: {type(exc).__name__}: {exc}"
        finally:
            # Ended before anyone hears of the end (a process started early is shut down
            # by its holder only after this returns): what it ended goes into the error.
            ended = await self.process.shutdown() if self.process is not None else None
            if failure is not None:
                self.error = self._sentence(failure, ended)
            self._starting = None
            if self.status == "ready":
                self.status = "stopped"
            self.connection = None
            self.close_tools()
            ready.set()
            stopped.set()
            del self.stderr_lines[:-200]

    def _stderr_line(self, line: str) -> None:
        self.stderr_lines.append(line)
        if self.status == "starting" and self.progress is not None:
            self.progress(line)

    def _sentence(self, exc: BaseException, ended: Stopped | None) -> str:
        """What the failed start said and, for a preset's known failure, what fixes it."""
        if isinstance(exc, HandshakeTimeout):
            text = exc.sentence(ended)
        elif isinstance(exc, RpcError) and not isinstance(exc, AcpClientError):
            text = f"The agent `{self.name}` answered `initialize` with an error: {exc}"
        else:
            text = str(exc)
        preset = self.spec.preset.id if self.spec.preset else None
        return with_finding(preset, text, self.stderr_lines)

    async def stop(self) -> Stopped:
        """Shut the agent down, whatever it is doing (starting, answering, stuck), its
        sessions' terminals first; what that ended, and what is left of it. Nothing ended
        when its process had ended already (a failed start, a timeout: said then)."""
        ended_before = self.process if self.process and self.process.stopped else None
        if self._stop is not None:
            self._stop.set()
        if self._starting is not None:
            self._starting.cancel()
        if self._stopped is not None:
            await self._stopped.wait()
        if self.status != "failed":
            self.status = "stopped"
        process = self.process
        if process is None:
            return Stopped(self.name, ())
        ended = await process.shutdown()
        if process is ended_before:  # nothing ran: only what may be left of it
            return Stopped(ended.name, (), left=tuple(process.alive()))
        return ended

    # ------------------------------------------------------------------ sessions

    def close_tools(self, name: str | None = None) -> None:
        """Stop the notebook tools of session ``name`` (every session's without one)."""
        for key in [name] if name is not None else list(self.tools):
            tools = self.tools.pop(key, None) if key is not None else None
            if tools is not None:
                tools.close()

    def _mcp_for(
        self, conn: ClientConnection, tools: SessionTools | None = None
    ) -> list[dict[str, Any]]:
        offered = [*self.mcp_servers(), *([tools.spec()] if tools is not None else [])]
        choice = choose_for_agent(offered, conn.agent_capabilities.mcp_capabilities)
        self.mcp_passed = [str(entry.get("name")) for entry in choice.passed]
        self.mcp_skipped = choice.skipped
        return choice.passed

    def _adopt(self, name: str, session: Session, policy: Policy, interactive: bool) -> Session:
        session.permissions.policy = policy
        session.permissions.interactive = interactive
        session.permissions.rules = self.rules
        self.sessions[name] = session
        return session

    async def session(
        self,
        name: str,
        *,
        policy: Policy,
        interactive: bool,
        tools: bool = True,
        timeout: float | None = None,
    ) -> Session:
        """The named session, created on first use (`session/new` in the notebook's cwd,
        offered the notebook tools unless ``tools`` is false); ``timeout`` (a turn's
        ``-t``) bounds each handshake request, at least ``HANDSHAKE_FLOOR``."""
        conn = await self.ensure_started(timeout)
        # One creation per name: two prompts sent before the session exists must share it.
        lock = self._creating.setdefault(name, anyio.Lock())
        async with lock:
            session = self.sessions.get(name)
            if session is None or session.closed:
                session = await self._open(
                    conn, conn.new_session, name, policy, interactive, tools=tools, timeout=timeout
                )
            return self._adopt(name, session, policy, interactive)

    async def load(
        self, session_id: str, name: str, *, policy: Policy, interactive: bool
    ) -> Session:
        """`session/load` into the named session: the agent replays its history first."""
        return await self._reopen("load", session_id, name, policy, interactive)

    async def resume(
        self, session_id: str, name: str, *, policy: Policy, interactive: bool
    ) -> Session:
        """`session/resume` into the named session (no replay)."""
        return await self._reopen("resume", session_id, name, policy, interactive)

    async def _reopen(
        self, how: str, session_id: str, name: str, policy: Policy, interactive: bool
    ) -> Session:
        conn = await self.ensure_started()
        await self._drop(name)
        for other, session in list(self.sessions.items()):
            if session.session_id == session_id:  # one Session object per agent session
                await self._drop(other)
        opener = conn.load_session if how == "load" else conn.resume_session
        reopened = await self._open(
            conn, functools.partial(opener, session_id), name, policy, interactive
        )
        return self._adopt(name, reopened, policy, interactive)

    async def _open(
        self,
        conn: ClientConnection,
        opener: Callable[..., Awaitable[Session]],
        name: str,
        policy: Policy,
        interactive: bool,
        *,
        tools: bool = True,
        timeout: float | None = None,
    ) -> Session:
        """`session/new`, `load` or `resume` (``opener``) in the notebook's directory,
        with the MCP servers it can take: the configured ones and this session's notebook
        tools (``tools/session_tools.py``). Not with ``self.env``: login variables reach only the
        agent process, never the terminals it starts (``printenv`` there would put an API
        key into the saved notebook)."""
        offered = self.session_tools(name) if tools else None
        try:
            session = await opener(
                self.cwd,
                policy=policy,
                interactive=interactive,
                mcp_servers=self._mcp_for(conn, offered),
                notebook_path=self.notebook_path(),
                timeout=handshake_limit(timeout, None),
            )
        except BaseException:
            if offered is not None:
                offered.close()
            raise
        self.close_tools(name)
        if offered is not None:
            offered.session = session
            self.tools[name] = offered
            session.on_cancel.append(_interrupt_run_code(offered))
            context = offered.context
            session.winding_down.append(lambda: context.runner.ended(context.session))
        return session

    async def _drop(self, name: str) -> None:
        self.close_tools(name)
        old = self.sessions.pop(name, None)
        if old is not None:
            await old._shutdown()

    async def close(self, name: str) -> str:
        session = self.sessions.get(name)
        if session is None or self.connection is None:
            return f"There is no session {name!r} to close."
        await self.connection.close_session(session.session_id)
        self.sessions.pop(name, None)
        self.close_tools(name)
        return f"Closed session {name!r} ({session.session_id})."

    async def delete(self, session_id: str) -> str:
        conn = await self.ensure_started()
        await conn.delete_session(session_id)
        for name, session in list(self.sessions.items()):
            if session.session_id == session_id:
                self.sessions.pop(name, None)
                self.close_tools(name)
        return f"Deleted session {session_id}."

    async def list_sessions(self, limit_pages: int = 20) -> list[m.SessionInfo]:
        """Every session the agent lists for this notebook's directory (following pages)."""
        conn = await self.ensure_started()
        found: list[m.SessionInfo] = []
        cursor: str | None = None
        for _ in range(limit_pages):
            page = await conn.list_sessions(cwd=self.cwd, cursor=cursor)
            found.extend(page.sessions)
            cursor = page.next_cursor
            if not cursor:
                break
        return found

    async def authenticate(self, method_id: str) -> None:
        """`authenticate`, remembered so a restarted agent is authenticated again."""
        conn = await self.ensure_started()
        await conn.authenticate(method_id)
        self.auth_method = method_id

    async def logout(self) -> None:
        conn = await self.ensure_started()
        await conn.logout()
        self.auth_method = None
        self.sessions.clear()
        self.close_tools()

    def describe(self) -> str:
        if self.status == "ready" and self.connection is not None:
            info = self.connection.agent_info
            agent = f"{info.title or info.name} {info.version}" if info else self.spec.name
            pid = self.connection.process.pid if self.connection.process else "?"
            running = f"{self.name}: running ({agent}, pid {pid}), sessions: {', '.join(self.sessions) or 'none'}"
            process = self.connection.process
            if process is not None and process.confinement is not None:
                running += f"; {process.confinement.describe(self.cwd)}"
            return running + (
                f"; its last turn failed: {self.last_error}" if self.last_error else ""
            )
        if self.status == "failed" and self.exited:
            return f"{self.name}: exited — {self.error}"
        if self.status == "failed":
            return f"{self.name}: failed to start — {self.error}"
        return f"{self.name}: {self.status}"


def _interrupt_run_code(tools: SessionTools) -> Callable[[str], None]:
    """What a cancelled turn does to the code its session's ``run_code`` runs: interrupt
    it, as a kernel interrupt would, saying why."""
    context = tools.context

    def interrupt(reason: str) -> None:
        why = (
            "the turn's time limit (-t) ran out"
            if reason == "timeout"
            else "the turn was cancelled"
        )
        context.runner.interrupt(context.session, why)

    return interrupt
