"""The agent side typed like the client: the `Agent` protocol, `serve_agent`, the demo agent."""

from __future__ import annotations

import inspect
from typing import Any

import anyio
import pytest

from acp_notebook.agents.demo.server import DemoAgent
from acp_notebook.agents.interface import Agent, serve_agent
from acp_notebook.protocol import models as m
from acp_notebook.protocol.errors import INVALID_PARAMS, RpcError
from acp_notebook.protocol.jsonrpc import Peer
from acp_notebook.protocol.memory import memory_pipe

HANDLERS = [
    name
    for name, value in vars(Agent).items()
    if not name.startswith("_") and inspect.isfunction(value)
]


class Registrations:
    """Stands in for a Peer: records which methods are served."""

    def __init__(self) -> None:
        self.requests: set[str] = set()
        self.notifications: set[str] = set()

    def handle_request(self, method: str, handler: Any) -> None:
        self.requests.add(method)

    def handle_notification(self, method: str, handler: Any) -> None:
        self.notifications.add(method)


def test_serve_agent_serves_every_method_the_schema_gives_an_agent() -> None:
    served = Registrations()
    serve_agent(served, object())  # type: ignore[arg-type]
    assert served.requests | served.notifications == set(m.AGENT_METHODS)
    assert served.notifications == {"session/cancel"}
    assert len(HANDLERS) == len(m.AGENT_METHODS)


@pytest.mark.parametrize("name", HANDLERS)
def test_the_demo_agent_defines_each_agent_method_as_the_protocol_does(name: str) -> None:
    """The demo's handlers were `_initialize(params: Any) -> Any`, one per wire method by string."""
    expected, actual = getattr(Agent, name), getattr(DemoAgent, name, None)
    assert actual is not None
    assert inspect.iscoroutinefunction(actual) == inspect.iscoroutinefunction(expected)
    assert list(inspect.signature(actual).parameters)[:1] == ["self"]
    assert len(inspect.signature(actual).parameters) == len(inspect.signature(expected).parameters)


class FakeAgent:
    """A plain class is an agent: only the methods this test asks for."""

    def __init__(self) -> None:
        self.seen: list[Any] = []

    async def initialize(self, request: m.InitializeRequest) -> m.InitializeResponse:
        self.seen.append(request)
        return m.InitializeResponse(
            protocol_version=1, agent_info=m.Implementation(name="fake", version="0")
        )

    async def list_sessions(self, request: m.ListSessionsRequest) -> m.ListSessionsResponse:
        self.seen.append(request)
        return m.ListSessionsResponse(sessions=[])

    def cancel(self, notification: m.CancelNotification) -> None:
        self.seen.append(notification)


@pytest.mark.anyio
async def test_a_handler_gets_its_params_as_a_model_and_its_model_goes_out_as_wire_json() -> None:
    client_in, agent_out = memory_pipe()
    agent_in, client_out = memory_pipe()
    agent_peer = Peer(agent_in, agent_out, name="agent")
    client = Peer(client_in, client_out, name="client")
    fake = FakeAgent()
    serve_agent(agent_peer, fake)  # type: ignore[arg-type]
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(agent_peer.run)
        tasks.start_soon(client.run)
        with anyio.fail_after(10):
            init = {"protocolVersion": 1, "clientCapabilities": {"terminal": True}}
            answer = await client.request("initialize", init)
            listed = await client.request("session/list", None)  # all-optional params left out
            with pytest.raises(RpcError) as bad:
                await client.request("initialize", {"protocolVersion": "one"})
            await client.notify("session/cancel", {"sessionId": "s1"})
            await client.request("session/list", {"cwd": "/w"})  # after the notification
        tasks.cancel_scope.cancel()
    assert answer == {"protocolVersion": 1, "agentInfo": {"name": "fake", "version": "0"}}
    assert listed == {"sessions": []}
    assert bad.value.code == INVALID_PARAMS
    first, listing, cancel, second = fake.seen
    assert isinstance(first, m.InitializeRequest) and first.client_capabilities.terminal is True
    assert isinstance(listing, m.ListSessionsRequest) and listing.cwd is None
    assert isinstance(cancel, m.CancelNotification) and cancel.session_id == "s1"
    assert isinstance(second, m.ListSessionsRequest) and second.cwd == "/w"
