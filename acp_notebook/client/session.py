"""One ACP session: its prompt turns, and the services that answer its agent's requests.

A session is the default :class:`~acp_notebook.client.handlers.AgentRequests`: it serves
every request its agent sends about it. It owns:

* a :class:`~acp_notebook.client.transcript.Transcript` (all its updates, in order);
* a :class:`~acp_notebook.client.fs.FileSystem` and a
  :class:`~acp_notebook.client.terminals.TerminalManager` confined to its roots
  (``cwd`` plus additional directories);
* a :class:`~acp_notebook.client.permissions.PermissionBroker` and an
  :class:`~acp_notebook.client.elicitation.ElicitationBroker`.

Prompt turns run one at a time; later prompts wait in a queue, in order
(v1: never two `session/prompt` pending on one session).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol

import anyio

from ..protocol import models as m
from ..protocol.errors import ConnectionClosed, RpcError
from ..protocol.jsonrpc import Peer
from ..protocol.process import AgentProcess
from ..protocol.sandbox import Confinement
from .checkpoints import Checkpoints
from .decision import Turn
from .elicitation import ElicitationBroker
from .errors import PromptNotSupported, TurnTimeout
from .fs import FileChange, FileSystem
from .guard import Guard
from .permissions import PermissionBroker, Policy
from .render import transcript_bundle
from .sent import PromptInput, prompt_blocks
from .terminals import TerminalManager, TerminalSnapshot
from .transcript import Transcript, TurnRecord

if TYPE_CHECKING:
    from .handlers import ElicitationParams, ElicitationResponse

__all__ = [
    "DEFAULT_CANCEL_GRACE",
    "PromptInput",
    "PromptTurn",
    "Session",
    "SessionHost",
    "TurnState",
    "prompt_blocks",
]

log = logging.getLogger(__name__)

#: Seconds a timed-out turn waits for the agent to answer its ``session/cancel``.
DEFAULT_CANCEL_GRACE = 10.0


TurnState = Literal["queued", "running", "done"]


class PromptTurn:
    """One `session/prompt`: queued, then running, then done with a stop reason or an error."""

    def __init__(
        self, session: Session, blocks: list[m.ContentBlock], *, timeout: float | None
    ) -> None:
        self.session = session
        self.blocks = blocks
        self.timeout = timeout
        #: The permission policy the turn runs under: the session's when it was submitted
        #: (a ``-p`` policy lasts for its turn, not beyond).
        self.policy: Policy = session.permissions.policy
        self.state: TurnState = "queued"
        self.record: TurnRecord | None = None
        self.stop_reason: str | None = None
        self.error: str | None = None
        self.exception: BaseException | None = None
        self.cancel_requested = False
        #: True when ``timeout`` expired (the turn was then cancelled).
        self.timed_out = False
        self.started: float | None = None
        self.ended: float | None = None
        self._done = anyio.Event()
        self._prompt_done = anyio.Event()

    @property
    def done(self) -> bool:
        return self.state == "done"

    @property
    def duration(self) -> float | None:
        if self.started is None:
            return None
        return (self.ended or time.monotonic()) - self.started

    async def wait(self) -> PromptTurn:
        await self._done.wait()
        return self

    async def cancel(self) -> None:
        """Cancel this turn: dropped from the queue if it has not started, else
        `session/cancel` (see :meth:`Session.cancel`)."""
        if self.state == "queued":
            self.cancel_requested = True
            self.stop_reason = "cancelled"
            self._finish()
        elif self.state == "running":
            await self.session.cancel()

    def bundle(self) -> dict[str, str]:
        """The turn as a Markdown + plain-text display bundle (what notebooks save)."""
        if self.record is None:
            text = "Cancelled before it started." if self.cancel_requested else "Queued."
            return {"text/markdown": f"*{text}*\n", "text/plain": text + "\n"}
        return transcript_bundle(self.session.transcript, self.record, self.session.terminal_view)

    def _finish(self) -> None:
        self.state = "done"
        self.ended = time.monotonic()
        self._done.set()


class SessionHost(Protocol):
    """What a session reads of the connection it lives on (``ClientConnection``): the
    peer it sends on, the agent and what it offers, where its turns run."""

    peer: Peer
    process: AgentProcess | None
    cancel_grace: float

    @property
    def agent_capabilities(self) -> m.AgentCapabilities: ...

    @property
    def agent_name(self) -> str: ...

    @property
    def agent_label(self) -> str: ...

    def start_soon(self, func: Callable[..., Coroutine[Any, Any, Any]], *args: Any) -> None: ...

    def auth_error(self, exc: RpcError) -> RpcError: ...


class Session:
    """A session with an agent. Created by ``ClientConnection``, not directly."""

    def __init__(
        self,
        connection: SessionHost,
        session_id: str,
        *,
        cwd: str,
        additional_directories: Sequence[str] = (),
        policy: Policy = "ask",
        interactive: bool = False,
        env: dict[str, str] | None = None,
        notebook_path: str | None = None,
    ) -> None:
        self.connection = connection
        #: The notebook open in Jupyter that this session works for: never written
        #: behind the browser's back (``guard.py``).
        self.notebook_path = notebook_path
        self.session_id = session_id
        self.cwd = cwd
        self.additional_directories = list(additional_directories)
        roots = [cwd, *self.additional_directories]
        self.transcript = Transcript(cwd)
        #: What each turn changed (files written for the agent, cells), to review and revert.
        self.checkpoints = Checkpoints(cwd)
        self.fs = FileSystem(roots, on_change=self._changed)
        process = connection.process
        self.terminals = TerminalManager(
            roots,
            cwd,
            env=env,
            on_output=self._changed,
            confinement=process.confinement if process is not None else None,
        )
        #: Called with the reason ("user", "timeout") when the running turn is cancelled,
        #: to stop what this session runs outside the agent (the notebook's ``run_code``).
        self.on_cancel: list[Callable[[str], None]] = []
        #: Awaited by a cancelled turn before it ends (at most ``cancel_grace`` in all):
        #: the work ``on_cancel`` stopped, until it has shown how it ended.
        self.winding_down: list[Callable[[], Awaitable[None]]] = []
        # AgentRequests (client/handlers.py): files and terminals are served by their
        # managers; the other requests by the methods below.
        # Writes and new commands pass the guard first (write_text_file, create_terminal).
        self.read_text_file = self.fs.read_text_file
        self.terminal_output = self.terminals.output
        self.wait_for_terminal_exit = self.terminals.wait_for_exit
        self.kill_terminal = self.terminals.kill
        self.release_terminal = self.terminals.release
        self.permissions = PermissionBroker(
            policy, interactive=interactive, on_change=self._changed
        )
        self.permissions.turn = self.turn_now
        self.guard = Guard(self)
        confinement = self.confinement
        self.transcript.confined = confinement is not None and confinement.enforced
        # Elicitations are decided by the same UI as permissions (a terminal asker that
        # only knows permissions, as in the CLI, is no UI for forms: declined there).
        self.elicitations = ElicitationBroker(
            interactive=lambda: self.permissions.interactive and self.permissions.asker is None,
            on_change=self._changed,
        )
        self.turns: list[PromptTurn] = []
        self.closed = False
        self._turn_lock = anyio.Lock()
        self._active: PromptTurn | None = None
        self.file_changes: list[FileChange] = self.fs.changes

    # ------------------------------------------------------------------ prompting

    @property
    def roots(self) -> list[str]:
        """The directories the session may use: its cwd, then the additional ones."""
        return [self.cwd, *self.additional_directories]

    @property
    def confinement(self) -> Confinement | None:
        """How the operating system confines the agent and this session's commands (None:
        the agent is not a process this client started)."""
        base = self.terminals.confinement
        return base.with_roots(self.roots) if base is not None else None

    @property
    def sandbox(self) -> str:
        """How the agent runs, for a turn's header and the permission cards of its
        commands and writes ("🔒 confined to `project/` · network on"); empty when the
        agent is not a process this client started."""
        confinement = self.confinement
        return confinement.headline(self.cwd) if confinement is not None else ""

    @property
    def active_turn(self) -> PromptTurn | None:
        return self._active

    def turn_now(self) -> Turn | None:
        """The running turn as the permission decision reads it; None between turns."""
        turn = self._active
        if turn is None or turn.record is None or turn.done:
            return None
        return Turn(turn.record.index, turn.policy)

    @property
    def queued_turns(self) -> list[PromptTurn]:
        return [t for t in self.turns if t.state == "queued"]

    def check_prompt(self, blocks: list[m.ContentBlock]) -> None:
        """spec: prompt content is restricted to the agent's `promptCapabilities`."""
        caps = self.connection.agent_capabilities.prompt_capabilities
        for block in blocks:
            need = (
                ("image", caps.image)
                if isinstance(block, m.ImageContentBlock)
                else ("audio", caps.audio)
                if isinstance(block, m.AudioContentBlock)
                else ("embeddedContext", caps.embedded_context)
                if isinstance(block, m.EmbeddedResourceContentBlock)
                else None
            )
            if need is not None and not need[1]:
                raise PromptNotSupported(
                    f"{self.connection.agent_name} does not accept {need[0]} content in prompts "
                    f"(it did not advertise promptCapabilities.{need[0]})."
                )

    def submit(self, prompt: PromptInput, *, timeout: float | None = None) -> PromptTurn:
        """Queue a prompt and return its turn at once; it runs when the previous turns end."""
        if self.closed:
            raise ConnectionClosed(f"Session {self.session_id} is closed.")
        blocks = prompt_blocks(prompt)
        self.check_prompt(blocks)
        turn = PromptTurn(self, blocks, timeout=timeout)
        self.turns.append(turn)
        self.connection.start_soon(self._run_turn, turn)
        return turn

    async def prompt(self, prompt: PromptInput, *, timeout: float | None = None) -> PromptTurn:
        """Send a prompt and wait for its turn to end (queued behind running turns)."""
        return await self.submit(prompt, timeout=timeout).wait()

    async def _run_turn(self, turn: PromptTurn) -> None:
        async with self._turn_lock:  # anyio locks are FIFO: queued prompts keep their order
            if turn.done:  # cancelled while queued
                return
            self._active = turn
            turn.state = "running"
            turn.started = time.monotonic()
            turn.record = self.transcript.begin_turn(turn.blocks)
            self.checkpoints.begin(turn.record.index)
            try:
                await self._exchange(turn)
                if turn.cancel_requested and turn._prompt_done.is_set():
                    await self._wind_down()
            finally:
                self._active = None
                changes = self.checkpoints.end()
                if changes is not None:
                    self.transcript.add_note(changes.summary())
                ran = self.guard.ran_note(turn.record.index)
                if ran:
                    self.transcript.add_note(ran)
                if turn.stop_reason is None and turn.error is None:
                    # Abandoned mid-turn (the connection or the session closed): a finished
                    # turn must never read "Running…".
                    turn.error = "The turn was abandoned: the connection closed before it ended."
                self.transcript.end_turn(
                    turn.record, stop_reason=turn.stop_reason, error=turn.error
                )
                turn._finish()

    async def _exchange(self, turn: PromptTurn) -> None:
        assert turn.record is not None
        request = m.PromptRequest(session_id=self.session_id, prompt=turn.blocks)
        outcome: dict[str, Any] = {}

        async def call() -> None:
            try:
                outcome["result"] = await self.connection.peer.request("session/prompt", request)
            except (RpcError, ConnectionClosed) as exc:
                outcome["error"] = exc
            finally:
                turn._prompt_done.set()

        async with anyio.create_task_group() as task_group:
            task_group.start_soon(call)
            if turn.timeout is not None:
                with anyio.move_on_after(turn.timeout):
                    await turn._prompt_done.wait()
                if not turn._prompt_done.is_set():
                    turn.timed_out = True
                    turn.record.timed_out_after = turn.timeout
                    await self.cancel(reason="timeout")
                    with anyio.move_on_after(self.connection.cancel_grace):
                        await turn._prompt_done.wait()
                    if not turn._prompt_done.is_set():
                        task_group.cancel_scope.cancel()
                        turn.exception = TurnTimeout(turn.timeout, self.connection.cancel_grace)
                        turn.error = str(turn.exception)
                        return
            await turn._prompt_done.wait()

        error = outcome.get("error")
        if error is None:
            response = m.PromptResponse.parse(outcome.get("result") or {})
            turn.stop_reason = str(response.stop_reason)
            usage = (response.model_extra or {}).get("usage")
            turn.record.usage = usage if isinstance(usage, dict) else None
        elif turn.cancel_requested and isinstance(error, RpcError):
            # spec says the agent answers `cancelled`; some answer an error instead: be lenient.
            turn.stop_reason = "cancelled"
        else:
            if isinstance(error, RpcError):
                error = self.connection.auth_error(error)
            turn.error = str(error)
            turn.exception = error

    async def _wind_down(self) -> None:
        """Wait for :attr:`winding_down`, at most ``cancel_grace`` in all."""
        with anyio.move_on_after(self.connection.cancel_grace):
            for wound_down in list(self.winding_down):
                try:
                    await wound_down()
                except Exception:  # the turn ends all the same
                    log.exception("waiting for the session's own work to stop failed")

    async def cancel(self, *, reason: str = "user") -> bool:
        """Cancel the running turn. False when no turn is running.

        spec: send `session/cancel`; answer every pending permission request
        `cancelled`; mark unfinished tool calls cancelled; keep accepting updates
        until the agent answers the prompt.
        """
        turn = self._active
        if turn is None or turn.done:
            return False
        first = not turn.cancel_requested
        turn.cancel_requested = True
        if turn.record is not None:
            turn.record.cancel_requested = True
        self.permissions.cancel_all(by="cancel" if reason == "user" else reason)
        # spec: pending elicitations are treated like permissions: answered `cancel`.
        self.elicitations.cancel_all(by="cancel" if reason == "user" else reason)
        if turn.record is not None:
            self.transcript.mark_unfinished_cancelled(turn.record.index)
            self.transcript.changed()
        if first:
            for stop in list(self.on_cancel):
                try:
                    stop(reason)
                except Exception:  # one failing stop must not keep the agent from hearing
                    log.exception("stopping the session's own work on cancel failed")
            with contextlib.suppress(ConnectionClosed):
                await self.connection.peer.notify(
                    "session/cancel", m.CancelNotification(session_id=self.session_id)
                )
            # A stop that really stops: the turn's commands die too (they stay readable).
            await self.terminals.kill_all()
        return True

    # ------------------------------------------------------------------ session settings

    async def set_mode(self, mode_id: str) -> None:
        """`session/set_mode` (legacy; prefer config options when the agent has both)."""
        if not self.transcript.modes:
            raise RpcError(
                -32602, f"{self.connection.agent_name} announced no modes for this session."
            )
        await self.connection.peer.request(
            "session/set_mode", m.SetSessionModeRequest(session_id=self.session_id, mode_id=mode_id)
        )
        self.transcript.current_mode_id = mode_id
        self.transcript.changed()

    async def set_config_option(self, config_id: str, value: str | bool) -> None:
        """`session/set_config_option`; the answer is the complete new state."""
        if not any(getattr(o, "id", None) == config_id for o in self.transcript.config_options):
            raise RpcError(
                -32602,
                f"{self.connection.agent_name} has no config option `{config_id}` in this session.",
            )
        if isinstance(value, bool):
            request: Any = m.SetSessionConfigOptionBooleanRequest(
                session_id=self.session_id, config_id=config_id, value=value
            )
        else:
            request = m.SetSessionConfigOptionSelectRequest(
                session_id=self.session_id, config_id=config_id, value=value
            )
        result = await self.connection.peer.request("session/set_config_option", request)
        response = m.SetSessionConfigOptionResponse.parse(result or {})
        self.transcript.set_config_options(response.config_options)

    # ------------------------------------------------------------------ agent requests
    # AgentRequests (client/handlers.py): the connection reads the params and routes here.

    async def request_permission(
        self, request: m.RequestPermissionRequest
    ) -> m.RequestPermissionResponse:
        """Shown in its tool call; answered when a rule, the policy, the user or a cancel decides."""
        # Merged into its tool call, rated against the session's roots, then shown.
        pending = self.permissions.receive(
            request, self.transcript, cwd=self.cwd, roots=self.roots, sandbox=self.sandbox
        )
        if self._active is not None and self._active.cancel_requested:
            # spec: after session/cancel every permission request is answered `cancelled`.
            self.permissions.cancel(pending.key, by="cancel")
        decided = await self.permissions.decide(pending)
        return m.RequestPermissionResponse.parse(decided.outcome())

    async def write_text_file(self, request: m.WriteTextFileRequest) -> m.WriteTextFileResponse:
        """Written when the user's decisions allow it (``guard.py``), confined to the roots."""
        await self.guard.check_write(request.path)
        return await self.fs.write_text_file(request)

    async def create_terminal(self, request: m.CreateTerminalRequest) -> m.CreateTerminalResponse:
        """Started when the user's decisions allow it (``guard.py``), in the roots."""
        await self.guard.check_command(request)
        return await self.terminals.create(request)

    async def create_elicitation(self, request: ElicitationParams) -> ElicitationResponse:
        """Shown in the turn; answered when the user (or the headless rule, or a cancel) decides."""
        pending = self.elicitations.open(request, agent=self.connection.agent_label)
        self.transcript.add_elicitation(pending)
        if self._active is not None and self._active.cancel_requested:
            self.elicitations.cancel(pending.key, by="cancel")  # as permissions after a cancel
        decided = await self.elicitations.decide(pending)
        return decided.reply()

    def complete_elicitation(self, notification: m.CompleteElicitationNotification) -> None:
        """Marks this session's URL request with that id completed (spec: unknown ids ignored)."""
        self.elicitations.complete(notification.elicitation_id)

    def terminal_view(self, terminal_id: str) -> TerminalSnapshot | None:
        try:
            return self.terminals.snapshot(terminal_id)
        except (KeyError, RpcError):
            return None

    # ------------------------------------------------------------------ listeners

    def _changed(self, what: object = None) -> None:
        """A file was written, a terminal printed, a request appeared or was decided:
        views redraw from the transcript's version."""
        if isinstance(what, FileChange):
            self.checkpoints.file_written(what)
        self.transcript.changed()

    def on_change(self, listener: Callable[[Transcript], None]) -> Callable[[], None]:
        return self.transcript.subscribe(listener)

    # ------------------------------------------------------------------ closing

    async def _shutdown(self) -> None:
        """Local cleanup: cancel what runs, kill every terminal (their whole groups)."""
        if self.closed:
            return
        self.closed = True
        self.permissions.cancel_all(by="session closed")
        self.elicitations.cancel_all(by="session closed")
        for turn in self.turns:
            if turn.state == "queued":
                turn.cancel_requested = True
                turn.stop_reason = "cancelled"
                turn._finish()
        await self.terminals.aclose()
