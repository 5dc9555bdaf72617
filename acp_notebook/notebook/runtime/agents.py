"""The notebook's agents: one agent loop per kernel, one runtime per agent, the
configuration they share (MCP servers, permission rules), the turns started from this
notebook, and the message log.

Threads: runtimes, sessions and turns belong to the agent loop thread; the methods
here that read them say so. Everything else runs on the kernel's main thread.
"""

from __future__ import annotations

import atexit
import functools
import logging
import time
import warnings
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from ...client.mcp import normalise
from ...client.rules import PermissionRules
from ...client.secrets import redacting
from ...client.session import PromptTurn, Session
from ...protocol.sandbox import SandboxChoice
from ..inspector import MessageLog, MessageTable, pair_responses
from ..prompt.cells import notebook_path
from ..tools.session_tools import KernelTools, SessionTools
from ..turn.handle import TurnHandle, TurnSettings
from ..turn.run import run_turn
from .agent import AgentRuntime
from .folder_servers import quote
from .loop import AgentLoop
from .notebook_state import NotebookState, StateFileWarning
from .start import EarlyStart, launch_spec, notebook_cwd

if TYPE_CHECKING:
    from ..changes.page import PageChanges
    from ..view.live_cell import LiveCell
    from ..view.plain import PlainView
    from .agent_states import AgentStates

log = logging.getLogger(__name__)


