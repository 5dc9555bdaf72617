"""While a freshly started agent has not answered `initialize`, the client builds the
validators the first turn needs (``handshake.prepare_first_turn``): an agent's start
is time the client otherwise spent idle, and the first answers waited for those builds.
What `initialize` sends of our own is written as it is, with no model classes made for it,
and is exactly what the models would write."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_notebook.client.connection import ClientConnection
from acp_notebook.client.handshake import CLIENT_CAPABILITIES, CLIENT_INFO, client_capabilities
from acp_notebook.protocol import models as m
from acp_notebook.protocol.jsonrpc import Peer
from acp_notebook.protocol.memory import memory_pipe

from .helpers import SAFETY

ROOT = Path(__file__).resolve().parents[2]

# A fresh interpreter (no test has built a model yet), a client over memory pipes, and an
# agent that answers `initialize` only once every first-turn model is built (or says
# which are not after 10 s).
CHILD = """
import json
import anyio
from acp_notebook.client.handshake import FIRST_TURN_MODELS
from acp_notebook.protocol import models as m
from tests.client.test_first_turn_prepared import initialize_against

def built():
    return [name for name in FIRST_TURN_MODELS if getattr(m, name).__pydantic_complete__]

async def main():
    before = built()
    when_asked = []

    async def initialize(params):
        with anyio.move_on_after(10):
            while len(built()) < len(FIRST_TURN_MODELS):
                await anyio.sleep(0.01)
        when_asked.append(built())
        return {"protocolVersion": 1}

    await initialize_against(initialize)
    print(json.dumps({"before": before, "answered_with": when_asked[0]}))

anyio.run(main)
"""


async def initialize_against(
    answer: Callable[[Any], Awaitable[dict[str, Any]]],
    capabilities: m.ClientCapabilities | None = None,
) -> m.ClientCapabilities:
    """`initialize` by a client over memory pipes, answered by ``answer(params)``; what the
    client then says it advertised."""
    client_in, agent_out = memory_pipe()
    agent_in, client_out = memory_pipe()
    agent = Peer(agent_in, agent_out, name="agent")
    agent.handle_request("initialize", answer)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(agent.run)
        peer = Peer(client_in, client_out, name="client")
        async with ClientConnection.over(peer, name="test") as conn:
            await conn.initialize(capabilities)
            advertised = conn.advertised
        await agent.aclose()
        tasks.cancel_scope.cancel()
    return advertised


def test_the_first_turns_validators_are_built_while_the_agent_starts():
    from acp_notebook.client.handshake import FIRST_TURN_MODELS

    proc = subprocess.run(
        [sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=SAFETY, cwd=ROOT
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen["before"] == []
    assert seen["answered_with"] == list(FIRST_TURN_MODELS)


async def _initialize_params(capabilities: m.ClientCapabilities | None = None) -> tuple:
    """The params an agent receives in `initialize`, and what the client then says it
    advertised."""
    received: list[Any] = []

    async def initialize(params: Any) -> dict[str, Any]:
        received.append(params)
        return {"protocolVersion": 1}

    advertised = await initialize_against(initialize, capabilities)
    return received[0], advertised


@pytest.mark.anyio
async def test_initialize_sends_our_capabilities_as_the_models_would_write_them() -> None:
    # CLIENT_CAPABILITIES goes on the wire as it is (no model classes to make); it must be
    # exactly what the models read and write: valid, nothing repaired, nothing added.
    repairs: list[str] = []
    model = m.ClientCapabilities.parse(copy.deepcopy(CLIENT_CAPABILITIES), repairs=repairs)
    assert repairs == [] and model.to_wire() == CLIENT_CAPABILITIES
    params, advertised = await _initialize_params()
    written = m.InitializeRequest(
        protocol_version=1,
        client_capabilities=client_capabilities(),
        client_info=m.Implementation(**CLIENT_INFO),
    ).to_wire()
    assert params == written
    assert advertised == client_capabilities()
    assert advertised.elicitation is not None and advertised.elicitation.url is not None


@pytest.mark.anyio
async def test_capabilities_passed_in_are_sent_and_are_what_was_advertised() -> None:
    only_files = m.ClientCapabilities(fs=m.FileSystemCapabilities(read_text_file=True))
    params, advertised = await _initialize_params(only_files)
    assert params["clientCapabilities"] == {"fs": {"readTextFile": True}}
    assert advertised is only_files and advertised.elicitation is None
