"""Running work on the kernel's main thread, which owns the user's namespace.

Tool calls arrive on the agent loop thread; the code they run (the user's objects,
matplotlib, IPython's display machinery) is only safe on the main thread, where the
user's own cells run. :class:`MainThreadRunner` queues each job and gets it run there
in whichever state the main thread is in:

- **idle kernel**: the kernel's asyncio loop, captured when the runner is made (on the
  main thread, inside a cell), runs the queue from a ``call_soon_threadsafe`` callback;
- **a cell awaiting** (``await acp.ask(...)``, any top-level ``await``): ipykernel runs
  such a cell as a task on that same loop, so every ``await`` lets the callback run —
  nothing more is needed;
- **a cell blocked in a synchronous wait** (headless ``TurnHandle.wait()``): the loop
  is not running, so that wait must call :meth:`MainThreadRunner.wait` (or
  :meth:`MainThreadRunner.drain` at every wake-up) to run the queue.

A job never runs on the agent loop thread; while a synchronous cell computes, jobs
wait for it to finish, as a cell queued behind it would.

The agent's code in a job (``run_code``) can be interrupted from another thread as the
kernel's interrupt button does it (:class:`Interruption`): a ``SIGINT`` to the main
thread, whose handler raises ``KeyboardInterrupt`` in that code. Its turn being cancelled
(``-t`` ran out, Cancel) does so, through :meth:`MainThreadRunner.interrupt`.

A signal that lands after the main thread released the GIL for a blocking call
(``time.sleep``, a lock) but before the call began makes its handler due without ending
the call: Python runs handlers only when the call returns. So until the handler has run,
the main thread is woken every :data:`_WAKE_SECONDS` by :data:`_WAKE`, a signal whose own
handler does nothing: the call it interrupts runs the due ``SIGINT`` handler, then resumes.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import queue
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")

#: How long code that finished just as it was interrupted waits for the signal already on
#: its way (its handler must run here, not in whatever the main thread does next).
_ABSORB_SECONDS = 1.0

#: What wakes the main thread until a due ``SIGINT`` handler has run (see the module
#: docstring): a signal ignored by default, so one arriving after its handler was put
#: back does nothing.
_WAKE = signal.SIGURG
_WAKE_SECONDS = 0.05


class Interruption:
    """Code that one tool call runs on the main thread, interruptible from any thread as
    a kernel interrupt would: ``KeyboardInterrupt`` raised in it, even in a ``sleep``.

    The main thread runs the code inside :meth:`running`; :meth:`interrupt` (any thread)
    signals it at most once, and only while it runs. A signal that arrives after the code
    finished is absorbed there, so it never lands in the next thing the main thread does.
    """

    def __init__(self, owner: str) -> None:
        #: Whose code it is (the session's name).
        self.owner = owner
        #: Why it was interrupted, once :meth:`interrupt` signalled it.
        self.reason: str | None = None
        #: The code itself ended with the interrupt (not after it had finished).
        self.hit = False
        self._lock = threading.Lock()
        self._running = False
        #: The ``SIGINT`` handler ran.
        self._handled = threading.Event()
        #: Done when the ``with`` block of :meth:`MainThreadRunner.interruptible` that made
        #: it has ended (the tool call that ran the code goes on from there).
        self.ended: concurrent.futures.Future[None] = concurrent.futures.Future()

    @contextmanager
    def running(self) -> Iterator[None]:
        """Run the code of the ``with`` block interruptibly (main thread only)."""
        saved = signal.signal(signal.SIGINT, self._on_signal)
        saved_wake = signal.signal(_WAKE, _wake_only)
        with self._lock:
            self._running = True
        try:
            yield
        except KeyboardInterrupt:
            self.hit = self.reason is not None
            raise
        finally:
            self._leave(saved)
            signal.signal(_WAKE, saved_wake)

    def interrupt(self, reason: str) -> bool:
        """Interrupt the code if it is running now (any thread); whether it was signalled."""
        with self._lock:
            if not self._running or self.reason is not None:
                return False
            self.reason = reason
            self._signal(signal.SIGINT)
        waker = threading.Thread(target=self._wake_until_handled, name="acp-wake", daemon=True)
        waker.start()
        return True

    def _signal(self, signum: int) -> None:
        main = threading.main_thread().ident
        assert main is not None
        signal.pthread_kill(main, signum)

    def _wake_until_handled(self) -> None:
        while not self._handled.wait(_WAKE_SECONDS):
            with self._lock:
                if not self._running:
                    return
                self._signal(_WAKE)

    def _on_signal(self, signum: int, frame: object) -> None:
        self._handled.set()
        raise KeyboardInterrupt

    def _leave(self, saved: Any) -> None:
        while True:
            try:
                with self._lock:
                    self._running = False
                deadline = time.monotonic() + _ABSORB_SECONDS
                while self.reason is not None and not self._handled.is_set():
                    if time.monotonic() > deadline:
                        break
                    time.sleep(0.005)  # the signal's handler raises here
                signal.signal(signal.SIGINT, saved)
                return
            except KeyboardInterrupt:
                pass  # the signal on its way, absorbed: its handler set _handled


def _wake_only(signum: int, frame: object) -> None:
    """:data:`_WAKE`'s handler: the signal only ends a blocking call (see the module docstring)."""


