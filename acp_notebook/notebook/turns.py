"""A ``%acp`` turn: what it needs (:class:`TurnSettings`), how the kernel's main thread
holds it (:class:`TurnHandle`), and how it runs on the agent loop (:func:`run_turn`) —
into a live cell, or headless.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..agents.evidence import STDERR_LINES, with_finding
from ..client.agent_markdown import agent_markdown
from ..client.errors import AuthRequired, HandshakeTimeout, TurnTimeout
from ..client.permissions import Policy
from ..client.session import PromptInput, PromptTurn, Session, prompt_blocks
from ..protocol import models as m
from ..ui.saved_transcript import saved_bundle
from . import comm_status
from .context import NotebookPrompt
from .frontend import frontends
from .login import LoginFailed, log_in, open_session
from .loop import AgentLoop
from .runtime import EXPECTED_FAILURES, AgentRuntime

if TYPE_CHECKING:
    from .cell import LiveCell
    from .manager import NotebookAgents
    from .plain_view import PlainView
    from .tools import MainThreadRunner

log = logging.getLogger(__name__)

#: How long an interrupted cell waits for the agent to confirm the cancellation.
INTERRUPT_GRACE = 10.0
#: A waiting main thread wakes this often: a SIGINT that the OS delivered to another
#: thread only runs its Python handler when the main thread runs bytecode (measured:
#: without it the kernel interrupt was seen only when the turn ended).
_WAKE_INTERVAL = 0.1


@dataclass
class TurnSettings:
    """Everything one ``%acp`` needs, resolved from options, config and environment."""

    #: Text or content blocks as given, or the notebook's prompt (its blocks follow the
    #: agent's prompt capabilities, see ``context``).
    prompt: PromptInput | NotebookPrompt
    agent: str
    session: str = "default"
    permissions: Policy = "ask"
    timeout: float | None = None
    headless: bool = False
    #: Someone reads, without widgets (``jupyter console``): plain text and ``input()``.
    plain: bool = False
    wait: bool = True
    coalesce: float = 0.075
    #: Offer the notebook tools to a session this turn opens.
    tools: bool = True
    #: The ``%acp`` cell's id as the page sent it (JupyterLab, Notebook 7): where the
    #: turn's review bar is drawn when it changed something.
    cell_id: str | None = None

    def blocks(self, accepts: m.PromptCapabilities) -> list[m.ContentBlock]:
        """The content blocks to send to an agent that accepts ``accepts``."""
        if isinstance(self.prompt, NotebookPrompt):
            return self.prompt.blocks(accepts)
        return prompt_blocks(self.prompt)


class TurnInterrupted(KeyboardInterrupt):
    """The kernel interrupt ended a cell that held a turn, after cancelling the turn.

    A ``KeyboardInterrupt``, so the cell ends in error and Run All stops there; IPython
    shows :meth:`_render_traceback_` in place of a traceback through this package's
    frames, which say nothing about the user's code.
    """

    def _render_traceback_(self) -> list[str]:
        # IPython shows these lines instead of the traceback; named as what the user did.
        return [f"KeyboardInterrupt: {self}"]


def interrupted(future: concurrent.futures.Future[None]) -> TurnInterrupted:
    """What the cell raises once the interrupt cancelled the turn of ``future`` (given
    :data:`INTERRUPT_GRACE` to confirm): one sentence for each way that can end."""
    if future.done():
        return TurnInterrupted("the kernel interrupt cancelled the agent's turn.")
    return TurnInterrupted(
        "the kernel interrupt asked the agent to cancel its turn, which it has not confirmed; "
        "%acp --status shows whether it is still running."
    )


def error_bundle(message: str) -> dict[str, str]:
    """A turn that could not run, in words (which may quote the agent: its stderr, its error)."""
    shown = agent_markdown(message)
    return {"text/markdown": f"**Error:** {shown}\n", "text/plain": f"Error: {message}\n"}


class TurnHandle:
    """A ``%acp`` turn seen from the kernel's main thread: wait for it, cancel it.

    ``await handle`` (top-level await) keeps the cell busy while button clicks are
    still processed (ipykernel >= 7.4); ``handle.wait()`` blocks (headless runs).
    A kernel interrupt during either cancels the turn cleanly, then ends the cell with
    :class:`TurnInterrupted` (one line, not a traceback).
    """

    def __init__(
        self, loop: AgentLoop, settings: TurnSettings, runner: MainThreadRunner | None = None
    ) -> None:
        self._loop = loop
        self.settings = settings
        #: Runs the notebook tools' work on the main thread while :meth:`wait` blocks it.
        self._runner = runner
        #: Set on the agent loop once the prompt is queued.
        self.turn: PromptTurn | None = None
        #: Why the turn could not run (one sentence), if it could not.
        self.error: str | None = None
        self.future: concurrent.futures.Future[None] | None = None

    # ------------------------------------------------------------------ reading

    @property
    def done(self) -> bool:
        return self.future is not None and self.future.done()

    @property
    def stop_reason(self) -> str | None:
        return self.turn.stop_reason if self.turn else None

    def bundle(self) -> dict[str, str]:
        """What the cell keeps: the turn as Markdown, plain text (what nbval compares) and,
        unless it is long, HTML that looks like the live view (``ui/saved_transcript.py``)."""
        turn = self.turn
        if turn is not None and turn.record is not None:
            session = turn.session
            return saved_bundle(session.transcript, turn.record, session.terminal_view)
        return error_bundle(self.error or "The turn did not start.")

    def __repr__(self) -> str:
        state = self.turn.state if self.turn else ("failed" if self.error else "starting")
        return f"<acp turn in session {self.settings.session!r}: {state}>"

    # ------------------------------------------------------------------ control

    def start(self, future: concurrent.futures.Future[None]) -> None:
        """Follow the task that runs the turn; a task that could not run records why."""
        self.future = future

        def failed(done: concurrent.futures.Future[None]) -> None:
            error = None if done.cancelled() else done.exception()
            if error is not None and self.error is None:
                self.error = str(error) or type(error).__name__

        future.add_done_callback(failed)

    def cancel(self) -> None:
        """Cancel the turn (from any thread)."""
        turn = self.turn
        if turn is not None:
            self._loop.submit(turn.cancel)

    def wait(self, timeout: float | None = None) -> TurnHandle:
        """Block until the turn ends; an interrupt cancels it, then raises
        :class:`TurnInterrupted`.

        Raises :class:`TimeoutError` when the turn has not ended within ``timeout``
        seconds; it goes on (``cancel()`` it, or wait again).
        """
        assert self.future is not None
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            while not self.future.done():
                wake = _WAKE_INTERVAL
                if deadline is not None:
                    wake = min(wake, deadline - time.monotonic())
                    if wake <= 0:
                        raise TimeoutError(
                            f"The turn did not end within {timeout:g} s; it goes on "
                            "(cancel() stops it)."
                        )
                if self._runner is not None:
                    self._runner.wait(self.future, wake)  # run_code runs meanwhile
                else:
                    concurrent.futures.wait([self.future], wake)
        except KeyboardInterrupt:
            self.cancel()
            with contextlib.suppress(BaseException):
                self.future.result(INTERRUPT_GRACE)
            raise interrupted(self.future) from None
        return self

    def __await__(self) -> Generator[Any, None, TurnHandle]:
        return self._wait_async().__await__()

    async def _wait_async(self) -> TurnHandle:
        assert self.future is not None
        waiting = asyncio.wrap_future(self.future)
        try:
            # Widget messages sent meanwhile get their status (value widgets keep syncing).
            with comm_status.awaiting():
                while not waiting.done():
                    await asyncio.wait([waiting], timeout=_WAKE_INTERVAL)
        except (asyncio.CancelledError, KeyboardInterrupt):
            # The kernel interrupt reaches an awaiting cell as a cancellation.
            self.cancel()
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(asyncio.shield(waiting), INTERRUPT_GRACE)
            raise interrupted(self.future) from None
        with contextlib.suppress(Exception, asyncio.CancelledError):
            waiting.result()  # a task that could not run: recorded by start()
        return self


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
    from .plain_view import PlainView

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
    agents: NotebookAgents, handle: TurnHandle, cell: LiveCell | PlainView | None
) -> None:
    """Run the turn of ``handle`` on the agent loop: open its session (logging in where
    someone can click), send the prompt, wait for the end. With a ``cell`` (someone is
    watching) it streams there and ends as the static transcript, or as plain text
    (a frontend without widgets, ``plain_view.py``)."""
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
    _offer_review(agents, handle)


def _offer_review(agents: NotebookAgents, handle: TurnHandle) -> None:
    """The turn changed files or cells: the page draws them in the ``%acp`` cell with
    Revert buttons (the transcript keeps its "Changed in this turn" line either way)."""
    turn, cell_id = handle.turn, handle.settings.cell_id
    if turn is None or turn.record is None or cell_id is None or not frontends.connected():
        return  # no page with the extension (VS Code, classic Notebook, headless)
    changes = turn.session.checkpoints.of_turn(turn.record.index)
    if changes is not None:
        agents.reviews.offer(changes, cell_id)
