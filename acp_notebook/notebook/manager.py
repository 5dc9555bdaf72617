"""The notebook's agents: one agent loop per kernel, one runtime per agent, and the
code that runs one turn into a cell — live with widgets, or headless.

Threads: the functions named ``*_on_loop`` run on the agent loop thread; everything
else runs on the kernel's main thread (the magics, the Python API).
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import logging
import os
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..agents.presets import AgentNotFound, LaunchSpec, resolve_agent
from ..client.errors import AcpClientError, AuthRequired, TurnTimeout
from ..client.mcp import normalise
from ..client.permissions import Policy
from ..client.rules import PermissionRules
from ..client.session import PromptTurn, Session, prompt_blocks
from ..protocol.errors import ConnectionClosed, RpcError
from ..protocol.jsonrpc import TraceEvent
from ..protocol.models import AuthMethodAgent
from .context import inline_resources
from .inspector import MessageTable, pair_responses
from .loop import AgentLoop
from .runtime import AgentFailed, AgentRuntime
from .state import NotebookState

log = logging.getLogger(__name__)

#: How long an interrupted cell waits for the agent to confirm the cancellation.
INTERRUPT_GRACE = 10.0
#: A waiting main thread wakes this often: a SIGINT that the OS delivered to another
#: thread only runs its Python handler when the main thread runs bytecode (measured:
#: without it the kernel interrupt was seen only when the turn ended).
_WAKE_INTERVAL = 0.1
TRACE_LIMIT = 5000


@dataclass
class TurnSettings:
    """Everything one ``%acp`` needs, resolved from options, config and environment."""

    #: Text, or content blocks (the text plus the variables it names, see ``context``).
    prompt: str | list[Any]
    agent: str
    session: str = "default"
    permissions: Policy = "ask"
    timeout: float | None = None
    headless: bool = False
    wait: bool = True
    coalesce: float = 0.075


def error_bundle(message: str) -> dict[str, str]:
    return {"text/markdown": f"**Error:** {message}\n", "text/plain": f"Error: {message}\n"}


class TurnHandle:
    """A ``%acp`` turn seen from the kernel's main thread: wait for it, cancel it.

    ``await handle`` (top-level await) keeps the cell busy while button clicks are
    still processed (ipykernel >= 7.4); ``handle.wait()`` blocks (headless runs).
    A kernel interrupt during either cancels the turn cleanly, then re-raises.
    """

    def __init__(self, manager: NotebookAgents, settings: TurnSettings) -> None:
        self.manager = manager
        self.settings = settings
        self.turn: PromptTurn | None = None
        self.error: str | None = None
        self.future: concurrent.futures.Future[Any] | None = None
        self.display_id = uuid.uuid4().hex
        #: The live cell: the turn view plus a panel for login prompts (interactive only).
        self.widget: Any = None
        self.panel: Any = None
        self.settings_panel: Any = None

    # ------------------------------------------------------------------ reading

    @property
    def done(self) -> bool:
        return self.future is not None and self.future.done()

    @property
    def stop_reason(self) -> str | None:
        return self.turn.stop_reason if self.turn else None

    def bundle(self) -> dict[str, str]:
        if self.turn is not None and self.turn.record is not None:
            return self.turn.bundle()
        return error_bundle(self.error or "The turn did not start.")

    def __repr__(self) -> str:
        state = self.turn.state if self.turn else ("failed" if self.error else "starting")
        return f"<acp turn in session {self.settings.session!r}: {state}>"

    # ------------------------------------------------------------------ control

    def cancel(self) -> None:
        """Cancel the turn (from any thread)."""
        turn = self.turn
        if turn is not None:
            self.manager.loop.submit(turn.cancel)

    def wait(self, timeout: float | None = None) -> TurnHandle:
        """Block until the turn ends; an interrupt cancels it, then re-raises."""
        assert self.future is not None
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            while not self.future.done():
                if deadline is not None and time.monotonic() >= deadline:
                    raise concurrent.futures.TimeoutError
                concurrent.futures.wait([self.future], _WAKE_INTERVAL)
            self.future.result()
        except KeyboardInterrupt:
            self._cancel_and_settle_blocking()
            raise
        except Exception:
            pass  # the error is recorded in self.error and shown in the cell
        return self

    def __await__(self) -> Any:
        return self._wait_async().__await__()

    async def _wait_async(self) -> TurnHandle:
        assert self.future is not None
        waiting = asyncio.wrap_future(self.future)
        try:
            while not waiting.done():
                await asyncio.wait([waiting], timeout=_WAKE_INTERVAL)
            waiting.result()
        except (asyncio.CancelledError, KeyboardInterrupt):
            # The kernel interrupt reaches an awaiting cell as a cancellation.
            self.cancel()
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(
                    asyncio.shield(asyncio.wrap_future(self.future)), INTERRUPT_GRACE
                )
            raise KeyboardInterrupt("the kernel interrupt cancelled the agent's turn") from None
        except Exception:
            pass
        return self

    def _cancel_and_settle_blocking(self) -> None:
        self.cancel()
        assert self.future is not None
        with contextlib.suppress(BaseException):
            self.future.result(INTERRUPT_GRACE)


@dataclass
class MessageLog:
    """The last JSON-RPC messages of every agent, for ``%acp --log``."""

    events: list[tuple[str, TraceEvent]] = field(default_factory=list)

    def observer(self, agent: str) -> Any:
        def record(event: TraceEvent) -> None:
            self.events.append((agent, event))
            if len(self.events) > TRACE_LIMIT:
                del self.events[: len(self.events) - TRACE_LIMIT]

        return record


class NotebookAgents:
    """Per kernel: the agent loop and the agents started from this notebook."""

    def __init__(self, cwd: str | None = None, env: Mapping[str, str] | None = None) -> None:
        self.cwd = os.path.abspath(cwd or os.getcwd())
        self.env = dict(env or {})
        self._loop: AgentLoop | None = None
        self.runtimes: dict[str, AgentRuntime] = {}
        self.handles: list[TurnHandle] = []
        self.log = MessageLog()
        self._atexit_registered = False
        self.state: NotebookState | None = NotebookState(self.cwd)
        #: MCP servers for every agent (global configuration), ACP wire shape.
        self.mcp_servers: list[dict[str, Any]] = []
        #: Permission rules for every session (``AcpMagics.permission_rules``).
        self.permission_rules: PermissionRules | None = None

    # ------------------------------------------------------------------ loop

    @property
    def loop(self) -> AgentLoop:
        if self._loop is None or not self._loop.alive:
            self._loop = AgentLoop()
            if not self._atexit_registered:
                atexit.register(self.shutdown)
                self._atexit_registered = True
        return self._loop

    def runtime(self, agent: str) -> AgentRuntime:
        """The runtime of ``agent`` (a preset name or a command line), created on first use."""
        runtime = self.runtimes.get(agent)
        if runtime is None:
            spec: LaunchSpec = resolve_agent(agent)
            runtime = AgentRuntime(
                spec,
                cwd=self.cwd,
                env=self.env,
                observers=(self.log.observer(agent),),
                start_task=self._start_task,
                mcp_servers=self.all_mcp_servers(),
                rules=self.permission_rules,
            )
            runtime.key = agent
            self.runtimes[agent] = runtime
        return runtime

    def set_permission_rules(self, rules: PermissionRules | None) -> None:
        """Use ``rules`` from now on, in every session: new ones and existing ones (a
        request already waiting keeps the decision it got)."""
        self.permission_rules = rules
        for runtime in list(self.runtimes.values()):
            runtime.rules = rules
            for session in list(runtime.sessions.values()):
                session.permissions.rules = rules

    def all_mcp_servers(self) -> list[dict[str, Any]]:
        """Global servers, then this notebook's (``.acp-notebook.json``), later names win."""
        merged: dict[str, dict[str, Any]] = {}
        sources: list[Any] = [self.mcp_servers]
        if self.state is not None:
            sources.append(self.state.mcp_servers())
        for source in sources:
            for entry in normalise(source) if source else []:
                merged[str(entry.get("name"))] = entry
        return list(merged.values())

    def message_table(self) -> MessageTable:
        """Every JSON-RPC message of this notebook's agents, numbered (the inspector)."""
        return MessageTable(pair_responses(self.log.events), cwd=self.cwd)

    def _start_task(self, func: Any, *args: Any) -> None:
        # Called on the loop thread by a runtime: a task of the loop's root group.
        self.loop.submit(func, *args)

    # ------------------------------------------------------------------ turns

    def start_turn(self, settings: TurnSettings, view: Any = None) -> TurnHandle:
        """Start a turn; with ``view`` (a TurnView) it streams into the widgets and
        replaces them with the transcript at the end (display id ``handle.display_id``)."""
        handle = TurnHandle(self, settings)
        if view is not None:
            import ipywidgets as w

            handle.panel = w.VBox([])
            handle.widget = w.VBox([view.widget, handle.panel], layout=w.Layout(width="100%"))
        self.handles.append(handle)
        handle.future = self.loop.submit(self._turn_on_loop, handle, view)
        return handle

    async def _turn_on_loop(self, handle: TurnHandle, view: Any) -> None:
        settings = handle.settings
        try:
            runtime = self.runtime(settings.agent)
            if view is not None and runtime.status != "ready":
                view.set_status(
                    "Starting agent…" if runtime.status != "failed" else "Restarting agent…"
                )
            session = await self._session_with_login(runtime, handle, view)
            if session is not None:
                blocks = prompt_blocks(settings.prompt)
                if not session.connection.agent_capabilities.prompt_capabilities.embedded_context:
                    blocks = inline_resources(blocks)
                turn = session.submit(blocks, timeout=settings.timeout)
                handle.turn = turn
                if view is not None:
                    view.on_cancel = turn.cancel
                    view.bind(session, turn)
                    self._attach_settings(handle, session)
                await turn.wait()
                if turn.error is not None and turn.record is None:
                    handle.error = turn.error
                if isinstance(turn.exception, TurnTimeout):
                    # The agent ignored session/cancel: stop it, so the next prompt gets a
                    # fresh one instead of an agent still busy with this turn.
                    await runtime.stop()
                self.remember(runtime, settings.session, session)
        except (AgentFailed, AgentNotFound, ConnectionClosed, RpcError, AcpClientError) as exc:
            handle.error = str(exc)
        except Exception as exc:  # the kernel must survive anything an agent does
            log.exception("turn failed")
            handle.error = f"{type(exc).__name__}: {exc}"
        if view is not None:
            if handle.error is not None:
                view.fail(handle.error)
            else:
                view.finish()
            self._replace_live_view(handle, view)

    async def _session_with_login(
        self, runtime: AgentRuntime, handle: TurnHandle, view: Any
    ) -> Session | None:
        """The turn's session; when the agent wants a login and someone can click,
        ask for it in the cell and try again."""
        settings = handle.settings
        while True:
            try:
                return await runtime.session(
                    settings.session, policy=settings.permissions, interactive=view is not None
                )
            except AuthRequired as exc:
                if view is None or handle.panel is None:
                    hint = self._login_hint(exc)
                    handle.error = f"{exc}{hint}"
                    return None
                if not await self._ask_login(runtime, handle, view, exc):
                    handle.error = str(exc)
                    return None

    @staticmethod
    def _login_hint(exc: AuthRequired) -> str:
        ids = [
            getattr(mm, "id", None) for mm in exc.auth_methods if isinstance(mm, AuthMethodAgent)
        ]
        return f" Log in with `%acp --login {ids[0]}`, then run the cell again." if ids else ""

    async def _ask_login(
        self, runtime: AgentRuntime, handle: TurnHandle, view: Any, exc: AuthRequired
    ) -> bool:
        """Show the agent's message and its auth methods; True once logged in (or Retry)."""
        import anyio

        from ..ui.auth import AuthPrompt

        chosen: list[tuple[str | None, dict[str, str]]] = []
        event = anyio.Event()

        def choose(method_id: str | None, env: dict[str, str]) -> None:
            chosen.append((method_id, env))
            event.set()

        prompt = AuthPrompt(
            runtime.name,
            exc.message,
            exc.auth_methods,
            post=self.loop.post,
            choose=choose,
            command_line=runtime.spec.command_line,
        )
        handle.panel.children = (prompt.widget,)
        view.set_status("Waiting for you to log in")
        while True:
            await event.wait()
            event = anyio.Event()
            method_id, env = chosen.pop()
            if method_id == "__cancel__":
                prompt.close("Cancelled.")
                return False
            if method_id is None:
                prompt.close("Retrying…")
                return True
            try:
                if env:
                    # The agent reads its credentials at start: restart it with them
                    # (kept in memory only; never shown, never in a trace).
                    runtime.env.update(env)
                    await runtime.stop()
                view.set_status("Logging in…")
                await runtime.authenticate(method_id)
            except (RpcError, AgentFailed, AcpClientError) as error:
                prompt.status.value = (
                    f"<span style='color: var(--jp-error-color1, #d32f2f)'>{error}</span>"
                )
                view.set_status("Waiting for you to log in")
                continue
            prompt.close(f"Logged in with {method_id}.")
            view.set_status("Starting…")
            return True

    def _attach_settings(self, handle: TurnHandle, session: Session) -> None:
        """The session's mode and config options as controls under the live view
        (collapsed), following agent-side changes; gone with the live view."""
        if handle.panel is None or not (
            session.transcript.modes or session.transcript.config_options
        ):
            return
        import ipywidgets as w

        from ..ui.session_panel import SessionPanel

        panel = SessionPanel(session, submit=self.loop.submit, schedule_later=self.loop.call_later)
        settings = w.Accordion(children=[panel.widget], selected_index=None)
        settings.set_title(0, "Session settings (mode, model, options)")
        handle.panel.children = (*handle.panel.children, settings)
        handle.settings_panel = panel

    def remember(self, runtime: AgentRuntime, name: str, session: Session) -> None:
        """This notebook's last session per agent and name, for `%acp --resume`."""
        if self.state is not None:
            self.state.remember_session(
                runtime.key, name, session.session_id, session.transcript.title
            )

    def _replace_live_view(self, handle: TurnHandle, view: Any) -> None:
        """spec of a saved notebook: the live widget becomes the static transcript
        (Markdown + plain text), so the .ipynb shows the conversation when reopened."""
        from IPython.display import update_display

        from ..ui.segments import close_tree

        if handle.settings_panel is not None:
            handle.settings_panel.close()
        try:
            update_display(handle.bundle(), raw=True, display_id=handle.display_id)
        except Exception:
            log.exception("could not replace the live view")
            return
        view.close()
        if handle.widget is not None:
            close_tree(handle.widget)  # the login and settings panels too

    # ------------------------------------------------------------------ controls

    def sessions(self) -> list[tuple[str, str, Session]]:
        return [
            (agent, name, s)
            for agent, rt in self.runtimes.items()
            for name, s in rt.sessions.items()
        ]

    def running_turns(self) -> list[TurnHandle]:
        return [h for h in self.handles if h.turn is not None and not h.turn.done]

    def cancel(self, session: str | None = None, agent: str | None = None) -> int:
        """Cancel running and queued turns (of one session / agent when given)."""
        count = 0
        for handle in self.handles:
            if handle.turn is None or handle.turn.done:
                continue
            if session is not None and handle.settings.session != session:
                continue
            if agent is not None and handle.settings.agent != agent:
                continue
            handle.cancel()
            count += 1
        return count

    def restart(self, agent: str) -> str:
        runtime = self.runtime(agent)

        async def restart_on_loop() -> str:
            await runtime.stop()
            await runtime.ensure_started()
            return runtime.describe()

        try:
            return self.loop.run(restart_on_loop, timeout=120)
        except (AgentFailed, concurrent.futures.TimeoutError) as exc:
            return str(exc) or f"The agent `{agent}` did not restart within 120 s."

    def stop(self, agent: str | None = None) -> None:
        for name, runtime in list(self.runtimes.items()):
            if agent is None or name == agent:
                self.loop.run(runtime.stop, timeout=30)

    def status_lines(self) -> list[str]:
        lines = [f"Working directory: {self.cwd}"]
        if not self.runtimes:
            lines.append("No agent started yet (the first %acp starts one).")
        for runtime in self.runtimes.values():
            lines.append(runtime.describe())
        for handle in self.running_turns():
            assert handle.turn is not None
            state = handle.turn.state
            lines.append(
                f"turn in session {handle.settings.session!r} of {handle.settings.agent}: {state}"
            )
        return lines

    # ------------------------------------------------------------------ shutdown

    def shutdown(self) -> None:
        """Stop every agent and terminal (kernel shutdown, extension unload)."""
        loop = self._loop
        if loop is None:
            return
        started = time.monotonic()
        loop.stop(timeout=15)
        # Anything the graceful path missed (a hung stop): kill it outright.
        for runtime in self.runtimes.values():
            conn = runtime.connection
            if conn is not None and conn.process is not None:
                conn.process.kill_now()
            for session in runtime.sessions.values():
                session.terminals.kill_now()
        log.debug("agents stopped in %.2f s", time.monotonic() - started)
        self._loop = None
        self.runtimes.clear()
