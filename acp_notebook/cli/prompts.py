"""The agent's questions on a terminal (``acp-notebook run --permissions ask`` on a TTY):
permission requests, and elicitations (a form's fields, or consent to open a URL).

Everything is shown and read on stderr/stdin, so stdout keeps only the transcript.
"""

from __future__ import annotations

import math
import sys
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, TextIO

import anyio
from anyio.from_thread import BlockingPortal

from ..client import elicitation
from ..client import permissions as perms
from ..client.asking import (
    CANCEL,
    always_question,
    permission_question,
    read_choice,
    read_yes,
    retry,
)
from ..client.elicitation import ElicitationRequest, InvalidContent, split_url
from ..client.permission_request import PermissionRequest
from ..client.session import Session

__all__ = ["Console", "elicitation_asker", "parse_field", "permission_asker"]


class Console:
    """The terminal's questions, one at a time, and the one reader of its input.

    A single thread reads stdin, line by line, for the whole run: a question that ends
    (answered, or its request cancelled by a timeout) leaves no reader behind to swallow
    the next line, and a line is only ever an answer to the question on screen — lines
    typed before a question appeared are dropped (else a "1" typed under one prompt could
    approve another). Use as ``async with Console() as console``.
    """

    def __init__(self, stdin: TextIO | None = None) -> None:
        self._stdin = stdin
        self._lock = anyio.Lock()
        self._send, self._receive = anyio.create_memory_object_stream[str](math.inf)
        self._portal: BlockingPortal | None = None
        self._reader: threading.Thread | None = None
        self._eof = False
        #: Called as a question takes the terminal (the streamed turn leaves its plan
        #: where it is, so redrawing it cannot erase the question).
        self.before_question: Callable[[], None] | None = None

    async def __aenter__(self) -> Console:
        self._portal = BlockingPortal()
        await self._portal.__aenter__()
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        portal, self._portal = self._portal, None
        if portal is not None:
            await portal.stop(cancel_remaining=True)
            await portal.__aexit__(*exc_info)

    @asynccontextmanager
    async def question(self) -> AsyncIterator[None]:
        """Hold the terminal for one question (what it is about, then its answers)."""
        async with self._lock:
            if self.before_question is not None:
                self.before_question()
            yield

    async def ask(self, prompt: str) -> str:
        """One line typed after ``prompt`` was shown (without its newline); "" at EOF."""
        self._start_reader()
        while True:  # drop what was typed before this prompt was on screen
            try:
                self._remember(self._receive.receive_nowait())
            except anyio.WouldBlock:
                break
        if self._eof:
            return ""
        sys.stderr.write(prompt)
        sys.stderr.flush()
        line = self._remember(await self._receive.receive())
        return line.rstrip("\n")

    def _remember(self, line: str) -> str:
        self._eof = self._eof or line == ""
        return line

    def _start_reader(self) -> None:
        if self._reader is not None:
            return
        portal = self._portal
        if portal is None:
            raise RuntimeError("Use the Console as `async with Console() as console`.")
        stdin, send = self._stdin or sys.stdin, self._send

        def read() -> None:
            # A daemon thread: a read blocked at exit must not keep the process alive.
            while True:
                line = stdin.readline()
                try:
                    portal.call(send.send_nowait, line)
                except Exception:  # the run is over: nobody waits for answers any more
                    return
                if not line:
                    return

        self._reader = threading.Thread(target=read, name="acp-console", daemon=True)
        self._reader.start()


def _say(text: str) -> None:
    print(text, file=sys.stderr)


def permission_asker(session: Session, console: Console) -> perms.Asker:
    """Show what is being approved (the tool call as text, its raw input), read a choice.
    One request at a time holds the terminal; one cancelled meanwhile (a timeout, the
    agent's withdrawal) ends its question (the broker stops waiting for it)."""

    async def ask(request: PermissionRequest) -> None:
        async with console.question():
            if not request.pending:
                return
            _say(permission_question(session, request))
            try:
                while request.pending:
                    choice = read_choice(request, await console.ask("Choice: "))
                    if not request.pending:
                        break
                    if choice == CANCEL:
                        session.permissions.cancel(request.key, by="user")
                    elif isinstance(choice, perms.PermissionOption):
                        second = always_question(request, choice)
                        if second is not None:
                            _say(second)
                            if not read_yes(await console.ask("[y/N]: ")):
                                continue  # no: back to the question's options
                        session.permissions.choose(request.key, choice.option_id)
                    else:
                        _say(retry(request))
            finally:
                if request.state == "cancelled" and request.decided_by != "user":
                    _say(f"\n{request.describe()}")

    return ask


def elicitation_asker(session: Session, console: Console) -> elicitation.Asker:
    """Fill in a form field by field (empty skips a field), or consent to open a URL."""

    async def ask(request: ElicitationRequest) -> None:
        async with console.question():
            if request.pending:
                await fill_in(request)

    async def fill_in(request: ElicitationRequest) -> None:
        broker = session.elicitations
        _say(f"\n{request.agent or 'The agent'} asks: {request.message}")
        if request.mode == "url" and request.url:
            scheme, host, rest = split_url(request.url)
            _say(f"  It wants you to open {scheme}[{host}]{rest}  (host: {host})")
            answer = await console.ask("Open it yourself? [y = accept / n = decline / c = cancel] ")
            answer = answer.strip().lower()
            if answer == "y":
                broker.accept(request.key)
            elif answer == "n":
                broker.decline(request.key)
            else:
                broker.cancel(request.key)
            return
        while request.pending:
            values: dict[str, Any] = {}
            for spec in request.fields:
                star = "*" if spec.required else ""
                raw = (await console.ask(f"  {spec.title}{star} ({spec.describe()}): ")).strip()
                if raw:
                    values[spec.name] = parse_field(spec.kind, raw)
            answer = (
                await console.ask("Send it? [y = accept / n = decline / c = cancel] ")
            ).strip()
            if answer.lower() == "n":
                broker.decline(request.key)
            elif answer.lower() != "y":
                broker.cancel(request.key)
            else:
                try:
                    broker.accept(request.key, values)
                except InvalidContent as exc:
                    for name, problem in exc.errors.items():
                        _say(f"  {name or 'form'}: {problem}")

    return ask


def parse_field(kind: str, raw: str) -> Any:
    """A typed value from what was typed (validation against the schema comes after)."""
    if kind == "boolean":
        return raw.lower() in ("y", "yes", "true", "1", "on")
    if kind == "integer":
        try:
            return int(raw)
        except ValueError:
            return raw
    if kind == "number":
        try:
            return float(raw)
        except ValueError:
            return raw
    if kind == "multi":
        return [part.strip() for part in raw.split(",") if part.strip()]
    return raw
