"""In-memory byte pipes: a client and an agent in one process (tests, replays)."""

from __future__ import annotations

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream


class _PipeReader(anyio.abc.ByteReceiveStream):
    def __init__(self, receive: MemoryObjectReceiveStream[bytes]) -> None:
        self._receive = receive
        self._buffer = b""

    async def receive(self, max_bytes: int = 65536) -> bytes:
        if not self._buffer:
            try:
                self._buffer = await self._receive.receive()
            except anyio.EndOfStream:
                raise
        data, self._buffer = self._buffer[:max_bytes], self._buffer[max_bytes:]
        return data

    async def aclose(self) -> None:
        await self._receive.aclose()


class _PipeWriter(anyio.abc.ByteSendStream):
    def __init__(self, send: MemoryObjectSendStream[bytes]) -> None:
        self._send = send

    async def send(self, item: bytes) -> None:
        if item:
            await self._send.send(item)

    async def aclose(self) -> None:
        await self._send.aclose()


def memory_pipe(buffer: int = 1024) -> tuple[anyio.abc.ByteReceiveStream, anyio.abc.ByteSendStream]:
    """A one-way byte pipe: what is sent on the second end is received on the first.

    Closing the sending end ends the receiving end (``EndOfStream``), like a pipe.
    """
    send, receive = anyio.create_memory_object_stream[bytes](buffer)
    return _PipeReader(receive), _PipeWriter(send)
