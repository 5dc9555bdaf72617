"""The agent loop: one thread per kernel with its own asyncio event loop.

It owns every agent subprocess and JSON-RPC connection, and it is the only thread
that writes widget traits once a turn has started (ipywidgets has no locks). Other
threads — the kernel's main thread, a subshell thread running a button callback —
only hand it work with :meth:`AgentLoop.submit` / :meth:`AgentLoop.post`.

Why a thread and not the kernel's own loop (measured, see docs/jupyter-notes.md): a turn keeps
streaming while the user runs other cells, and it can choose a subprocess-capable
loop on every platform.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import logging
import sys
import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio
import anyio.abc

log = logging.getLogger(__name__)

T = TypeVar("T")


class AgentLoop:
    """A daemon thread running an asyncio loop and a root task group."""

    def __init__(self, name: str = "acp-agent-loop") -> None:
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task_group: anyio.abc.TaskGroup | None = None
        self._stop: asyncio.Event | None = None
        self._error: BaseException | None = None
        # A copied context: on ipykernel 7.0.x a bare thread has no parent header and
        # loses its widget updates (ipykernel#1450).
        context = contextvars.copy_context()
        self._thread = threading.Thread(
            target=context.run, args=(self._main,), name=name, daemon=True
        )
        self._thread.start()
        self._ready.wait()
        if self._error is not None:
            raise RuntimeError("The agent loop could not start.") from self._error

    # ------------------------------------------------------------------ thread

    def _main(self) -> None:
        try:
            if sys.platform == "win32":  # subprocess support needs the proactor loop
                loop: asyncio.AbstractEventLoop = asyncio.ProactorEventLoop()
            else:
                loop = asyncio.new_event_loop()
            asyncio.set_event_loop(loop)
            self._loop = loop
            loop.run_until_complete(self._serve())
        except BaseException as exc:  # reported to the starting thread
            self._error = exc
            self._ready.set()
        finally:
            if self._loop is not None:
                self._loop.close()

    async def _serve(self) -> None:
        self._stop = asyncio.Event()
        async with anyio.create_task_group() as task_group:
            self._task_group = task_group
            self._ready.set()
            await self._stop.wait()
            task_group.cancel_scope.cancel()

    # ------------------------------------------------------------------ state

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        assert self._loop is not None
        return self._loop

    @property
    def alive(self) -> bool:
        return self._thread.is_alive() and self._loop is not None and not self._loop.is_closed()

    def in_loop_thread(self) -> bool:
        return threading.current_thread() is self._thread

    # ------------------------------------------------------------------ handing over work

    def post(self, func: Callable[..., Any], *args: Any) -> bool:
        """Run ``func(*args)`` on the loop thread soon; False if the loop is gone.

        Safe from any thread, including after the loop stopped (clicks can arrive late).
        """
        loop = self._loop
        if loop is None or loop.is_closed():
            return False
        try:
            loop.call_soon_threadsafe(func, *args)
        except RuntimeError:  # closed between the check and the call
            return False
        return True

    def submit(self, func: Callable[..., Awaitable[T]], *args: Any) -> concurrent.futures.Future[T]:
        """Run ``await func(*args)`` as a task of the loop's task group; a future of its result."""
        future: concurrent.futures.Future[T] = concurrent.futures.Future()

        async def runner() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                result = await func(*args)
            except BaseException as exc:
                future.set_exception(exc)
                if not isinstance(exc, Exception):
                    raise
            else:
                future.set_result(result)

        def start() -> None:
            assert self._task_group is not None
            self._task_group.start_soon(runner)

        if not self.post(start):
            future.set_exception(RuntimeError("The agent loop has stopped."))
        return future

    def call_later(self, delay: float, func: Callable[[], Any]) -> Any:
        """Schedule ``func`` on the loop (must be called on the loop thread)."""
        return self.loop.call_later(delay, func)

    def run(self, func: Callable[..., Awaitable[T]], *args: Any, timeout: float | None = None) -> T:
        """Run a coroutine function on the loop and block until it returns (not from the loop thread)."""
        return self.submit(func, *args).result(timeout)

    def stop(self, timeout: float = 10.0) -> None:
        """Cancel every task (their cleanup runs: agents and terminals are shut down) and end the thread."""
        stop = self._stop
        if stop is not None and self.post(stop.set):
            self._thread.join(timeout)
