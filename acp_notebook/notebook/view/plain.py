"""A turn in a frontend without widgets (``jupyter console``, qtconsole): plain text in
the cell's stdout as it comes, and permission requests asked through ``input()``.

Such a frontend shows ``VBox(children=…)`` for a widget and never answers a button, so
(``load/headless.py`` tells it apart) the turn is written as the CLI writes it on a terminal
(:class:`~...client.text_stream.TextPrinter`, without colours) and each permission request
is a numbered question read with ``input()`` — the kernel's ``input_request`` on stdin,
which these frontends answer. A frontend that forbids stdin is headless: the policy
decides there (``ask`` means deny), as in nbconvert.

Threads: the printer and the asker run on the agent loop; the words reach the cell only
on the kernel's main thread, inside the cell (its stdout and stdin carry the cell's
parent header), through the :class:`~..tools.runner.MainThreadRunner` that the cell's
:meth:`~..turn.handle.TurnHandle.wait` runs.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable

from ...client.asking import (
    CANCEL,
    always_question,
    permission_question,
    read_choice,
    read_yes,
    retry,
)
from ...client.permissions import PermissionOption, PermissionRequest
from ...client.session import PromptTurn, Session
from ...client.text_stream import TextPrinter
from ..runtime.agent import Status
from ..tools.runner import MainThreadRunner

__all__ = ["PlainView"]


class PlainView:
    """What a ``%acp`` turn shows in a frontend without widgets (see the module docstring)."""

    def __init__(self, runner: MainThreadRunner, ask: Callable[[str], str] | None = None) -> None:
        self._runner = runner
        #: Reads one answer on the main thread (``input`` as the kernel replaces it).
        self._ask = ask
        self._lock = threading.Lock()
        self._pending: list[str] = []
        self._printer: TextPrinter | None = None
        self._session: Session | None = None
        self._turn: PromptTurn | None = None

    # ------------------------------------------------------------------ agent loop

    def starting(self, status: Status) -> None:
        if status != "ready":
            self.write("Starting agent…\n" if status != "failed" else "Restarting agent…\n")

    def start_progress(self, line: str) -> None:
        """The agent's start-up lines are not shown: only its reply is."""

    def follow(self, session: Session, turn: PromptTurn) -> None:
        """Print ``turn`` as it comes; its permission requests are asked with ``input()``."""
        if self._printer is not None:  # the turn sent again after a login
            self._printer.close()
        self._session, self._turn = session, turn
        self._printer = TextPrinter(session, self, color=False)
        session.permissions.asker = self._ask_permission

    def end(self, bundle: dict[str, str], error: str | None) -> None:
        """How the turn ended (the reply is printed already)."""
        session, printer = self._session, self._printer
        if session is not None and session.permissions.asker == self._ask_permission:
            session.permissions.asker = None  # the session's next turn may have widgets
        record = self._turn.record if self._turn is not None else None
        if printer is not None:
            printer.close()
            if record is not None:
                printer.footer(record)
                return
        if error is not None:
            self.write(f"\nError: {error}\n")

    # ------------------------------------------------------------------ IO for the printer

    def write(self, text: str) -> int:
        """Queue ``text`` for the cell's stdout (any thread)."""
        with self._lock:
            first = not self._pending
            self._pending.append(text)
        if first:
            self._runner.submit(self._print)
        return len(text)

    def flush(self) -> None:
        """Text is printed by the main thread as soon as it runs the queue."""

    # ------------------------------------------------------------------ main thread

    def _print(self) -> None:
        with self._lock:
            text, self._pending = "".join(self._pending), []
        if text:
            sys.stdout.write(text)
            sys.stdout.flush()

    def _read(self, prompt: str) -> str:
        return (self._ask or input)(prompt)

    def _question(
        self, session: Session, request: PermissionRequest
    ) -> PermissionOption | str | None:
        """Ask on the main thread: the options, then (for "always" on a risky call) a
        second question; no brings the options back. None: decided meanwhile."""
        self._print()  # what came before the question, first
        if not request.pending:
            return None
        print(permission_question(session, request), flush=True)
        while request.pending:
            try:
                choice = read_choice(request, self._read("Choice: "))
            except EOFError:
                return CANCEL
            if choice is None:
                print(retry(request), flush=True)
                continue
            if isinstance(choice, PermissionOption):
                second = always_question(request, choice)
                if second is not None and not read_yes(self._read(f"{second} [y/N]: ")):
                    continue
            return choice
        return None

    async def _ask_permission(self, request: PermissionRequest) -> None:
        """The broker's asker (agent loop): the question is asked on the main thread."""
        session = self._session
        if session is None:
            return
        choice = await self._runner.run(self._question, session, request)
        if choice == CANCEL:
            session.permissions.cancel(request.key, by="user")
        elif isinstance(choice, PermissionOption):
            session.permissions.choose(request.key, choice.option_id)