@dataclass(frozen=True)
class _Job(Generic[T]):
    func: Callable[..., T]
    args: tuple[Any, ...]
    future: concurrent.futures.Future[T]

    def run(self) -> None:
        if not self.future.set_running_or_notify_cancel():
            return  # the tool call was cancelled before its turn came
        try:
            result = self.func(*self.args)
        except BaseException as exc:
            # Even a KeyboardInterrupt (the user interrupting this job) ends only the
            # job: raised out of a loop callback it would stop the kernel's loop.
            self.future.set_exception(exc)
        else:
            self.future.set_result(result)


class MainThreadRunner:
    """Runs jobs submitted from any thread on the main thread (see the module docstring)."""

    def __init__(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        """Make it on the main thread; ``loop`` defaults to the running loop (the kernel's,
        inside a cell). Without a loop, jobs run only in :meth:`drain` and :meth:`wait`."""
        if threading.current_thread() is not threading.main_thread():
            raise RuntimeError("A MainThreadRunner must be made on the main thread.")
        if loop is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                loop = None
        self.loop = loop
        #: Jobs, and ``None`` wake-ups for :meth:`wait`.
        self._jobs: queue.SimpleQueue[_Job[Any] | None] = queue.SimpleQueue()
        self._interruptions: set[Interruption] = set()
        self._interruptions_lock = threading.Lock()

    @contextmanager
    def interruptible(self, owner: str) -> Iterator[Interruption]:
        """An :class:`Interruption` for code of ``owner`` that a job will run, which
        :meth:`interrupt` reaches while the ``with`` block lasts (any thread)."""
        interruption = Interruption(owner)
        with self._interruptions_lock:
            self._interruptions.add(interruption)
        try:
            yield interruption
        finally:
            with self._interruptions_lock:
                self._interruptions.discard(interruption)
            interruption.ended.set_result(None)

    def interrupt(self, owner: str, reason: str) -> bool:
        """Interrupt ``owner``'s code running on the main thread now (any thread), as a
        kernel interrupt would; whether some was."""
        with self._interruptions_lock:
            mine = [i for i in self._interruptions if i.owner == owner]
        return any([interruption.interrupt(reason) for interruption in mine])

    async def ended(self, owner: str) -> None:
        """Returns once every ``with`` block of :meth:`interruptible` open now for ``owner``
        has ended (awaited on an asyncio loop, e.g. after :meth:`interrupt`)."""
        with self._interruptions_lock:
            mine = [i.ended for i in self._interruptions if i.owner == owner]
        for ended in mine:
            await asyncio.wrap_future(ended)

    def submit(self, func: Callable[..., T], *args: Any) -> concurrent.futures.Future[T]:
        """Queue ``func(*args)`` for the main thread (from any thread); a future of its result."""
        job = _Job(func, args, concurrent.futures.Future())
        self._jobs.put(job)
        loop = self.loop
        if loop is not None:
            try:
                loop.call_soon_threadsafe(self.drain)
            except RuntimeError:  # the kernel's loop is closed: only a wait() can run it now
                log.debug("the kernel loop is closed; job left for drain()")
        return job.future

    async def run(self, func: Callable[..., T], *args: Any) -> T:
        """``func(*args)`` on the main thread, awaited from another thread's asyncio loop.

        Cancelling the await before the job started means it never runs."""
        return await asyncio.wrap_future(self.submit(func, *args))

    def drain(self) -> int:
        """Run every queued job now (main thread only); how many ran."""
        if threading.current_thread() is not threading.main_thread():
            raise RuntimeError("MainThreadRunner.drain() runs jobs on the main thread only.")
        ran = 0
        while True:
            try:
                job = self._jobs.get_nowait()
            except queue.Empty:
                return ran
            if job is not None:
                job.run()
                ran += 1

    def wait(self, future: concurrent.futures.Future[Any], timeout: float | None = None) -> bool:
        """Block the main thread until ``future`` is done, running jobs as they arrive;
        False if ``timeout`` passed first. A kernel interrupt raises KeyboardInterrupt."""
        if threading.current_thread() is not threading.main_thread():
            raise RuntimeError("MainThreadRunner.wait() blocks the main thread only.")
        future.add_done_callback(lambda _: self._jobs.put(None))
        deadline = None if timeout is None else time.monotonic() + timeout
        while not future.done():
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                return False
            try:
                job = self._jobs.get(timeout=remaining)
            except queue.Empty:
                return future.done()
            if job is not None:
                job.run()
        return True
