"""Helpers shared by the client tests that drive real agent subprocesses."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

from acp_notebook.protocol.conformance import schema_errors
from acp_notebook.protocol.jsonrpc import TraceEvent

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

    def schema_errors_of_client(self) -> list[str]:
        """Schema errors of every message the client sent (responses checked against the
        result type of the agent request they answer)."""
        asked: dict[Any, str] = {}
        for message in self.received():
            if "method" in message and "id" in message:
                asked[repr(message["id"])] = message["method"]
        errors = []
        for message in self.sent():
            method = None if "method" in message else asked.get(repr(message.get("id")))
            for error in schema_errors(message, sender="client", request_method=method):
                errors.append(f"{json_line(message)}: {error}")
        return errors


def json_line(message: Any) -> str:
    import json

    text = json.dumps(message, sort_keys=True)
    return text if len(text) < 300 else text[:299] + "…"


async def wait_until(predicate: Callable[[], bool], timeout: float = SAFETY) -> None:
    """Poll ``predicate`` until it holds; fail after ``timeout`` (a safety net)."""
    with anyio.fail_after(timeout):
        while not predicate():
            await anyio.sleep(0.01)
