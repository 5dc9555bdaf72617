"""What a control is, what its handler is given, and the one way every control runs.

A control is one entry of the registry (``controls/__init__.py``): its name (the
``acp.<name>()`` function), its flags on the ``%acp`` line, the value it takes, its help
line, its handler, what ``-a``/``-s`` select for it, and whether it may run where no one
can click. From that entry come the ``%acp`` option, its Tab completion, its line in
``%acp --help`` and its Python function; :func:`run` carries it out for both.

Threads: a handler defined with ``async def`` runs on the agent loop, the only thread that
touches agents, sessions and widgets once they exist; what it returns is a snapshot, a
:class:`~.answers.Text` or :class:`~.answers.Table`, or a widget it built there, so the
caller may keep it on any thread. A plain ``def`` handler reads only configuration and
runs on the caller's thread.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import inspect
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal, cast

from ...client.policy import Policy

if TYPE_CHECKING:
    from ...client.session import Session
    from ..runtime.agent import AgentRuntime
    from ..runtime.agents import NotebookAgents

#: What ``-a``/``-s`` (``agent=``/``session=``) select: nothing, the agent, or one of its
#: sessions.
Scope = Literal["notebook", "agent", "session"]
DEFAULT_SESSION = "default"
#: How long a control may wait for the agent loop (a hung agent must not hang the cell).
CONTROL_TIMEOUT = 120.0


class ControlFailed(Exception):
    """A control could not be carried out; the message is one sentence for the user."""

    def _render_traceback_(self) -> list[str]:
        # IPython shows these lines instead of the traceback (Run All still stops here).
        return [f"{type(self).__name__}: {self}"]


def _one(value: str) -> tuple[str, ...]:
    return (value,)


@dataclass(frozen=True)
class Arg:
    """The value a control takes on the ``%acp`` line (``--load ID``)."""

    metavar: str
    required: bool = True
    #: How the line's one value becomes the handler's arguments (``--set ID=VALUE``);
    #: raises :class:`ControlFailed` when it cannot.
    split: Callable[[str], tuple[str, ...]] = _one


@dataclass(frozen=True)
class Control:
    #: The Python function: ``acp.<name>()``.
    name: str
    #: The spellings on the ``%acp`` line, the first one canonical.
    flags: tuple[str, ...]
    help: str
    #: ``handler(ctx, *arguments)``; ``async def`` to run on the agent loop. The handlers'
    #: modules are imported with the registry, so the ``%acp`` line's parser loads them:
    #: what a handler needs of the notebook layer (sessions, the protocol models) it
    #: imports when it runs (the first ``%acp`` starts its agent before that layer loads).
    handler: Callable[..., object]
    arg: Arg | None = None
    scope: Scope = "notebook"
    #: False for a control that needs someone to click in the cell.
    headless: bool = True
    #: The handler waits for the notebook's page (live cells): its answers reach the
    #: kernel only while the cell awaits, so ``%acp`` awaits it (:func:`run_awaited`).
    awaits_page: bool = False

    @property
    def flag(self) -> str:
        return self.flags[0]

    @property
    def usage(self) -> str:
        """``--resume [ID]``: the flag and its value as the help shows them."""
        if self.arg is None:
            return self.flag
        value = self.arg.metavar if self.arg.required else f"[{self.arg.metavar}]"
        return f"{self.flag} {value}"

    def arguments(self, value: str | None) -> tuple[str, ...]:
        """The handler's arguments from the value given on the ``%acp`` line."""
        if self.arg is None or value is None:
            return ()
        return self.arg.split(value)


@dataclass(frozen=True)
class ControlContext:
    """What a handler acts on: the notebook's agents, the agent and session given (None:
    not given), and the policy and interactivity of a session it opens."""

    agents: NotebookAgents
    default_agent: str
    agent: str | None = None
    session: str | None = None
    policy: Policy = "ask"
    interactive: bool = False
    #: The handler was awaited by the cell (:func:`run_awaited`), so the notebook's page
    #: can answer it meanwhile.
    awaited: bool = False

    @property
    def agent_name(self) -> str:
        return self.agent or self.default_agent

    @property
    def session_name(self) -> str:
        return self.session or DEFAULT_SESSION

    def runtime(self) -> AgentRuntime:
        """The agent's runtime, created (not started) if needed; loop thread."""
        return self.agents.runtime(self.agent_name)

    def existing_runtime(self) -> AgentRuntime | None:
        """The agent's runtime if this notebook used the agent already; loop thread."""
        return self.agents.runtimes.get(self.agent_name)

    def existing_session(self) -> Session | None:
        runtime = self.existing_runtime()
        return runtime.sessions.get(self.session_name) if runtime is not None else None

    async def open_session(self) -> Session:
        """The named session, started (and created) if needed."""
        return await self.runtime().session(
            self.session_name, policy=self.policy, interactive=self.interactive
        )

    async def reopen(self, how: Literal["load", "resume"], session_id: str) -> Session:
        """``session/load`` or ``session/resume`` of ``session_id`` as the named session,
        remembered as this notebook's last."""
        runtime = self.runtime()
        opener = runtime.load if how == "load" else runtime.resume
        session = await opener(
            session_id, self.session_name, policy=self.policy, interactive=self.interactive
        )
        self.agents.remember(runtime, self.session_name, session)
        return session


def run(control: Control, ctx: ControlContext, *args: object, **kwargs: object) -> object:
    """Carry out ``control``: its handler on the agent loop (``async def``) or here; an
    expected failure becomes :class:`ControlFailed` with its one sentence."""
    call = _call(control, ctx, *args, **kwargs)
    with _failures(control):
        if not inspect.iscoroutinefunction(control.handler):
            return call()
        loop = ctx.agents.loop
        if loop.in_loop_thread():
            raise RuntimeError(f"acp.{control.name}() waits for the agent loop: not from it.")
        return loop.run(cast(Callable[[], Awaitable[object]], call), timeout=CONTROL_TIMEOUT)


async def run_awaited(control: Control, ctx: ControlContext, *args: object) -> object:
    """:func:`run` for a cell that awaits: the kernel's own loop stays free meanwhile
    (ipykernel >= 7.4 then processes comm messages, such as the notebook page's answers)."""
    ctx = replace(ctx, awaited=True)
    call = _call(control, ctx, *args)
    with _failures(control):
        if not inspect.iscoroutinefunction(control.handler):
            return call()
        future = ctx.agents.loop.submit(cast(Callable[[], Awaitable[object]], call))
        return await asyncio.wait_for(asyncio.wrap_future(future), CONTROL_TIMEOUT)


def _call(
    control: Control, ctx: ControlContext, *args: object, **kwargs: object
) -> Callable[[], object]:
    if not control.headless and not ctx.interactive:
        raise ControlFailed(f"{control.flag} needs a notebook where someone can click.")
    return functools.partial(control.handler, ctx, *args, **kwargs)


@contextlib.contextmanager
def _failures(control: Control) -> Iterator[None]:
    try:
        yield
    except (concurrent.futures.TimeoutError, asyncio.TimeoutError):
        raise ControlFailed(
            f"{control.flag} did not finish within {CONTROL_TIMEOUT:.0f} s; "
            "`%acp --restart` starts the agent again."
        ) from None
    except Exception as exc:
        from ..runtime.agent import EXPECTED_FAILURES

        if not isinstance(exc, EXPECTED_FAILURES):
            raise
        raise ControlFailed(str(exc) or type(exc).__name__) from None
