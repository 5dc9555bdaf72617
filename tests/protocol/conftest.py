"""Fixtures and helpers for the JSON-RPC and subprocess tests.

Tests run on asyncio only (the kernel's loop); ``@pytest.mark.anyio`` marks them.
Peers under test are wired either to a :class:`RawRemote` (the other end speaking raw
bytes, so malformed input and exact ids can be sent) or to a scripted agent from
``tests/agents`` run with ``sys.executable``.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import pytest

from acp_notebook.protocol.jsonrpc import Peer, TraceEvent
from acp_notebook.protocol.memory import memory_pipe

AGENTS = Path(__file__).resolve().parent.parent / "agents"


def agent_command(script: str, *args: str) -> list[str]:
    """argv running ``tests/agents/<script>`` with this interpreter."""
    return [sys.executable, str(AGENTS / script), *args]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class RawRemote:
    """The far end of a :class:`Peer` under test, reading and writing raw lines."""

    def __init__(
        self, send: anyio.abc.ByteSendStream, receive: anyio.abc.ByteReceiveStream
    ) -> None:
        self._send = send
        self._receive = receive
        self._buffer = b""

    async def send_raw(self, data: bytes) -> None:
        await self._send.send(data)

    async def send(self, message: Any) -> None:
        await self._send.send(json.dumps(message).encode() + b"\n")

    async def read_line(self) -> bytes:
        while b"\n" not in self._buffer:
            self._buffer += await self._receive.receive()
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    async def read(self) -> dict[str, Any]:
        """The next message the peer wrote (a dict, parsed from exactly one line)."""
        return json.loads(await self.read_line())

    async def close(self) -> None:
        """End the peer's incoming stream (like an agent closing its stdout)."""
        await self._send.aclose()


@contextlib.asynccontextmanager
async def peer_with_remote(**peer_kwargs: Any) -> AsyncIterator[tuple[Peer, RawRemote]]:
    """A running :class:`Peer` wired to a :class:`RawRemote` through in-memory pipes."""
    peer_in, remote_out = memory_pipe()
    remote_in, peer_out = memory_pipe()
    peer = Peer(peer_in, peer_out, name="under-test", **peer_kwargs)
    remote = RawRemote(remote_out, remote_in)
    async with anyio.create_task_group() as task_group:
        task_group.start_soon(peer.run)
        try:
            yield peer, remote
        finally:
            task_group.cancel_scope.cancel()


class Recorder:
    """An observer keeping every :class:`TraceEvent`."""

    def __init__(self) -> None:
        self.events: list[TraceEvent] = []

    def __call__(self, event: TraceEvent) -> None:
        self.events.append(event)

    def messages(self, direction: str) -> list[dict[str, Any]]:
        return [
            e.message for e in self.events if e.direction == direction and e.message is not None
        ]

    @property
    def invalid(self) -> list[TraceEvent]:
        return [e for e in self.events if e.message is None]


@pytest.fixture
def connect() -> Any:
    """``async with connect(**peer_kwargs) as (peer, remote)``: see :func:`peer_with_remote`."""
    return peer_with_remote


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def agent_argv() -> Any:
    """``agent_argv("script.py", *args)``: see :func:`agent_command`."""
    return agent_command
