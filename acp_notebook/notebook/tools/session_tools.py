"""The notebook tools in an ACP session: one ``notebook`` MCP server per kernel, the
same ``mcpServers`` entry for every session, each call routed to its session (the agent
that started the relay, its session running a turn); approved like the agent's own tool
calls, shown in the turn where they run.

    kernel = KernelTools(shell, lambda: agents.loop)  # per kernel
    kernel.prepare()                                  # main thread, inside a cell
    tools = kernel.for_session("default")             # before session/new
    mcp_servers.append(tools.spec())                  # offered to the agent
    tools.session = session                           # once session/new answered
    tools.close()                                     # with the session
    kernel.close()                                    # with the kernel's agents

A ``run_code`` call becomes a tool call of its own in the session's transcript (kind
``execute``, the code shown before the buttons) and a permission request in the
session's :class:`~acp_notebook.client.permissions.PermissionBroker`, so permission
rules (``allow notebook run_code``, see ``client/rules.py``), the policy and the
buttons decide it as they decide the agent's requests; headless runs follow the policy.
What the code did is then shown in that call (its output, images and error), in the
live view and in the saved transcript. A tool that reviews its change in place (a cell
edit, ``review_in_place``) gets no card: rules and the policy decide, else ``Review``.
"""

from __future__ import annotations

import base64
import itertools
import logging
import uuid
from collections import defaultdict, deque
from collections.abc import Callable
from typing import TYPE_CHECKING

from ...client.decision import NO_TURN, Question, decide
from ...client.formatting import fence
from ...client.guard import ask_itself
from ...client.notebook_names import NotebookServer
from ...client.session import Session
from ...client.toolcall import ToolCallState
from ...protocol import models as m
from ...protocol.trace_event import Observer
from ...protocol.tree import ancestors
from ..changes.revert import record_cell_change
from ..frontend import frontends
from ..runtime.loop import AgentLoop
from . import (
    Approved,
    CodeResult,
    Decision,
    Denied,
    MainThreadRunner,
    McpServerSpec,
    NotebookToolsServer,
    ToolApproval,
    ToolContext,
    ToolRegistry,
    kernel_tools,
)
from .approval import Review, traced
from .kernel_tools import code_content
from .live_tools import LiveTools
from .registry import CellChangeReport, ToolImage
from .server import SERVER_NAME

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

log = logging.getLogger(__name__)


_numbers = itertools.count(1)


def _who(decided_by: str | None) -> str:
    return "the user" if decided_by in (None, "user") else str(decided_by)


