"""How a ``%acp`` turn runs on the agent loop (:func:`run_turn`): its agent's runtime, its
session (logging in where someone can click), its prompt, its end — into a live cell, as
plain text, or headless — and the review of what it changed.

Everything here runs on the agent loop thread.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from ...agents.evidence import STDERR_LINES, with_finding
from ...client.errors import AuthRequired, HandshakeTimeout, TurnTimeout
from ...client.session import PromptTurn, Session
from ..frontend import frontends
from ..runtime.agent import EXPECTED_FAILURES, AgentRuntime
from .handle import TurnHandle, TurnSettings
from .login import LoginFailed, log_in, open_session

if TYPE_CHECKING:
    from ..changes.page import PageChanges
    from ..runtime.agent_states import AgentStates
    from ..view.live_cell import LiveCell
    from ..view.plain import PlainView

log = logging.getLogger(__name__)


class TurnAgents(Protocol):
    """What a turn needs of the notebook's agents (``runtime/agents.py``: ``NotebookAgents``)."""

    def runtime(self, agent: str) -> AgentRuntime: ...

    @property
    def states(self) -> AgentStates: ...

    @property
    def page_changes(self) -> PageChanges: ...

    def remember(self, runtime: AgentRuntime, name: str, session: Session) -> None: ...


async def _prompt(
    runtime: AgentRuntime,
    settings: TurnSettings,
    handle: TurnHandle,
    cell: LiveCell | PlainView | None,
    follow: Callable[[Session], None],
) -> tuple[Session, PromptTurn]:
    """Open the turn's session (``follow`` it), send the prompt, wait for the turn to end."""
    session = await open_session(runtime, settings, _clickable(cell))
    follow(session)
    blocks = settings.blocks(session.connection.agent_capabilities.prompt_capabilities)
    turn = session.submit(blocks, timeout=settings.timeout)
    handle.turn = turn
    if cell is not None:
        cell.follow(session, turn)
    await turn.wait()
    return session, turn


def _clickable(cell: LiveCell | PlainView | None) -> LiveCell | None:
    """The cell, if it shows widgets (a login prompt can be clicked there). Asked without
    importing the widgets' module: a turn without widgets (headless, plain text) never
    imports ipywidgets."""
    if cell is None:
        return None
    from ..view.plain import PlainView

    return None if isinstance(cell, PlainView) else cell


def _with_evidence(runtime: AgentRuntime, error: str) -> str:
    """``error`` and, when the preset's agent is known to fail so, what fixes it."""
    preset = runtime.spec.preset.id if runtime.spec.preset else None
    stderr = runtime.process.stderr_tail(STDERR_LINES) if runtime.process is not None else []
    return with_finding(preset, error, stderr)


def _explain_turn(runtime: AgentRuntime, session: Session, turn: PromptTurn) -> None:
    """A failed or timed-out turn of a preset's agent says what fixes it, where known."""
    assert turn.record is not None
    if turn.error is not None:
        explained = _with_evidence(runtime, turn.error)
        if explained != turn.error:
            turn.error = explained
            session.transcript.end_turn(turn.record, stop_reason=turn.stop_reason, error=explained)
        return
    said = f"timeout (-t {turn.timeout:g})"
    explained = _with_evidence(runtime, said)
    if explained != said:
        session.transcript.add_note(explained[len(said) + 1 :])


async def run_turn(
    agents: TurnAgents, handle: TurnHandle, cell: LiveCell | PlainView | None
) -> None:
    """Run the turn of ``handle`` on the agent loop: open its session (logging in where
    someone can click), send the prompt, wait for the end. With a ``cell`` (someone is
    watching) it streams there and ends as the static transcript, or as plain text
    (a frontend without widgets, ``view/plain.py``)."""
    settings = handle.settings
    runtime: AgentRuntime | None = None
    try:
        runtime = agents.runtime(settings.agent)
        if cell is not None:
            cell.starting(runtime.status)
            runtime.progress = cell.start_progress
        follow = agents.states.follow
        agents.states.poke()  # a turn starting its agent is running already
        session, turn = await _prompt(runtime, settings, handle, cell, follow)
        clickable = _clickable(cell)
        if (
            isinstance(turn.exception, AuthRequired)
            and clickable is not None
            and await log_in(runtime, clickable, turn.exception)
        ):
            # The agent refused the prompt for want of a login; logged in now: again.
            session, turn = await _prompt(runtime, settings, handle, cell, follow)
        if isinstance(turn.exception, TurnTimeout):
            # The agent ignored session/cancel: stop it, so the next prompt gets a
            # fresh one instead of an agent still busy with this turn, and say so.
            turn.error = turn.exception.sentence(await runtime.stop())
            if turn.record is not None:
                session.transcript.end_turn(
                    turn.record, stop_reason=turn.stop_reason, error=turn.error
                )
        if turn.record is not None and (turn.error is not None or turn.timed_out):
            _explain_turn(runtime, session, turn)
        if turn.error is not None and turn.record is None:
            handle.error = turn.error
        agents.remember(runtime, settings.session, session)
        runtime.last_error = turn.error
    except (*EXPECTED_FAILURES, LoginFailed) as exc:
        handle.error = str(exc)
        if isinstance(exc, HandshakeTimeout) and runtime is not None:
            # An agent that does not answer the handshake is stuck: stop it, no process
            # is left, the next %acp starts afresh, and the turn says what was ended.
            handle.error = exc.sentence(await runtime.stop())
    except Exception as exc:  # the kernel must survive anything an agent does
        log.exception("turn failed")
        handle.error = f"{type(exc).__name__}: {exc}"
    if runtime is not None:
        runtime.progress = None
        if handle.error is not None:
            handle.error = _with_evidence(runtime, handle.error)
            runtime.last_error = handle.error
    if cell is not None:
        cell.end(handle.bundle(), handle.error)
    _show_changes(agents, handle)


def _show_changes(agents: TurnAgents, handle: TurnHandle) -> None:
    """The turn changed files or cells: the page draws them in the ``%acp`` cell with
    Revert buttons (the transcript keeps its "Changed in this turn" line either way)."""
    turn, cell_id = handle.turn, handle.settings.cell_id
    if turn is None or turn.record is None or cell_id is None or not frontends.connected():
        return  # no page with the extension (VS Code, classic Notebook, headless)
    changes = turn.session.checkpoints.of_turn(turn.record.index)
    if changes is not None:
        agents.page_changes.offer(changes, cell_id)
