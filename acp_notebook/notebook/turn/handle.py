"""A ``%acp`` turn: what it needs (:class:`TurnSettings`) and how the kernel's main thread
holds it (:class:`TurnHandle`); how it runs on the agent loop is ``run.py``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import time
from collections.abc import Generator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...client.agent_markdown import agent_markdown
from ...client.permissions import Policy
from ...client.sent import PromptInput, prompt_blocks
from ...client.session import PromptTurn
from ...protocol import models as m
from ...ui.saved_transcript import saved_bundle
from ..prompt.context import NotebookPrompt
from ..runtime.loop import AgentLoop
from . import comm_status

if TYPE_CHECKING:
    from ..tools import MainThreadRunner


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
