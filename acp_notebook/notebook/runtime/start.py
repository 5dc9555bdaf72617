"""How the notebook starts an agent: its launch spec, and the first ``%acp``'s agent
started before the notebook layer loads.

The first ``%acp`` of a kernel imports the notebook layer (the agents, turns, widgets, the
protocol models: about as long as the demo agent's own start, which imports the same
models). Started one after the other, the first turn waited for both; so a prompt line
starts its agent process first (:func:`start_early`, with only the line's parser, the
agent loop and the process layer loaded; the magics read the line, once) and the runtime
of that agent takes the process when it starts (:meth:`EarlyStart.hand_over`): the same process, environment, directory,
supervisor and stderr handling as its own start, only sooner. What a runtime starts is
decided in one place, :func:`would_start`, for both starts: the runtime takes the process
whenever it would have started the same one.

Everything here but :func:`start_early` and :meth:`EarlyStart.discard` runs on the agent
loop thread.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

import anyio

from ...client.presets import DEMO, LaunchSpec, resolve_agent
from ...client.protected import make_state_dir
from ...protocol.process import AgentProcess, open_agent_process
from ...protocol.sandbox import AS_CONFIGURED, Confinement, SandboxChoice
from .loop import AgentLoop
from .notebook_state import NotebookState

#: What the runtime runs over the process it takes (None: it starts its own).
Host = Callable[[AgentProcess | None], Awaitable[None]]


@dataclass(frozen=True)
class Launch:
    """The agent process a runtime starts: its command line, its environment (on top of
    the kernel's), its directory and its confinement. An early process is taken only by
    a runtime whose launch is equal to the one it was started with."""

    name: str
    argv: tuple[str, ...]
    env: Mapping[str, str]
    cwd: str
    confinement: Confinement


def notebook_cwd(cwd: str | None = None) -> str:
    """The directory the notebook's agents start in and open their sessions in: ``cwd``,
    else the kernel's working directory (absolute)."""
    return os.path.abspath(cwd or os.getcwd())


def would_start(
    spec: LaunchSpec,
    cwd: str,
    env: Mapping[str, str] | None = None,
    sandbox: SandboxChoice = AS_CONFIGURED,
) -> Launch:
    """What a runtime of ``spec`` starts in ``cwd``: the spec's command, with ``env`` (the
    runtime's own: a login's variables) over the spec's environment, confined to ``cwd``
    as ``sandbox`` asks (with the preset's arguments for running confined, if it is). The one place this is decided, for the runtime's own start and
    for the process started early alike."""
    confinement = spec.confinement(
        sandbox.mode, [cwd], writable=sandbox.writable, ports=sandbox.ports
    )
    environment = {**spec.confined_env(confinement), **(env or {})}
    argv = tuple(spec.confined_argv(confinement))
    return Launch(spec.name, argv, environment, cwd, confinement)


def launch_spec(agent: str, state: NotebookState) -> LaunchSpec:
    """How to start ``agent`` (a preset name or a command line); the built-in demo keeps
    this notebook's sessions in the per-user state directory (unless
    ``ACP_DEMO_STATE_FILE`` says where)."""
    spec = resolve_agent(agent)
    if spec.method == "builtin" and spec.name == DEMO and "ACP_DEMO_STATE_FILE" not in os.environ:
        make_state_dir()  # before the agent or its sandbox makes it, open to others
        state_file = ["--state-file", str(state.demo_sessions)]
        writable = (*spec.writable, str(state.demo_sessions.parent) + os.sep)
        spec = dataclasses.replace(spec, argv=[*spec.argv, *state_file], writable=writable)
    return spec


class EarlyStart:
    """The process of ``agent`` started on ``loop`` before its runtime exists; held until
    that runtime takes it (:meth:`hand_over`) or it is :meth:`discard`-ed (then shut down
    as any agent process is, children included)."""

    def __init__(
        self,
        loop: AgentLoop,
        agent: str,
        spec: LaunchSpec,
        cwd: str,
        sandbox: SandboxChoice = AS_CONFIGURED,
    ) -> None:
        self.loop = loop
        #: The notebook's name for the agent (``-a``, or the configured one).
        self.agent = agent
        self.spec = spec
        self.cwd = cwd
        #: What was started: a runtime of ``spec`` in ``cwd`` with no variables of its own.
        self.launch = would_start(spec, cwd, sandbox=sandbox)
        self.process: AgentProcess | None = None
        self._lines: list[str] = []
        self._on_stderr: Callable[[str], None] = self._lines.append
        self._host: Host | None = None
        self._decided: anyio.Event | None = None
        self._discarded = False
        self._over = False
        #: Done once the process is shut down (or could not be started).
        self.finished = loop.submit(self._hold)

    async def _hold(self) -> None:
        self._decided = anyio.Event()
        if self._host is not None or self._discarded:
            self._decided.set()
        hosted = False
        try:
            launch = self.launch
            async with open_agent_process(
                list(launch.argv),
                env=dict(launch.env),
                cwd=launch.cwd,
                name=launch.name,
                on_stderr=self._stderr_line,
                confinement=launch.confinement,
            ) as process:
                self.process = process
                await self._decided.wait()
                if self._host is not None:
                    hosted = True
                    await self._host(process)
        except Exception:
            # Not started (or not shut down cleanly once discarded): a runtime that took
            # it starts its own, and says why that fails, as it would without this.
            if not hosted and self._host is not None:
                await self._host(None)
        finally:
            self.process = None
            self._over = True

    def _stderr_line(self, line: str) -> None:
        self._on_stderr(line)

    def hand_over(self, host: Host, on_stderr: Callable[[str], None], launch: Launch) -> bool:
        """Run ``host`` over this process (its stderr so far, then each line, to
        ``on_stderr``) if it is the one the runtime would start (its ``launch``,
        :func:`would_start`); False (and discarded) when it is not, or is no more: the
        runtime starts its own."""
        if launch != self.launch or self._over or self._discarded or self._host is not None:
            self._discard_here()
            return False
        for line in self._lines:
            on_stderr(line)
        self._on_stderr = on_stderr
        self._host = host
        if self._decided is not None:
            self._decided.set()
        return True

    def discard(self) -> None:
        """Shut the process down unless a runtime took it (from any thread)."""
        self.loop.post(self._discard_here)

    def _discard_here(self) -> None:
        if self._host is None:
            self._discarded = True
            if self._decided is not None:
                self._decided.set()


def start_early(agent: str, sandbox: SandboxChoice = AS_CONFIGURED) -> EarlyStart | None:
    """The process of ``agent`` (the first ``%acp`` line's, a prompt that reaches it)
    started now, if the agent can be resolved; an agent that cannot starts nothing here
    and fails, if it does, as it would without this."""
    cwd = notebook_cwd()  # where the notebook's agents run (``NotebookAgents.cwd``)
    try:
        spec = launch_spec(agent, NotebookState(cwd))
        loop = AgentLoop()
    except Exception:  # an unknown agent, a malformed command: said by the turn, as before
        return None
    return EarlyStart(loop, agent, spec, cwd, sandbox)