class NotebookAgents:
    """Per kernel: the agent loop and the agents started from this notebook."""

    def __init__(
        self,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        *,
        early: EarlyStart | None = None,
    ) -> None:
        self.cwd = notebook_cwd(cwd)
        self.env = dict(env or {})
        self._loop: AgentLoop | None = None
        #: The first ``%acp``'s agent, started before this was made (on the loop it made):
        #: the runtime of that agent takes it (``start.py``).
        self.early: EarlyStart | None = None
        self._atexit_registered = False
        if early is not None:
            self._adopt_loop(early.loop)
            self.early = early
        self.runtimes: dict[str, AgentRuntime] = {}
        self.handles: list[TurnHandle] = []
        self.log = MessageLog()
        self.state = NotebookState(self.cwd)
        waiting = self.state.mcp_servers() if not self.state.mcp_servers_trusted() else {}
        if waiting:
            warnings.warn(
                f"acp_notebook does not use the MCP servers in {self.state.legacy_path} "
                f"({', '.join(quote(name) for name in waiting)}) until you confirm them with "
                "`%acp --mcp` and `%acp --mcp trust`.",
                StateFileWarning,
                stacklevel=2,
            )
        #: MCP servers for every agent (global configuration), ACP wire shape.
        self.mcp_servers: list[dict[str, Any]] = []
        #: The permission rules of every session (``AcpMagics.permission_rules``): one
        #: object, held by every runtime and session, changed in place (``replace``).
        self.permission_rules = PermissionRules()
        #: How the agents are confined at their next start (``AcpMagics.sandbox``...).
        self.sandbox = SandboxChoice()
        #: The notebook tools of this kernel (None: not in a kernel; the magics set it).
        self.tools: KernelTools | None = None
        self._page_changes: PageChanges | None = None
        self._states: AgentStates | None = None

    # ------------------------------------------------------------------ loop

    @property
    def loop(self) -> AgentLoop:
        if self._loop is None or not self._loop.alive:
            self._adopt_loop(AgentLoop())
        assert self._loop is not None
        return self._loop

    def _adopt_loop(self, loop: AgentLoop) -> None:
        self._loop = loop
        if not self._atexit_registered:
            atexit.register(self.shutdown)
            self._atexit_registered = True

    @property
    def page_changes(self) -> PageChanges:
        """The turns' changes drawn in the page (built by the first turn that changed
        something: it loads the revert and the live-notebook messages)."""
        if self._page_changes is None:
            from ..changes.page import PageChanges

            self._page_changes = PageChanges(lambda: self.loop)
        return self._page_changes

    @property
    def states(self) -> AgentStates:
        """What each session is doing, published to the page (built by the first turn)."""
        if self._states is None:
            from .agent_states import AgentStates, session_states

            self._states = AgentStates(
                lambda: session_states(list(self.runtimes.values()), list(self.handles)),
                lambda: self.loop,
            )
        return self._states

    def runtime(self, agent: str) -> AgentRuntime:
        """The runtime of ``agent`` (a preset name or a command line), created on first
        use (not started); agent loop thread, or before the loop runs anything."""
        runtime = self.runtimes.get(agent)
        if runtime is None:
            early = self.early if self.early is not None and self.early.agent == agent else None
            # The agent started early was resolved for this directory already: the same
            # spec (the demo's state file in it), not a second resolution.
            if early is not None and early.cwd == self.cwd:
                spec = early.spec
            else:
                spec = launch_spec(agent, self.state)
            runtime = AgentRuntime(
                spec,
                cwd=self.cwd,
                env=self.env,
                start_task=self._start_task,
                mcp_servers=self.all_mcp_servers,
                rules=self.permission_rules,
                session_tools=functools.partial(self._session_tools, agent),
                notebook_path=self._notebook_path,
                sandbox=lambda: self.sandbox,
            )
            runtime.key = agent
            runtime.on_change = lambda: self.states.poke()
            if early is not None:  # taken if the runtime would start the same process
                runtime.early, self.early = early, None
            # Redacted before it is kept: MCP env and headers, secret form fields, and the
            # login variables of this agent as they are when each message passes.
            runtime.observers = (redacting(self.log.observer(agent), runtime.env.values),)
            self.runtimes[agent] = runtime
        return runtime

    def _session_tools(self, agent: str, name: str) -> SessionTools | None:
        """A new session's notebook tools, their traffic kept in the log like the agent's."""
        tools = self.tools.for_session(name) if self.tools is not None else None
        runtime = self.runtimes.get(agent)
        if tools is not None and runtime is not None:
            tools.observers = runtime.observers
        return tools

    def _notebook_path(self) -> str | None:
        return notebook_path(self.tools.shell) if self.tools is not None else None

    def _start_task(self, func: Callable[..., Awaitable[object]], *args: object) -> None:
        # Called on the loop thread by a runtime: a task of the loop's root group.
        self.loop.submit(func, *args)

    # ------------------------------------------------------------------ configuration

    def all_mcp_servers(self) -> list[dict[str, Any]]:
        """Global servers, then this notebook's (``.acp-notebook.json``, once confirmed),
        later names win."""
        merged: dict[str, dict[str, Any]] = {}
        folder = self.state.mcp_servers() if self.state.mcp_servers_trusted() else {}
        for source in (self.mcp_servers, folder):
            for entry in normalise(source) if source else []:
                merged[str(entry.get("name"))] = entry
        return list(merged.values())

    def remember(self, runtime: AgentRuntime, name: str, session: Session) -> None:
        """This notebook's last session per agent and name, for `%acp --resume`."""
        self.state.remember_session(runtime.key, name, session.session_id, session.transcript.title)

    def message_table(self) -> MessageTable:
        """Every JSON-RPC message of this notebook's agents, numbered (the inspector)."""
        return MessageTable(
            pair_responses(self.log.events()), cwd=self.cwd, dropped=self.log.dropped
        )

    def slash_commands(self) -> set[str]:
        """The slash commands the agents announced (for Tab completion, main thread: the
        lists read are replaced whole, never changed in place)."""
        return {
            command.name
            for runtime in list(self.runtimes.values())
            for session in list(runtime.sessions.values())
            for command in session.transcript.commands
        }

    # ------------------------------------------------------------------ turns

    def start_turn(
        self, settings: TurnSettings, cell: LiveCell | PlainView | None = None
    ) -> TurnHandle:
        """Start a turn at once; with a ``cell`` it streams into the cell's widgets and
        ends as the static transcript (or into its stdout, as plain text)."""
        if self.early is not None and self.early.agent != settings.agent:
            self.discard_early()
        loop = self.loop
        self.handles = [h for h in self.handles if not h.done]
        runner = self.tools.runner if self.tools is not None else None
        handle = TurnHandle(loop, settings, runner)
        self.handles.append(handle)
        handle.start(loop.submit(run_turn, self, handle, cell))
        if handle.future is not None:  # its end changes the session's state
            handle.future.add_done_callback(lambda _: loop.post(self.states.poke))
        return handle

    def discard_early(self) -> None:
        """Shut down the agent started early (``start.py``) unless a runtime took it."""
        early, self.early = self.early, None
        if early is not None:
            early.discard()

    def running_turns(self) -> list[tuple[TurnHandle, PromptTurn]]:
        """The turns running or queued, with their handles; agent loop thread."""
        return [(h, h.turn) for h in self.handles if h.turn is not None and not h.turn.done]

    # ------------------------------------------------------------------ shutdown

    def shutdown(self) -> None:
        """Stop every agent and terminal (kernel shutdown, extension unload)."""
        loop = self._loop
        if loop is None:
            return
        started = time.monotonic()
        loop.stop(timeout=15)
        # Anything the graceful path missed (a hung stop): kill it outright.
        early, self.early = self.early, None
        if early is not None and early.process is not None:
            early.process.kill_now()
        for runtime in self.runtimes.values():
            if runtime.process is not None:  # ready, or still starting
                runtime.process.kill_now()
            for session in runtime.sessions.values():
                session.terminals.kill_now()
            runtime.close_tools()
        if self.tools is not None:
            self.tools.close()
        log.debug("agents stopped in %.2f s", time.monotonic() - started)
        self._loop = None
        self.runtimes.clear()
