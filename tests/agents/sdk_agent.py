"""An ACP agent on the official Python SDK (``agent-client-protocol``, import ``acp``).

An independent implementation of the agent side for the interop tests. For every
prompt it streams a few ``agent_message_chunk`` updates, then asks the client to read
a file (``fs/read_text_file``) and for permission (``session/request_permission``),
echoes both answers back as chunks, and ends the turn.
"""

import asyncio
import json

from acp import (
    Agent,
    InitializeResponse,
    NewSessionResponse,
    PromptResponse,
    run_agent,
    text_block,
    update_agent_message,
)
from acp.schema import AgentCapabilities, Implementation, PermissionOption, ToolCallUpdate

GREETING = ["Hello", " from", " the", " SDK", " agent."]


class ScriptedAgent(Agent):
    def on_connect(self, conn):
        self._conn = conn

    async def initialize(
        self, protocol_version, client_capabilities=None, client_info=None, **kwargs
    ):
        return InitializeResponse(
            protocol_version=protocol_version,
            agent_capabilities=AgentCapabilities(load_session=False),
            agent_info=Implementation(
                name="sdk-test-agent", title="SDK test agent", version="0.0.1"
            ),
            auth_methods=[],
        )

    async def new_session(self, cwd, additional_directories=None, mcp_servers=None, **kwargs):
        return NewSessionResponse(session_id="sdk-session-1")

    async def prompt(self, session_id, prompt, **kwargs):
        async def say(text):
            await self._conn.session_update(
                session_id=session_id, update=update_agent_message(text_block(text))
            )

        for word in GREETING:
            await say(word)
        asked = "".join(block.text for block in prompt if getattr(block, "type", None) == "text")
        await say(f" You said: {asked}")
        file = await self._conn.read_text_file(
            session_id=session_id, path="/project/README.md", line=1, limit=5
        )
        await say(f" File: {file.content}")
        permission = await self._conn.request_permission(
            session_id=session_id,
            tool_call=ToolCallUpdate(
                tool_call_id="call-1", title="Write notes.txt", kind="edit", status="pending"
            ),
            options=[
                PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
                PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
            ],
        )
        await say(
            f" Permission: {json.dumps(permission.outcome.model_dump(by_alias=True, exclude_none=True), sort_keys=True)}"
        )
        return PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id, **kwargs):
        pass


if __name__ == "__main__":
    asyncio.run(run_agent(ScriptedAgent()))
