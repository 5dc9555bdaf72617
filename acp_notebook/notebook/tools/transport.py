"""MCP's stdio framing (one JSON-RPC message per line) over any byte stream.

The relay pipes the agent's stdio to the kernel byte for byte, so the kernel end of
the socket speaks exactly what ``mcp.server.stdio`` speaks on a process's stdio; this
is that transport for an anyio byte stream. Lines have no length limit; a line that is
not a JSON-RPC message reaches the server as an exception, which answers it with an
error instead of dropping the connection.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import anyio.abc
import mcp_types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage

Incoming = SessionMessage | Exception


def _parse(line: bytes) -> Incoming:
    try:
        return SessionMessage(mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except Exception as exc:
        return exc


@asynccontextmanager
async def message_streams(
    stream: anyio.abc.ByteStream, received: bytes = b""
) -> AsyncIterator[
    tuple[MemoryObjectReceiveStream[Incoming], MemoryObjectSendStream[SessionMessage]]
]:
    """The (read, write) message streams an MCP server runs on, over ``stream``.

    ``received`` is what was already read from ``stream`` (after the relay's hello).
    The read stream ends when ``stream`` does."""
    incoming_send, incoming = anyio.create_memory_object_stream[Incoming](0)
    outgoing, outgoing_receive = anyio.create_memory_object_stream[SessionMessage](0)

    async def read() -> None:
        buffer = bytearray(received)
        async with incoming_send:
            while True:
                while (end := buffer.find(b"\n")) >= 0:
                    line = bytes(buffer[:end]).strip()
                    del buffer[: end + 1]
                    if line:
                        await incoming_send.send(_parse(line))
                try:
                    buffer += await stream.receive()
                except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
                    return

    async def write() -> None:
        async with outgoing_receive:
            async for message in outgoing_receive:
                data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                try:
                    await stream.send(data.encode("utf-8") + b"\n")
                except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                    return

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(read)
        tasks.start_soon(write)
        try:
            yield incoming, outgoing
        finally:
            tasks.cancel_scope.cancel()
