"""MCP's stdio framing (one JSON-RPC message per line) over any byte stream.

The relay pipes the agent's stdio to the kernel byte for byte, so the kernel end of
the socket speaks exactly what ``mcp.server.stdio`` speaks on a process's stdio; this
is that transport for an anyio byte stream. Lines are cut by the ACP peer's reader
(:func:`~acp_notebook.protocol.framing.read_lines`): in linear time, and never more than
:data:`MAX_LINE_BYTES` held. A longer line is skipped as it arrives and answered with a
JSON-RPC error (its id when the line's start names one), and the connection goes on.
A line that is not a JSON-RPC message reaches the server as an exception, which answers
it with an error instead of dropping the connection.

An observer (the notebook's message log) sees every line both ways as a
:class:`~acp_notebook.protocol.trace_event.TraceEvent` on the server's channel
(``mcp:NAME``), so the inspector draws the tools' traffic beside the ACP messages.
"""

from __future__ import annotations

import contextlib
import json
import re
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import Any

import anyio
import anyio.abc
import mcp_types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage

from ...protocol.framing import read_lines
from ...protocol.trace_event import Observer, TraceEvent

Incoming = SessionMessage | Exception

#: The longest message the notebook tools read: their arguments are code and cell
#: sources, far below this; the kernel never holds more of one line than this.
MAX_LINE_BYTES = 32 << 20

# The request's id at the top of a line cut for its length, before its params (an "id"
# after them could be a nested one).
_ID = re.compile(rb'^\s*\{[^{}\[\]]*?"id"\s*:\s*(-?\d{1,18}|"[^"\\]{0,200}")')


def _parse(line: bytes) -> Incoming:
    try:
        return SessionMessage(mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except Exception as exc:
        return exc


def traced(direction: str, line: bytes, channel: str) -> TraceEvent:
    """One line as an observer sees it (a line that is not a JSON object: ``invalid``)."""
    try:
        message = json.loads(line)
    except ValueError:
        message = None
    if not isinstance(message, dict):
        return replace(TraceEvent.received_invalid(line), channel=channel)
    send_or_recv: Any = direction
    return TraceEvent(send_or_recv, time.time(), message, size=len(line), channel=channel)


def _tell(observe: Observer | None, direction: str, line: bytes, channel: str) -> None:
    if observe is not None:
        with contextlib.suppress(Exception):  # an observer must never stop the traffic
            observe(traced(direction, line, channel))


def too_long(start: bytes, limit: int) -> SessionMessage:
    """The error answering a line longer than ``limit`` that began with ``start``."""
    found = _ID.match(start[:4096])
    request_id: int | str | None = None
    if found is not None:
        raw = found.group(1)
        request_id = raw[1:-1].decode("utf-8", "replace") if raw[:1] == b'"' else int(raw)
    message = (
        f"The message was longer than the notebook tools read ({limit >> 20} MiB) and was "
        "skipped; send smaller arguments."
    )
    return SessionMessage(
        mcp_types.JSONRPCError(
            jsonrpc="2.0",
            id=request_id,
            error=mcp_types.ErrorData(code=mcp_types.INVALID_REQUEST, message=message),
        )
    )


class _Lines(anyio.abc.ByteReceiveStream):
    """The stream as :func:`read_lines` reads it: before each read, the lines of the
    previous one are delivered (awaiting the server), so at most one read's lines wait."""

    def __init__(
        self,
        stream: anyio.abc.ByteReceiveStream,
        received: bytes,
        incoming: MemoryObjectSendStream[Incoming],
        replies: MemoryObjectSendStream[SessionMessage],
        limit: int,
        observe: Observer | None = None,
        channel: str = "mcp",
    ) -> None:
        self._stream = stream
        self._received = received
        self._incoming = incoming
        self._replies = replies
        self._limit = limit
        self._observe = observe
        self._channel = channel
        #: Messages for the server, and errors for the agent, in the order read.
        self._ready: list[tuple[bool, Incoming]] = []

    def line(self, line: bytes) -> None:
        if line.strip():
            _tell(self._observe, "recv", line.strip(), self._channel)
            self._ready.append((True, _parse(line.strip())))

    def too_long(self, start: bytes) -> None:
        self._ready.append((False, too_long(start, self._limit)))

    async def deliver(self) -> None:
        ready, self._ready = self._ready, []
        for to_server, item in ready:
            if to_server:
                await self._incoming.send(item)
            elif isinstance(item, SessionMessage):
                await self._replies.send(item)

    async def receive(self, max_bytes: int = 65536) -> bytes:
        await self.deliver()
        if self._received:
            data, self._received = self._received, b""
            return data
        return await self._stream.receive(max_bytes)

    async def aclose(self) -> None:
        await self._stream.aclose()


@asynccontextmanager
async def message_streams(
    stream: anyio.abc.ByteStream,
    received: bytes = b"",
    *,
    max_line_bytes: int = MAX_LINE_BYTES,
    observe: Observer | None = None,
    channel: str = "mcp",
) -> AsyncIterator[
    tuple[MemoryObjectReceiveStream[Incoming], MemoryObjectSendStream[SessionMessage]]
]:
    """The (read, write) message streams an MCP server runs on, over ``stream``.

    ``received`` is what was already read from ``stream`` (after the relay's hello).
    The read stream ends when ``stream`` does. ``observe`` sees each line read and
    written, as on ``channel``."""
    incoming_send, incoming = anyio.create_memory_object_stream[Incoming](0)
    outgoing, outgoing_receive = anyio.create_memory_object_stream[SessionMessage](0)

    async def read() -> None:
        async with incoming_send, outgoing.clone() as replies:
            lines = _Lines(
                stream, received, incoming_send, replies, max_line_bytes, observe, channel
            )
            await read_lines(
                lines,
                max_line_bytes=max_line_bytes,
                on_line=lines.line,
                on_too_long=lines.too_long,
            )
            with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                await lines.deliver()  # the last line, unless the server has gone

    async def write() -> None:
        async with outgoing_receive:
            async for message in outgoing_receive:
                data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                _tell(observe, "send", data.encode("utf-8"), channel)
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
