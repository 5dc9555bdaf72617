"""The notebook's message log is bounded in bytes, not only in count: cheap requests for huge
answers cannot pin gigabytes in the kernel, and the inspector says what it dropped (issue 11,
high 3)."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from acp_notebook.notebook.inspector import (
    LOG_BYTES,
    MESSAGE_BYTES,
    MessageLog,
    MessageTable,
    pair_responses,
)
from acp_notebook.protocol.jsonrpc import Peer
from acp_notebook.protocol.memory import memory_pipe

MB = 1 << 20


def kept_bytes(log: MessageLog) -> int:
    return sum(
        len(json.dumps(event.message).encode())
        for _, event in log.events()
        if event.message is not None
    )


async def serve_big_outputs(log: MessageLog, count: int, size: int) -> None:
    """``count`` terminal/output requests from an agent, each answered with ``size`` bytes
    of output by a real peer observed by ``log`` (as the kernel's connection is)."""
    client_in, agent_out = memory_pipe()
    agent_in, client_out = memory_pipe()
    client = Peer(client_in, client_out, name="client")
    agent = Peer(agent_in, agent_out, name="agent")
    client.add_observer(log.observer("hostile"))

    async def output(params: Any) -> Any:
        return {"output": "x" * size, "truncated": False}

    client.handle_request("terminal/output", output)
    with anyio.fail_after(120):  # a safety net, not a speed bound
        async with anyio.create_task_group() as tg:
            tg.start_soon(client.run)
            tg.start_soon(agent.run)
            for _ in range(count):
                reply = await agent.request(
                    "terminal/output", {"sessionId": "s", "terminalId": "t"}
                )
                assert len(reply["output"]) == size
            tg.cancel_scope.cancel()


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_huge_answers_stay_within_the_log_bytes_and_the_table_says_what_was_dropped():
    log = MessageLog()
    await serve_big_outputs(log, count=40, size=4 * MB)  # 160 MB on the wire
    assert kept_bytes(log) <= LOG_BYTES
    assert len(log.events()) == 80  # every message is listed, the huge ones abridged
    table = MessageTable(pair_responses(log.events()), dropped=log.dropped)
    answers = [m for m in table.messages if m.direction == "send"]
    assert all(m.event.abridged_from is not None for m in answers)
    assert "(abridged from 4.0 MB)" in table.summary(answers[-1])
    assert "abridged from 4.0 MB" in table.step(answers[-1].number)._repr_markdown_()
    assert answers[-1].message is not None
    output = answers[-1].message["result"]["output"]
    assert output.startswith("x" * 1000) and output.endswith("characters cut)")


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_the_oldest_messages_go_when_the_bytes_run_out_and_the_table_counts_them():
    log = MessageLog(max_bytes=MESSAGE_BYTES * 4)
    await serve_big_outputs(log, count=10, size=MESSAGE_BYTES - 100)
    assert kept_bytes(log) <= MESSAGE_BYTES * 4
    assert log.dropped.messages > 0
    assert log.dropped.bytes >= log.dropped.messages * 50
    table = MessageTable(pair_responses(log.events()), dropped=log.dropped)
    assert f"*{log.dropped.messages} earlier messages / " in table._repr_markdown_()
    assert "dropped to bound memory" in repr(table)
    assert table.filter(direction="send").dropped == log.dropped