class SessionTools:
    """One session's notebook tools: its context on the kernel's server, and the approval
    and output hooks the server calls (on the agent loop thread)."""

    def __init__(
        self,
        runner: MainThreadRunner,
        shell: InteractiveShell,
        name: str,
        registry: ToolRegistry,
        kernel: KernelTools | None = None,
    ) -> None:
        self._session: Session | None = None
        self.registry = registry
        self._kernel = kernel
        self.context = ToolContext(name, shell, runner, self.approve, self.show, self.report)
        #: Whether its agent has listed or called the tools (an agent may drop the MCP
        #: servers it is given: Gemini CLI does in a folder it does not trust).
        self.heard = False
        #: Tool calls approved and not yet shown, by the code they run (in order).
        self._running: defaultdict[str, deque[str]] = defaultdict(deque)
        #: What sees this session's MCP traffic and decisions (its agent's message log).
        self.observers: tuple[Observer, ...] = ()

    @property
    def session(self) -> Session | None:
        """The ACP session, once ``session/new`` (or load, resume) answered. Its broker
        then knows this server, so the agent's own questions about its tools are decided
        with ``notebook`` rules (``client/notebook_names.py``)."""
        return self._session

    @session.setter
    def session(self, session: Session | None) -> None:
        self._session = session
        if session is not None:
            registry = self.registry
            session.permissions.notebook_server = NotebookServer(
                SERVER_NAME, lambda: {tool.name: tool.read_only for tool in registry.tools()}
            )

    def spec(self) -> McpServerSpec:
        """The ``mcpServers`` entry: the kernel's, the same for every session (starts
        serving)."""
        assert self._kernel is not None, "offered only by the kernel's tools"
        return self._kernel.spec()

    def close(self) -> None:
        """Calls routed here end (the kernel's server goes on for the other sessions)."""
        if self._kernel is not None:
            self._kernel.release(self)

    def serves(self, pid: int | None) -> bool:
        """Whether the relay ``pid`` belongs to this session's agent: a process the agent
        started (True when either is unknown)."""
        session = self.session
        process = session.connection.process if session is not None else None
        if pid is None or process is None:
            return True
        chain = ancestors(pid)
        return not chain or process.pid in chain

    @property
    def running(self) -> bool:
        """Whether its session runs a turn now."""
        return self.session is not None and self.session.active_turn is not None

    # ------------------------------------------------------------------ approval

    async def approve(self, request: ToolApproval) -> Decision:
        decision = await self._decide(request)
        for observer in self.observers:
            observer(traced(request, decision))
        return decision

    async def _decide(self, request: ToolApproval) -> Decision:
        session = self.session
        if session is None or session.closed:
            return Denied("not approved: the session is not open")
        if request.review_in_place:
            return self._without_card(session, request)
        return await self._with_card(session, request)

    def _without_card(self, session: Session, request: ToolApproval) -> Decision:
        """The one decision (``client/decision.py``); what would be asked is reviewed in place."""
        broker = session.permissions
        call = ToolCallState(self._new_id(request), None, title=request.title, kind=request.kind)
        call.locations = [m.ToolCallLocation(path=path) for path in request.paths]
        call.notebook_tool = request.tool
        verdict = decide(
            Question(call, "tool"),
            turn=broker.turn(),
            rules=broker.rules,
            cwd=session.cwd,
            can_ask=broker.can_ask,
        )
        by = f"the {verdict.by}" if verdict.by.startswith("policy ") else verdict.by
        if verdict.action == "allow":
            return Approved(by)
        if verdict.action == "ask":
            return Review()
        if verdict.by == "no turn":
            return Denied(f"not approved: {verdict.reason}")
        if verdict.ask_first and verdict.by != "policy deny":
            return Denied(f"denied: no one can answer here ({by})", f"{by} (no one could answer)")
        return Denied(f"denied by {by}", by)

    async def _with_card(self, session: Session, request: ToolApproval) -> Decision:
        """A permission request in the session's broker, shown in a tool call of its own
        in the running turn, with the code before the buttons."""
        call_id = self._new_id(request)
        if session.permissions.turn() is None:  # no card outside a turn: nothing would show it
            return Denied(f"not approved: {NO_TURN}")
        decided = await ask_itself(
            session, _update(call_id, request), notebook_tool=request.tool, allow="Allow"
        )
        if decided.state == "selected" and decided.chosen is not None and decided.chosen.allows:
            self._running[request.code or ""].append(call_id)
            self._progress(session, call_id, "in_progress")
            return Approved("" if decided.decided_by == "user" else _who(decided.decided_by))
        who = _who(decided.decided_by) if decided.state == "selected" else None
        reason = f"denied by {who}" if who is not None else f"not approved: {decided.describe()}"
        self._progress(session, call_id, "failed", request.code, [f"Not run: {reason}."])
        return Denied(reason, who)

    @staticmethod
    def _new_id(request: ToolApproval) -> str:
        return f"notebook-{request.tool}-{next(_numbers)}-{uuid.uuid4().hex[:8]}"

    # ------------------------------------------------------------------ output

    def report(self, change: CellChangeReport) -> None:
        """What a cell tool changed: in the turn, and kept for undo (``changes/revert.py``)."""
        if self.session is not None:
            record_cell_change(self.session, change)

    def show(self, result: CodeResult) -> None:
        """What approved code did, in its tool call (agent loop thread)."""
        session = self.session
        waiting = self._running.get(result.code)
        if session is None or not waiting:
            return
        call_id = waiting.popleft()
        parts = code_content(result)
        texts = [part for part in parts if isinstance(part, str)]
        images = [part.png for part in parts if isinstance(part, ToolImage)]
        status = "completed" if result.ok else "failed"
        self._progress(session, call_id, status, result.code, texts, images)

    def _progress(
        self,
        session: Session,
        call_id: str,
        status: str,
        code: str | None = None,
        texts: list[str] | None = None,
        images: list[bytes] | None = None,
    ) -> None:
        """The call's new status and, with ``texts``, its content: the code, then what it did."""
        update: dict[str, object] = {
            "sessionUpdate": "tool_call_update",
            "toolCallId": call_id,
            "status": status,
        }
        if texts or images:
            blocks: list[m.ContentBlock] = []
            if code is not None:
                blocks.append(m.TextContentBlock(text=fence(code, "python")))
            blocks += [m.TextContentBlock(text=fence(text)) for text in texts or []]
            blocks += [
                m.ImageContentBlock(
                    data=base64.b64encode(png).decode("ascii"), mime_type="image/png"
                )
                for png in images or []
            ]
            update["content"] = [m.ContentToolCallContent(content=b).to_wire() for b in blocks]
        try:
            session.transcript.apply(m.ToolCallProgress.parse(update))
        except Exception:  # showing must never lose the agent its result
            log.exception("could not show the notebook tool call %s", call_id)


