"""A process's own stdin and stdout as the byte streams of a :class:`~.jsonrpc.Peer`.

For a program that *is* an agent (or relays one): the demo agent, a replayer, a relay.
:func:`serve_stdio` runs a server coroutine on them until stdin ends. Protocol messages
get a private duplicate of stdout, and fd 1 and ``sys.stdout`` are pointed at stderr, so
a stray ``print`` (ours or a library's) can never corrupt the protocol stream (spec:
agents MUST NOT write non-ACP data to stdout).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import threading
from collections.abc import Awaitable, Callable

import anyio
import anyio.abc
import anyio.to_thread

__all__ = ["FdSendStream", "StdinStream", "claim_stdout", "serve_stdio"]

#: Exit code after Ctrl-C (128 + SIGINT), as shells report it.
EXIT_INTERRUPTED = 130

Server = Callable[[anyio.abc.ByteReceiveStream, anyio.abc.ByteSendStream], Awaitable[None]]


class StdinStream(anyio.abc.ByteReceiveStream):
    """A file descriptor (standard input) as a byte stream, read by a daemon thread.

    A daemon thread (rather than an anyio worker thread) because a read blocked on an
    open terminal or pipe must never keep the process from exiting. Works for pipes,
    terminals and regular files alike. Needs the asyncio backend.
    """

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._queue: asyncio.Queue[bytes] | None = None
        self._slots = threading.Semaphore(8)  # chunks read ahead: bounded memory
        self._buffer = b""
        self._ended = False

    def _start(self) -> asyncio.Queue[bytes]:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[bytes] = asyncio.Queue()

        def pump() -> None:
            while True:
                self._slots.acquire()
                try:
                    data = os.read(self._fd, 1 << 16)
                except OSError:
                    data = b""
                try:
                    loop.call_soon_threadsafe(queue.put_nowait, data)
                except RuntimeError:  # the loop is closed: the process is exiting
                    return
                if not data:
                    return

        threading.Thread(target=pump, name=f"stdin-fd{self._fd}", daemon=True).start()
        return queue

    async def receive(self, max_bytes: int = 65536) -> bytes:
        if not self._buffer:
            if self._ended:
                raise anyio.EndOfStream
            if self._queue is None:
                self._queue = self._start()
            data = await self._queue.get()
            self._slots.release()
            if not data:
                self._ended = True
                raise anyio.EndOfStream
            self._buffer = data
        data, self._buffer = self._buffer[:max_bytes], self._buffer[max_bytes:]
        return data

    async def aclose(self) -> None:
        self._ended = True


class FdSendStream(anyio.abc.ByteSendStream):
    """A file descriptor as a byte stream: every message is written whole, unbuffered
    (the other side sees it at once), from a worker thread so that a reader that is
    slow never blocks the event loop."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    def _write_all(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]

    async def send(self, item: bytes) -> None:
        await anyio.to_thread.run_sync(self._write_all, item)

    async def aclose(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self._fd)


def claim_stdout() -> int:
    """A private duplicate of stdout for protocol messages; fd 1 and ``sys.stdout`` now
    go to stderr, so a stray ``print`` can never corrupt the protocol stream."""
    sys.stdout.flush()
    protocol_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return protocol_fd


def serve_stdio(server: Server) -> int:
    """Run ``server(stdin, stdout)`` on asyncio until it returns; the exit code (0, or
    130 after Ctrl-C)."""
    protocol_fd = claim_stdout()
    try:
        anyio.run(
            server, StdinStream(sys.stdin.fileno()), FdSendStream(protocol_fd), backend="asyncio"
        )
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    return 0
