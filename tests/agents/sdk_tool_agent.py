"""An ACP agent on the official Python SDK (``acp``) that edits a file through the client.

For every prompt in a session opened in CWD it:

1. streams the greeting as several ``agent_message_chunk`` updates and one thought;
2. starts an ``edit`` tool call on ``CWD/notes.txt`` (with a location), reads the file
   with ``fs/read_text_file``, and updates the call with a ``diff`` (old → old + prompt);
3. asks ``session/request_permission`` (allow once / reject);
4. if allowed, writes the file with ``fs/write_text_file`` and ends the call
   ``completed``; else ends it ``failed``; then reports the outcome as a chunk;
5. sends a ``plan`` and answers ``end_turn``.

``session/cancel`` makes a pending step end the turn with ``cancelled``.
"""

import asyncio
import os

from acp import (
    Agent,
    InitializeResponse,
    NewSessionResponse,
    PromptResponse,
    run_agent,
    start_tool_call,
    text_block,
    tool_diff_content,
    update_agent_message,
    update_agent_thought,
    update_plan,
    update_tool_call,
)
from acp.schema import (
    AgentCapabilities,
    Implementation,
    PermissionOption,
    PlanEntry,
    PromptCapabilities,
    ToolCallLocation,
    ToolCallUpdate,
)

GREETING = ["Hello", " from", " the", " SDK", " tool agent."]


class ToolAgent(Agent):
    def on_connect(self, conn):
        self._conn = conn
        self._cwd = {}
        self._cancelled = set()
        self._count = 0

    async def initialize(
        self, protocol_version, client_capabilities=None, client_info=None, **kwargs
    ):
        return InitializeResponse(
            protocol_version=protocol_version,
            agent_capabilities=AgentCapabilities(
                load_session=False,
                prompt_capabilities=PromptCapabilities(embedded_context=True),
            ),
            agent_info=Implementation(
                name="sdk-tool-agent", title="SDK tool agent", version="0.0.1"
            ),
            auth_methods=[],
        )

    async def new_session(self, cwd, additional_directories=None, mcp_servers=None, **kwargs):
        self._count += 1
        session_id = f"sdk-tool-session-{self._count}"
        self._cwd[session_id] = cwd
        return NewSessionResponse(session_id=session_id)

    async def prompt(self, session_id, prompt, **kwargs):
        async def send(update):
            await self._conn.session_update(session_id=session_id, update=update)

        self._cancelled.discard(session_id)
        asked = "".join(block.text for block in prompt if getattr(block, "type", None) == "text")
        await send(update_agent_thought(text_block("Planning an edit.")))
        for word in GREETING:
            await send(update_agent_message(text_block(word)))
        path = os.path.join(self._cwd[session_id], "notes.txt")
        await send(
            start_tool_call(
                "edit-1",
                "Append to notes.txt",
                kind="edit",
                status="pending",
                locations=[ToolCallLocation(path=path, line=1)],
                raw_input={"path": path, "append": asked},
            )
        )
        old = (await self._conn.read_text_file(session_id=session_id, path=path)).content
        new = old + asked + "\n"
        await send(update_tool_call("edit-1", content=[tool_diff_content(path, new, old)]))
        permission = await self._conn.request_permission(
            session_id=session_id,
            tool_call=ToolCallUpdate(
                tool_call_id="edit-1", title="Append to notes.txt", kind="edit"
            ),
            options=[
                PermissionOption(option_id="allow", name="Allow once", kind="allow_once"),
                PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
            ],
        )
        if session_id in self._cancelled:
            await send(update_tool_call("edit-1", status="failed"))
            return PromptResponse(stop_reason="cancelled")
        outcome = permission.outcome
        allowed = getattr(outcome, "outcome", None) == "selected" and outcome.option_id == "allow"
        if allowed:
            await self._conn.write_text_file(session_id=session_id, path=path, content=new)
            await send(update_tool_call("edit-1", status="completed"))
            await send(update_agent_message(text_block(" I appended your text.")))
        else:
            await send(update_tool_call("edit-1", status="failed"))
            await send(update_agent_message(text_block(" Not allowed; nothing written.")))
        await send(
            update_plan(
                [PlanEntry(content="Append the prompt", priority="high", status="completed")]
            )
        )
        return PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id, **kwargs):
        self._cancelled.add(session_id)


if __name__ == "__main__":
    asyncio.run(run_agent(ToolAgent()))
