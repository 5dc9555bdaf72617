"""The protocol, one step at a time: a connection a learner drives message by message.

    lab = await acp_notebook.lab.connect("demo")      # or: async with Stepper("demo") as lab
    await lab.initialize()
    await lab.new_session()
    await lab.prompt("/plan")                         # updates are shown as they arrive

Every message the learner sends is checked first — its place in the protocol's order (no
prompt before a session) and its shape against the schema — and refused with one sentence
saying what to do (:class:`~.explain.StepError`); nothing is sent then. Every message, both
ways, is kept in :attr:`Stepper.messages` and shown as it goes (in a notebook as a table row,
elsewhere as a line of text). The agent's requests wait for the learner
(``req = await lab.next_request()``; ``req.answer(...)``) unless handed to the normal
handlers with :meth:`Stepper.auto`.

The connection runs in a task of the caller's asyncio loop (a notebook's, with top-level
``await``), so it lives across cells; :meth:`Stepper.close` ends it and the agent with all
its children.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Awaitable, Generator, Mapping, Sequence
from typing import Any, Literal, TypeVar

import anyio
import anyio.abc

from ..client.connection import CLIENT_INFO, PROTOCOL_VERSION, ClientConnection, client_capabilities
from ..client.decision import Turn
from ..client.permissions import Policy
from ..client.presets import LaunchSpec, resolve_agent
from ..client.session import Session
from ..client.timeline import TimelineBuilder
from ..protocol import conformance
from ..protocol import models as m
from ..protocol.jsonrpc import TraceEvent
from .explain import StepError, explain, rule_errors
from .messages import LabMessage, Show, default_show
from .order import order_problem
from .requests import GROUPS, AgentRequest, Desk

__all__ = ["Pending", "Show", "Stepper", "connect"]

T = TypeVar("T")
PromptInput = str | Sequence[Mapping[str, Any]]


def _blocks(prompt: PromptInput) -> list[dict[str, Any]]:
    if isinstance(prompt, str):
        return [{"type": "text", "text": prompt}]
    return [dict(block) for block in prompt]


class Stepper:
    """A hand-driven connection to one agent (see the module's docstring)."""

    def __init__(
        self,
        agent: str | Sequence[str] = "demo",
        *,
        cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        show: Show | bool | Literal["brief"] = True,
        sandbox: bool = False,
    ) -> None:
        self.cwd = os.path.abspath(cwd or os.getcwd())
        if isinstance(agent, str):
            spec = resolve_agent(agent)
        else:
            argv = list(agent)
            spec = LaunchSpec(os.path.basename(argv[0]) if argv else "agent", argv)
        #: How the agent is confined (``sandbox``: as ``acp-notebook run`` does by default,
        #: in :attr:`cwd`); None: not at all, the lab's default.
        self.confinement = spec.confinement(None, [self.cwd]) if sandbox else None
        if self.confinement is not None:
            self._argv = spec.confined_argv(self.confinement)
            self._env = {**spec.confined_env(self.confinement), **(env or {})}
        else:
            self._argv, self._env = spec.argv, {**spec.env, **(env or {})}
        self.name = spec.name
        #: Called with each message as it goes: ``True`` shows them (a notebook table row,
        #: else a line of text), ``"brief"`` without their payload, ``False`` not at all.
        self.show: Show | None = (
            default_show(brief=show == "brief") if show in (True, "brief") else (show or None)  # type: ignore[assignment]
        )
        #: Every message both ways, in order.
        self.messages: list[LabMessage] = []
        self._timeline = TimelineBuilder(LabMessage)
        #: The answer to `initialize` once received (a dict in wire shape).
        self.initialized: dict[str, Any] | None = None
        #: The session the next step is about (the last one opened).
        self.session_id: str | None = None
        #: The last `session/prompt` request (``lab.start_prompt``): ``await lab.turn``.
        self.turn: Pending | None = None
        self.desk = Desk(self._session_for)
        self._conn: ClientConnection | None = None
        self._helpers: anyio.abc.TaskGroup | None = None
        self._owner: asyncio.Task[None] | None = None
        self._closing = asyncio.Event()
        self._arrived = asyncio.Event()
        #: How many messages there were when the learner's last step began (``until``).
        self._mark = 0
        #: How many messages were shown (shown by the step being awaited: see _shown_while).
        self._shown = 0
        self._policy: Policy = "allow"

    # ------------------------------------------------------------------ lifetime

    @classmethod
    async def start(cls, agent: str | Sequence[str] = "demo", **options: Any) -> Stepper:
        """Start ``agent`` (a preset name or a command line) and connect, not initialized."""
        lab = cls(agent, **options)
        await lab.open()
        return lab

    async def open(self) -> None:
        if self._owner is not None:
            raise StepError("This lab is already connected: one connection per lab.")
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._owner = asyncio.ensure_future(self._own(ready))
        await ready

    async def _own(self, ready: asyncio.Future[None]) -> None:
        try:
            async with (
                ClientConnection.spawn(
                    self._argv,
                    env=self._env,
                    cwd=self.cwd,
                    name=self.name,
                    observers=[self._observe],
                    handlers=self.desk,
                    confinement=self.confinement,
                ) as conn,
                anyio.create_task_group() as helpers,
            ):
                self._conn, self._helpers = conn, helpers
                ready.set_result(None)
                await self._closing.wait()
                helpers.cancel_scope.cancel()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc)
            elif not isinstance(exc, (Exception, asyncio.CancelledError)):
                raise
        finally:
            self._conn = None
            self._arrived.set()  # whoever waits in until() learns that it is closed

    async def close(self) -> None:
        """End the connection: the agent and everything it started are stopped."""
        if self.turn is not None and not self.turn.done():
            self.turn.cancel()
        self._closing.set()
        if self._owner is not None:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await self._owner
        self._flush()

    async def __aenter__(self) -> Stepper:
        if self._owner is None:
            await self.open()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    @property
    def connection(self) -> ClientConnection:
        if self._conn is None or self._conn.closed:
            raise StepError(
                "The lab's connection is closed: start another with "
                "`lab = await acp_notebook.lab.connect(...)`."
            )
        return self._conn

    @property
    def process_ids(self) -> list[int]:
        """The agent's process and its children (empty once closed)."""
        conn = self._conn
        return conn.process.members() if conn is not None and conn.process else []

    # ------------------------------------------------------------------ the steps

    async def initialize(
        self, protocol_version: int = PROTOCOL_VERSION, **params: Any
    ) -> dict[str, Any]:
        """`initialize`: our version, capabilities and clientInfo (``params`` override them)."""
        wire = {
            "protocolVersion": protocol_version,
            "clientCapabilities": client_capabilities().to_wire(),
            "clientInfo": dict(CLIENT_INFO),
            **params,
        }
        result = await self.request("initialize", wire)
        self.initialized = result
        conn = self.connection
        conn.initialize_response = m.InitializeResponse.parse(result)
        if conn.process is not None:
            conn.process.starting = False
        return result

    async def authenticate(self, method_id: str) -> dict[str, Any]:
        return await self.request("authenticate", {"methodId": method_id})

    async def new_session(self, cwd: str | None = None, **params: Any) -> dict[str, Any]:
        """`session/new` in ``cwd`` (default: the lab's); the new session becomes current."""
        wire = {"cwd": self.cwd if cwd is None else cwd, "mcpServers": [], **params}
        result = await self.request("session/new", wire)
        self._opened(str(result.get("sessionId")), str(wire["cwd"]))
        return result

    async def load_session(self, session_id: str, cwd: str | None = None) -> dict[str, Any]:
        """`session/load`: the agent replays the history (shown) before it answers."""
        wire = {"sessionId": session_id, "cwd": self.cwd if cwd is None else cwd, "mcpServers": []}
        result = await self.request("session/load", wire)
        self._opened(session_id, str(wire["cwd"]))
        return result

    async def resume_session(self, session_id: str, cwd: str | None = None) -> dict[str, Any]:
        """`session/resume`: the session continues, without a replay."""
        wire = {"sessionId": session_id, "cwd": self.cwd if cwd is None else cwd, "mcpServers": []}
        result = await self.request("session/resume", wire)
        self._opened(session_id, str(wire["cwd"]))
        return result

    async def set_mode(self, mode_id: str) -> dict[str, Any]:
        return await self.request(
            "session/set_mode", {"sessionId": self.session_id, "modeId": mode_id}
        )

    def start_prompt(self, prompt: PromptInput) -> Pending:
        """Send `session/prompt` and return at once; ``await`` the result for its answer. The
        cell is free meanwhile, to take the agent's requests (``await lab.next_request()``)
        or ``await lab.cancel()``."""
        wire = {"sessionId": self.session_id, "prompt": _blocks(prompt)}
        self._begin("session/prompt", wire, request=True)
        self.turn = Pending(self, asyncio.ensure_future(self._send("session/prompt", wire)))
        return self.turn

    async def prompt(self, prompt: PromptInput) -> dict[str, Any]:
        """`session/prompt`, returning its answer (``{"stopReason": …}``). When the agent asks
        something that waits for your answer meanwhile, this stops waiting and says so."""
        turn = self.start_prompt(prompt)
        arrival = asyncio.ensure_future(self.desk.arrived.wait())
        try:
            await self._shown_while(
                asyncio.wait({turn.task, arrival}, return_when=asyncio.FIRST_COMPLETED)
            )
        finally:
            arrival.cancel()
        if turn.done():
            return turn.result()
        waiting = self.desk.pending[0].method if self.desk.pending else "a request"
        raise StepError(
            f"The agent sent {waiting} and waits for your answer (the prompt is still running): "
            "take it with `req = await lab.next_request()`, answer it, then `await lab.turn`."
        )

    async def cancel(self) -> list[AgentRequest]:
        """`session/cancel` for the running prompt; the permission requests still waiting are
        answered ``cancelled`` (spec: the client MUST). Returns those requests."""
        # Taken before session/cancel goes: the agent may withdraw them ($/cancel_request) as
        # soon as it reads it, and they are answered all the same (one answer each goes out:
        # ours, or the -32800 of a withdrawn request).
        waiting = self.desk.permissions_waiting()
        since = len(self.messages)
        await self.notify("session/cancel", {"sessionId": self.session_id})
        for request in waiting:
            if not request.done:
                request.answer(cancelled=True)  # spec: the client MUST answer them cancelled
        for _ in waiting:  # shown with this step: wait until each answer went out
            since = (await self._shown_while(self._until(None, since, sent=True))).number
        return waiting

    async def request(
        self, method: str, params: Mapping[str, Any] | None = None, *, check: bool = True
    ) -> dict[str, Any]:
        """Any request, checked (unless ``check=False``) and sent; its result. An error
        answer raises :class:`~acp_notebook.protocol.errors.RpcError`."""
        wire = dict(params) if params is not None else None
        self._begin(method, wire, request=True, check=check)
        return await self._shown_while(self._send(method, wire))

    def start_request(
        self, method: str, params: Mapping[str, Any] | None = None, *, check: bool = True
    ) -> Pending:
        """:meth:`request`, returning at once: ``await`` the result for the answer, or
        ``lab.cancel_request(it)`` to send ``$/cancel_request``."""
        wire = dict(params) if params is not None else None
        self._begin(method, wire, request=True, check=check)
        return Pending(self, asyncio.ensure_future(self._send(method, wire)))

    @staticmethod
    def cancel_request(pending: Pending) -> None:
        """Stop waiting for ``pending``'s answer: the client sends ``$/cancel_request`` for
        it and the agent answers the request with ``-32800`` (or its result, if it was done)."""
        pending.cancel()

    async def notify(
        self, method: str, params: Mapping[str, Any] | None = None, *, check: bool = True
    ) -> None:
        wire = dict(params) if params is not None else None
        self._begin(method, wire, request=False, check=check)
        await self.connection.peer.notify(method, wire)
        self._flush()

    async def next_request(self) -> AgentRequest:
        """The agent's next request waiting for an answer (waits for one)."""
        self.connection  # noqa: B018 — a closed lab says so instead of waiting forever
        return await self._shown_while(self.desk.next_request())

    async def until(self, what: str, *, since: int | None = None) -> LabMessage:
        """Wait for the agent's next message that is ``what`` — a method (``session/update``,
        ``fs/write_text_file``) or an update kind (``agent_message_chunk``) — received after
        the first ``since`` messages (default: since your last step began); the message."""
        return await self._shown_while(self._until(what, self._mark if since is None else since))

    async def _until(self, what: str | None, seen: int, *, sent: bool = False) -> LabMessage:
        """The first message after the first ``seen`` that is ``what`` (a method or update
        kind) received from the agent — or, with ``sent``, any answer the client sent (a
        result, or the error of a request the agent withdrew with ``$/cancel_request``)."""
        while True:
            for entry in self.messages[seen:]:
                if sent and entry.direction == "send" and entry.kind in ("response", "error"):
                    return entry
                if (
                    not sent
                    and entry.direction == "recv"
                    and what in (entry.method, entry.update_kind)
                ):
                    return entry
            seen = len(self.messages)
            self.connection  # noqa: B018 — a closed lab says so instead of waiting forever
            self._arrived.clear()
            await self._arrived.wait()

    def auto(self, *kinds: str, policy: Policy = "allow") -> None:
        """Hand the agent's requests of ``kinds`` (``permission``, ``fs``, ``terminal``,
        ``elicitation``, or methods; none: all) to the normal handlers; permissions are then
        answered by ``policy`` (``allow`` or ``deny``)."""
        methods: set[str] = set()
        for kind in kinds or tuple(GROUPS):
            if kind in GROUPS:
                methods.update(GROUPS[kind])
            elif any(kind in group for group in GROUPS.values()):
                methods.add(kind)
            else:
                raise StepError(
                    f"{kind!r} is not a kind of agent request: use one of {', '.join(GROUPS)}."
                )
        if policy not in ("allow", "deny"):
            raise StepError(f"policy must be 'allow' or 'deny', not {policy!r}.")
        self._policy = policy
        for session in self._sessions():
            session.permissions.policy = policy
        self.desk.automatic |= methods

    # ------------------------------------------------------------------ inside

    def _begin(
        self, method: str, params: dict[str, Any] | None, *, request: bool, check: bool = True
    ) -> None:
        """A step begins: checked first (unless ``check`` is off); ``until`` waits from here."""
        if check:
            self._check(method, params, request=request)
        self._mark = len(self.messages)

    def _check(self, method: str, params: dict[str, Any] | None, *, request: bool) -> None:
        """Refuse, with one sentence, a step out of order or a message the schema rejects."""
        problem = order_problem(self, method, params)
        if problem is not None:
            raise StepError(problem)
        found = rule_errors(method, params)
        if conformance.validator_available():
            envelope: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
            if request:
                envelope["id"] = 0
            if params is not None:
                envelope["params"] = params
            found += [
                explain(method, error, params)
                for error in conformance.schema_errors(envelope, sender="client")
            ]
        if found:
            raise StepError(" ".join(found) + " Nothing was sent.")

    async def _send(self, method: str, params: dict[str, Any] | None) -> dict[str, Any]:
        result = await self.connection.peer.request(method, params)
        return result if isinstance(result, dict) else {"result": result}

    def _opened(self, session_id: str, cwd: str) -> None:
        """A session the agent opened: current from now on, and served by the normal
        handlers for the requests handed to them."""
        self.session_id = session_id
        conn = self.connection
        if session_id in conn.sessions:
            return
        session = Session(conn, session_id, cwd=os.path.abspath(cwd), policy=self._policy)
        # A prompt sent by hand is the session's turn while it waits for its answer.
        session.permissions.turn = lambda: (
            Turn(0, session.permissions.policy)
            if self.turn is not None and not self.turn.done()
            else None
        )
        if self._helpers is not None:
            session.terminals.attach(self._helpers)
        conn.router.register(session)

    async def _shown_while(self, step: Awaitable[T], *, owned: bool = True) -> T:
        """Await ``step``, showing the messages as they come, from this task: in a notebook
        they land in the cell that awaits (tasks keep the cell they were started from). A
        step the caller does not own (``owned=False``: a prompt in flight) is not cancelled
        when the waiting is."""
        task = asyncio.ensure_future(step)
        try:
            while not task.done():
                self._flush()
                self._arrived.clear()
                arrival = asyncio.ensure_future(self._arrived.wait())
                try:
                    await asyncio.wait({task, arrival}, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    arrival.cancel()
        except asyncio.CancelledError:
            if owned:
                task.cancel()
            raise
        self._flush()
        return task.result()

    def _flush(self) -> None:
        """Show the messages not shown yet."""
        if self.show is None:
            self._shown = len(self.messages)
            return
        while self._shown < len(self.messages):
            self._shown += 1
            self.show(self.messages[self._shown - 1])

    def _sessions(self) -> list[Session]:
        return list(self._conn.sessions.values()) if self._conn is not None else []

    async def _session_for(self, session_id: str) -> Session:
        return await self.connection.router.session_for(session_id)

    def _observe(self, event: TraceEvent) -> None:
        entry = self._timeline.add(self.name, event)
        if entry.paired is not None:  # its request's row, remade knowing its answer
            self.messages[entry.paired - 1] = self._timeline.row(entry.paired)
        self.messages.append(entry)
        self._arrived.set()


class Pending:
    """A request in flight (``start_prompt``, ``start_request``): ``await`` it for its answer
    (the messages meanwhile are shown where it is awaited), or cancel it."""

    def __init__(self, lab: Stepper, task: asyncio.Task[dict[str, Any]]) -> None:
        self.lab = lab
        self.task = task

    def __await__(self) -> Generator[Any, None, dict[str, Any]]:
        return self.lab._shown_while(self.task, owned=False).__await__()

    def __repr__(self) -> str:
        state = "answered" if self.task.done() else "waiting for its answer"
        return f"<Pending request: {state}>"

    def done(self) -> bool:
        return self.task.done()

    def result(self) -> dict[str, Any]:
        return self.task.result()

    def cancel(self) -> bool:
        return self.task.cancel()


async def connect(agent: str | Sequence[str] = "demo", **options: Any) -> Stepper:
    """Start ``agent`` and connect a :class:`Stepper` to it (not initialized yet)."""
    return await Stepper.start(agent, **options)
