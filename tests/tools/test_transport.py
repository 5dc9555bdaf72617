"""The notebook tools' MCP framing over the relay's socket: one unterminated 160 MB line
cost 21 s of kernel CPU (the whole buffer was searched again for every 64 KB read, with
no maximum). Lines are now cut as the ACP peer's are: bounded, in linear time, and an
over-long one is answered with an error while the connection goes on."""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Iterator
from typing import Any

import anyio
import mcp_types
import pytest

from acp_notebook.notebook.tools.transport import MAX_LINE_BYTES, message_streams

pytestmark = pytest.mark.anyio

CHUNK = 1 << 16


class ChunkStream:
    """A byte stream (below the transport) that yields its input in 64 KB reads, made on
    demand, and records what was sent back."""

    def __init__(self, chunks: Iterator[bytes]) -> None:
        self._chunks = chunks
        self.sent: list[bytes] = []

    async def receive(self, max_bytes: int = CHUNK) -> bytes:
        await anyio.lowlevel.checkpoint()
        for chunk in self._chunks:
            return chunk
        raise anyio.EndOfStream

    async def send(self, data: bytes) -> None:
        self.sent.append(data)

    def replies(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in b"".join(self.sent).splitlines()]

    async def aclose(self) -> None:
        pass


def request(request_id: int, method: str, **params: Any) -> bytes:
    message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    return json.dumps(message).encode() + b"\n"


def long_call(request_id: int, size: int) -> Iterator[bytes]:
    """A tools/call line of ``size`` bytes and more (its code argument), in 64 KB pieces."""
    head = b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"code":"' % request_id
    yield head
    for _ in range(size // CHUNK + 1):
        yield b"x" * CHUNK
    yield b'"}}\n'


async def read_all(stream: ChunkStream, **options: Any) -> list[Any]:
    got: list[Any] = []
    async with message_streams(stream, **options) as (incoming, _outgoing):  # type: ignore[arg-type]
        async for item in incoming:
            got.append(item)
    return got


async def test_an_over_long_line_gets_an_error_and_the_next_message_is_served() -> None:
    def chunks() -> Iterator[bytes]:
        yield from long_call(7, MAX_LINE_BYTES)
        yield request(8, "ping")

    stream = ChunkStream(chunks())
    got = await read_all(stream)

    assert [item.message.id for item in got] == [8]  # the long one never reached the server
    assert isinstance(got[0].message, mcp_types.JSONRPCRequest)
    assert stream.replies() == [
        {
            "jsonrpc": "2.0",
            "id": 7,
            "error": {
                "code": mcp_types.INVALID_REQUEST,
                "message": "The message was longer than the notebook tools read (32 MiB) and "
                "was skipped; send smaller arguments.",
            },
        }
    ]


async def test_an_unterminated_line_is_never_held_past_the_bound() -> None:
    limit = 1 << 20
    stream = ChunkStream(long_call(3, 16 * limit))
    tracemalloc.start()
    try:
        got = await read_all(stream, max_line_bytes=limit)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert got == []
    assert [reply["id"] for reply in stream.replies()] == [3]
    assert peak < 3 * limit, f"the reader held {peak:,} bytes of a line bounded at {limit:,}"


async def test_messages_split_across_reads_and_sharing_one_arrive_in_order() -> None:
    data = request(1, "ping") + request(2, "tools/list") + b"\n  \n" + request(3, "ping")
    stream = ChunkStream(iter([data[:5], data[5:70], data[70:]]))
    got = await read_all(stream)
    assert [item.message.id for item in got] == [1, 2, 3]
    assert stream.replies() == []
