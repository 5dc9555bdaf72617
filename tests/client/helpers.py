"""Helpers shared by the client tests: agent command lines, a wire recorder, and an
in-process fake agent for what no real agent sends."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, Literal

import anyio

from acp_notebook.client import ClientConnection, Session
from acp_notebook.client.decision import Turn
from acp_notebook.protocol import models as m
from acp_notebook.protocol.conformance import schema_errors
from acp_notebook.protocol.jsonrpc import Peer, TraceEvent
from acp_notebook.protocol.memory import memory_pipe

AGENTS = Path(__file__).resolve().parent.parent / "agents"
DEMO = [sys.executable, "-m", "acp_notebook.agents.demo"]
#: A safety net against hangs, never a performance bound.
SAFETY = 30.0


def agent(script: str, *args: str) -> list[str]:
    """argv running ``tests/agents/<script>`` with this interpreter."""
    return [sys.executable, str(AGENTS / script), *args]


class Wire:
    """An observer keeping every message the client sent and received."""

    def __init__(self) -> None:
        self.events: list[TraceEvent] = []

    def __call__(self, event: TraceEvent) -> None:
        self.events.append(event)

    def sent(self) -> list[dict[str, Any]]:
        return [e.message for e in self.events if e.direction == "send" and e.message is not None]

    def received(self) -> list[dict[str, Any]]:
        return [e.message for e in self.events if e.direction == "recv" and e.message is not None]

    def sent_requests(self, method: str) -> list[dict[str, Any]]:
        return [m for m in self.sent() if m.get("method") == method and "id" in m]

    def sent_notifications(self, method: str) -> list[dict[str, Any]]:
        return [m for m in self.sent() if m.get("method") == method and "id" not in m]

    def methods_sent(self) -> list[str]:
        return [m["method"] for m in self.sent() if "method" in m]

    def index(self, predicate: Callable[[TraceEvent], bool]) -> int:
        """Position of the first event matching ``predicate`` (ValueError if none)."""
        for number, event in enumerate(self.events):
            if predicate(event):
                return number
        raise ValueError("no such event")

    def schema_errors_of(self, sender: Literal["client", "agent"]) -> list[str]:
        """Schema errors of every message ``sender`` wrote (an answer is checked against
        the result type of the request it answers)."""
        written, read = (
            (self.sent(), self.received()) if sender == "client" else (self.received(), self.sent())
        )
        asked = {repr(m["id"]): m["method"] for m in read if "method" in m and "id" in m}
        errors = []
        for message in written:
            method = None if "method" in message else asked.get(repr(message.get("id")))
            for error in schema_errors(message, sender=sender, request_method=method):
                errors.append(f"{json_line(message)}: {error}")
        return errors

    def schema_errors_of_client(self) -> list[str]:
        return self.schema_errors_of("client")


def json_line(message: Any) -> str:
    import json

    text = json.dumps(message, sort_keys=True)
    return text if len(text) < 300 else text[:299] + "…"


async def wait_until(predicate: Callable[[], bool], timeout: float = SAFETY) -> None:
    """Poll ``predicate`` until it holds; fail after ``timeout`` (a safety net)."""
    with anyio.fail_after(timeout):
        while not predicate():
            await anyio.sleep(0.01)


@contextlib.asynccontextmanager
async def fake_agent(
    capabilities: m.ClientCapabilities | None = None,
    *,
    handlers: object | None = None,
    initialize: dict[str, Any] | None = None,
) -> AsyncIterator[tuple[ClientConnection, Peer, Wire]]:
    """An initialized ClientConnection over memory pipes to a bare Peer that plays the
    agent: it answers `initialize` (with ``initialize`` added to the answer), and
    `session/new` with the id ``s1``; the test sends the agent's requests with
    ``agent.request(...)`` and replaces its handlers with ``agent.handle_request``."""
    client_in, agent_out = memory_pipe()
    agent_in, client_out = memory_pipe()
    agent = Peer(agent_in, agent_out, name="fake-agent")
    agent.handle_request(
        "initialize", lambda p: _async({"protocolVersion": 1, **(initialize or {})})
    )
    agent.handle_request("session/new", lambda p: _async({"sessionId": "s1"}))
    wire = Wire()
    peer = Peer(client_in, client_out, name="client")
    peer.add_observer(wire)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(agent.run)
        async with ClientConnection.over(peer, name="fake", handlers=handlers) as conn:
            with anyio.fail_after(SAFETY):
                await conn.initialize(capabilities)
                yield conn, agent, wire
        await agent.aclose()
        tasks.cancel_scope.cancel()


def turn_running(session: Session) -> None:
    """Let ``session`` serve its agent's writes and commands as in a turn: between turns
    nothing is served (``client/decision.py``), and a bare fake agent sends its requests
    without a prompt. For tests of what serves a request, not of when it may be served."""
    session.permissions.turn = lambda: Turn(0, session.permissions.policy)


async def _async(value: Any) -> Any:
    return value
