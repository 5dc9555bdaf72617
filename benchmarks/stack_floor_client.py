"""The least an ACP client on this project's stack can do for one turn: the turn of
``stdlib_client.py`` (``initialize``, ``session/new``, ``session/prompt``, read until its
response), but on anyio (the agent started with ``anyio.open_process``, its output read in
the event loop) with every answer and update validated by pydantic models (``defer_build``,
as the generated ones). Nothing else: no supervisor, no transcript, no rendering, no
permission or file-system service. Its CPU is the floor under the CLI's row, reported
beside it. ``python stack_floor_client.py PROMPT AGENT...``"""

import json
import os
import sys
from typing import Any

import anyio
from pydantic import BaseModel, ConfigDict


class _Model(BaseModel):
    model_config = ConfigDict(extra="allow", defer_build=True)


class InitializeResponse(_Model):
    protocolVersion: int
    agentCapabilities: dict[str, Any] = {}


class NewSessionResponse(_Model):
    sessionId: str


class PromptResponse(_Model):
    stopReason: str


class ContentBlock(_Model):
    type: str
    text: str | None = None


class SessionUpdate(_Model):
    sessionUpdate: str
    content: ContentBlock | None = None


class SessionNotification(_Model):
    sessionId: str
    update: SessionUpdate


async def turn(agent: list[str], prompt: str) -> str:
    """The stop reason of one prompt turn of a fresh ``agent``."""
    process = await anyio.open_process(agent, stdin=-1, stdout=-1, stderr=None)
    assert process.stdin is not None and process.stdout is not None
    pending = b""

    async def line() -> bytes:
        nonlocal pending
        while b"\n" not in pending:
            pending += await process.stdout.receive()  # type: ignore[union-attr]
        found, _, pending = pending.partition(b"\n")
        return found

    async def call(id_: int, method: str, params: dict, model: type[_Model]) -> Any:
        message = {"jsonrpc": "2.0", "id": id_, "method": method, "params": params}
        await process.stdin.send(json.dumps(message).encode() + b"\n")  # type: ignore[union-attr]
        while True:
            reply = json.loads(await line())
            if reply.get("id") == id_ and "method" not in reply:
                return model.model_validate(reply["result"])
            if reply.get("method") == "session/update":
                update = SessionNotification.model_validate(reply["params"]).update
                if update.content is not None and update.content.text:
                    sys.stdout.write(update.content.text)

    await call(
        0, "initialize", {"protocolVersion": 1, "clientCapabilities": {}}, InitializeResponse
    )
    new = {"cwd": os.getcwd(), "mcpServers": []}
    session = (await call(1, "session/new", new, NewSessionResponse)).sessionId
    prompt_params = {"sessionId": session, "prompt": [{"type": "text", "text": prompt}]}
    stop: str = (await call(2, "session/prompt", prompt_params, PromptResponse)).stopReason
    await process.stdin.aclose()
    await process.wait()
    return stop


if __name__ == "__main__":
    print(anyio.run(turn, sys.argv[2:], sys.argv[1]))
