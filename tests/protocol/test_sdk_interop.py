"""Round trips against the agent side of the official Python SDK (``acp``), an independent
implementation, driven by our ``Peer`` over ``open_agent_process`` with raw dicts.

``tests/agents/sdk_agent.py`` streams a few chunks per prompt, asks the client to read a
file and for permission, echoes both answers as chunks, and ends the turn.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import anyio
import pytest

from acp_notebook.protocol.conformance import schema_errors
from acp_notebook.protocol.jsonrpc import Peer, TraceEvent
from acp_notebook.protocol.process import open_agent_process

pytestmark = pytest.mark.anyio

SAFETY = 30  # seconds; a safety net against hangs, never a performance bound
FILE_TEXT = "# Notes\nwritten by the client"
ALLOW = {"outcome": {"outcome": "selected", "optionId": "allow"}}


@dataclass
class Turn:
    """What one initialize → session/new → session/prompt exchange produced."""

    initialize: Any = None
    session: Any = None
    prompt: Any = None
    updates: list[Any] = field(default_factory=list)
    updates_when_prompt_returned: list[Any] = field(default_factory=list)
    file_requests: list[tuple[Any, int]] = field(
        default_factory=list
    )  # (params, updates seen before)
    permission_requests: list[tuple[Any, int]] = field(default_factory=list)
    trace: list[TraceEvent] = field(default_factory=list)
    stderr: list[str] = field(default_factory=list)


async def run_turn(command: list[str], cwd: str, text: str = "hi there") -> Turn:
    turn = Turn()

    async def read_text_file(params: Any) -> Any:
        turn.file_requests.append((params, len(turn.updates)))
        return {"content": FILE_TEXT}

    async def request_permission(params: Any) -> Any:
        turn.permission_requests.append((params, len(turn.updates)))
        return ALLOW

    async with open_agent_process(command) as agent:
        peer = Peer(agent.stdout, agent.stdin, name="sdk-agent", close_reason=agent.describe_exit)
        peer.add_observer(turn.trace.append)
        peer.handle_notification("session/update", turn.updates.append)
        peer.handle_request("fs/read_text_file", read_text_file)
        peer.handle_request("session/request_permission", request_permission)
        async with anyio.create_task_group() as tg:
            tg.start_soon(peer.run)
            with anyio.fail_after(SAFETY):
                turn.initialize = await peer.request(
                    "initialize",
                    {
                        "protocolVersion": 1,
                        "clientCapabilities": {
                            "fs": {"readTextFile": True, "writeTextFile": False},
                            "terminal": False,
                        },
                        "clientInfo": {
                            "name": "acp-notebook-tests",
                            "title": "acp_notebook tests",
                            "version": "0.1.0",
                        },
                    },
                )
                turn.session = await peer.request("session/new", {"cwd": cwd, "mcpServers": []})
                turn.prompt = await peer.request(
                    "session/prompt",
                    {
                        "sessionId": turn.session["sessionId"],
                        "prompt": [{"type": "text", "text": text}],
                    },
                )
                turn.updates_when_prompt_returned = list(turn.updates)
                await peer.aclose()  # the SDK agent exits on stdin EOF
                await peer.wait_finished()
        turn.stderr = agent.stderr_tail(50)
    return turn


async def test_a_prompt_turn_round_trips_against_the_sdk_agent(agent_argv, tmp_path):
    turn = await run_turn(agent_argv("sdk_agent.py"), str(tmp_path))

    assert turn.initialize["protocolVersion"] == 1
    assert turn.initialize["agentInfo"]["name"] == "sdk-test-agent"
    session_id = turn.session["sessionId"]
    assert session_id == "sdk-session-1"
    assert turn.prompt == {"stopReason": "end_turn"}

    # The streamed chunks all arrived, in order, before the prompt's response.
    assert turn.updates_when_prompt_returned == turn.updates
    assert all(u["sessionId"] == session_id for u in turn.updates)
    assert all(u["update"]["sessionUpdate"] == "agent_message_chunk" for u in turn.updates)
    texts = [u["update"]["content"]["text"] for u in turn.updates]
    assert texts == [
        "Hello",
        " from",
        " the",
        " SDK",
        " agent.",
        " You said: hi there",
        f" File: {FILE_TEXT}",
        f" Permission: {json.dumps(ALLOW['outcome'], sort_keys=True)}",
    ]

    # The agent→client requests came mid-turn, were answered by our handlers, and the
    # answers are visible in the stream.
    ((file_params, chunks_before_file),) = turn.file_requests
    assert file_params == {
        "sessionId": session_id,
        "path": "/project/README.md",
        "line": 1,
        "limit": 5,
    }
    assert chunks_before_file == 6
    ((permission_params, chunks_before_permission),) = turn.permission_requests
    assert chunks_before_permission == 7
    assert permission_params["toolCall"]["toolCallId"] == "call-1"
    assert [o["optionId"] for o in permission_params["options"]] == ["allow", "reject"]
    assert not any("Traceback" in line or "ERROR" in line for line in turn.stderr), turn.stderr


async def test_every_message_in_a_turn_with_the_sdk_agent_conforms_to_the_schema(
    agent_argv, tmp_path
):
    turn = await run_turn(agent_argv("sdk_agent.py"), str(tmp_path))

    # Responses are checked against the result type of the request they answer; each
    # side numbers its own requests, so ids are tracked per sender.
    requests: dict[tuple[str, Any], str] = {}
    problems: list[str] = []
    kinds: dict[str, list[str]] = {"client": [], "agent": []}
    for event in turn.trace:
        assert event.message is not None, event  # the SDK agent never wrote a bad line
        message = event.message
        sender = "client" if event.direction == "send" else "agent"
        other = "agent" if sender == "client" else "client"
        if "method" in message:
            if "id" in message:
                requests[(sender, json.dumps(message["id"]))] = message["method"]
            kinds[sender].append(message["method"])
            request_method = None
        else:
            request_method = requests[(other, json.dumps(message.get("id")))]
            kinds[sender].append(f"result of {request_method}")
        for error in schema_errors(message, sender=sender, request_method=request_method):
            problems.append(f"{sender}: {json.dumps(message)[:200]}: {error}")
    assert problems == []

    # The check saw the whole exchange, both ways.
    assert kinds["client"] == [
        "initialize",
        "session/new",
        "session/prompt",
        "result of fs/read_text_file",
        "result of session/request_permission",
    ]
    assert kinds["agent"] == [
        "result of initialize",
        "result of session/new",
        *["session/update"] * 6,
        "fs/read_text_file",
        "session/update",
        "session/request_permission",
        "session/update",
        "result of session/prompt",
    ]


def test_the_schema_check_catches_a_nonconforming_message():
    # Guards the test above against a check that accepts everything.
    bad_update = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": "s", "update": {"sessionUpdate": "agent_message_chunk"}},
    }
    assert schema_errors(bad_update, sender="agent") != []
    bad_result = {"jsonrpc": "2.0", "id": 3, "result": {"stopReason": 5}}
    assert schema_errors(bad_result, sender="agent", request_method="session/prompt") != []
