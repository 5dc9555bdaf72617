"""The peer a user would pick instead of ``acp-notebook run``: the official Python SDK
(``agent-client-protocol``, imported as ``acp``) driving one turn as its quickstart shows
(``spawn_agent_process``, a ``Client`` with ``session_update`` and ``request_permission``,
then ``initialize``, ``new_session``, ``prompt``), printing the agent's reply and the stop
reason. ``python sdk_client.py PROMPT AGENT...``"""

import asyncio
import os
import sys
from typing import Any

from acp import PROTOCOL_VERSION, spawn_agent_process
from acp.interfaces import Client
from acp.schema import AgentMessageChunk, TextContentBlock


class PrintingClient(Client):
    """Prints the agent's message text as it streams; declines every permission."""

    async def request_permission(
        self, session_id: str, tool_call: Any, options: Any, **kwargs: Any
    ) -> Any:
        return {"outcome": {"outcome": "cancelled"}}

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if isinstance(update, AgentMessageChunk) and isinstance(update.content, TextContentBlock):
            sys.stdout.write(update.content.text)


async def turn(agent: list[str], prompt: str) -> str:
    """The stop reason of one prompt turn of a fresh ``agent``."""
    # Only the methods this turn calls, as the SDK's quickstart client has.
    client = PrintingClient()  # type: ignore[abstract]
    async with spawn_agent_process(client, *agent) as (conn, _process):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        session = await conn.new_session(cwd=os.getcwd(), mcp_servers=[])
        response = await conn.prompt(
            session_id=session.session_id, prompt=[TextContentBlock(type="text", text=prompt)]
        )
    return str(response.stop_reason)


if __name__ == "__main__":
    print("\n" + asyncio.run(turn(sys.argv[2:], sys.argv[1])))