def _update(call_id: str, request: ToolApproval) -> m.ToolCallUpdate:
    """The tool call as the permission request carries it: the code shown in full."""
    content = []
    if request.code is not None:
        text = m.TextContentBlock(text=fence(request.code, "python"))
        content.append(m.ContentToolCallContent(content=text))
    return m.ToolCallUpdate(
        tool_call_id=call_id,
        title=request.title,
        kind=request.kind,
        status="pending",
        raw_input=dict(request.arguments),
        content=content,
        locations=[m.ToolCallLocation(path=path) for path in request.paths],
    )


class KernelTools:
    """The kernel's side of the notebook tools: the tool registry, the main-thread
    runner (made inside a cell, on the main thread: :meth:`prepare`), and whether new
    sessions get the tools (the ``tools`` trait)."""

    def __init__(self, shell: InteractiveShell, loop: Callable[[], AgentLoop]) -> None:
        self.shell = shell
        self._loop = loop
        self.registry = kernel_tools()
        #: The live-notebook tools join the registry while a notebook is connected.
        self.live = LiveTools(self.registry, frontends, shell)
        self.runner: MainThreadRunner | None = None
        self.enabled = True
        #: The one server every session's entry names, and the sessions it serves.
        self._server: NotebookToolsServer | None = None
        self._sessions: list[SessionTools] = []

    def prepare(self) -> MainThreadRunner:
        """The runner, made on first use (main thread, inside a cell: it captures the
        kernel's asyncio loop)."""
        if self.runner is None:
            self.runner = MainThreadRunner()
            self.live.install()
        return self.runner

    def for_session(self, name: str) -> SessionTools | None:
        """A new session's tools; None when they are off or no cell has run yet."""
        if not self.enabled or self.runner is None:
            return None
        tools = SessionTools(self.runner, self.shell, name, self.registry, self)
        self._sessions.append(tools)
        return tools

    def spec(self) -> McpServerSpec:
        """The kernel's ``notebook`` entry, one for every session (an agent that registers
        MCP servers once per process, fast-agent, refuses a second ``notebook`` with other
        settings); the server starts on first use."""
        if self._server is None:
            assert self.runner is not None
            self._server = NotebookToolsServer(
                self._loop(),
                self.runner,
                self.shell,
                "",
                _unrouted,
                registry=self.registry,
                route=self.route,
                heard=self.heard,
                observers_for=self.observers_for,
            )
        return self._server.start()

    def release(self, tools: SessionTools) -> None:
        if tools in self._sessions:
            self._sessions.remove(tools)

    def close(self) -> None:
        """Stop the server (with the kernel's agents)."""
        server, self._server = self._server, None
        if server is not None:
            server.close()

    def observers_for(self, pid: int | None) -> tuple[Observer, ...]:
        """What sees the traffic of the relay ``pid``: its agent's session's observers."""
        for tools in self._sessions:
            if tools.serves(pid):
                return tools.observers
        return ()

    def heard(self, pid: int | None) -> None:
        """A relay of ``pid`` made a request: its agent's sessions use the tools."""
        for tools in self._sessions:
            if tools.serves(pid):
                tools.heard = True

    def route(self, pid: int | None) -> ToolContext | str:
        """The session a call from the relay ``pid`` is for: among the sessions of the
        agent that started the relay, the one running a turn, else the only one."""
        candidates = [tools for tools in self._sessions if tools.serves(pid)]
        running = [tools for tools in candidates if tools.running]
        chosen = running if running else candidates
        if len(chosen) == 1:
            return chosen[0].context
        if not chosen:
            return "No notebook session is open for this agent: the notebook tools serve none."
        return (
            f"{len(chosen)} sessions of this agent could be asking (turns running at once); "
            "the notebook tools answer one at a time: run the turns one after the other."
        )


async def _unrouted(request: ToolApproval) -> Decision:
    return Denied("not approved: no session asked")
