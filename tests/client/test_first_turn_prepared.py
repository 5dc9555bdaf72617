"""While a freshly started agent has not answered `initialize`, the client builds the
validators the first turn needs (``handshake.prepare_first_turn``): an agent's start
is time the client otherwise spent idle, and the first answers waited for those builds."""

from __future__ import annotations

import json
import subprocess
import sys

from .helpers import SAFETY

# A fresh interpreter (no test has built a model yet), a client over memory pipes, and an
# agent that answers `initialize` only once every first-turn model is built (or says
# which are not after 10 s).
CHILD = """
import json
import anyio
from acp_notebook.client.connection import ClientConnection
from acp_notebook.client.handshake import FIRST_TURN_MODELS
from acp_notebook.protocol import models as m
from acp_notebook.protocol.jsonrpc import Peer
from acp_notebook.protocol.memory import memory_pipe

def built():
    return [name for name in FIRST_TURN_MODELS if getattr(m, name).__pydantic_complete__]

async def main():
    before = built()
    client_in, agent_out = memory_pipe()
    agent_in, client_out = memory_pipe()
    agent = Peer(agent_in, agent_out, name="agent")
    when_asked = []

    async def initialize(params):
        with anyio.move_on_after(10):
            while len(built()) < len(FIRST_TURN_MODELS):
                await anyio.sleep(0.01)
        when_asked.append(built())
        return {"protocolVersion": 1}

    agent.handle_request("initialize", initialize)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(agent.run)
        peer = Peer(client_in, client_out, name="client")
        async with ClientConnection.over(peer, name="test") as conn:
            await conn.initialize()
        await agent.aclose()
        tasks.cancel_scope.cancel()
    print(json.dumps({"before": before, "answered_with": when_asked[0]}))

anyio.run(main)
"""


def test_the_first_turns_validators_are_built_while_the_agent_starts():
    from acp_notebook.client.handshake import FIRST_TURN_MODELS

    proc = subprocess.run(
        [sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=SAFETY
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen["before"] == []
    assert seen["answered_with"] == list(FIRST_TURN_MODELS)
