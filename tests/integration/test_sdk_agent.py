"""ClientConnection against agents written on the official Python SDK (``acp`` 0.12.1), an
independent implementation of the agent side.

``tests/agents/sdk_tool_agent.py`` streams chunks, opens an edit tool call, reads the
file through ``fs/read_text_file``, asks permission, writes through
``fs/write_text_file`` when allowed, and sends a plan. Every message the client sends
(and every message the SDK agent sends) is checked against the ACP v1 schema.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_notebook.client.connection import ClientConnection
from acp_notebook.client.transcript import MessageEntry, PlanView
from acp_notebook.protocol.conformance import schema_errors

from ..client.helpers import SAFETY, Wire, agent

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def agent_schema_errors(wire: Wire) -> list[str]:
    asked = {repr(m["id"]): m["method"] for m in wire.sent() if "method" in m and "id" in m}
    errors = []
    for message in wire.received():
        method = None if "method" in message else asked.get(repr(message.get("id")))
        errors += schema_errors(message, sender="agent", request_method=method)
    return errors


async def run(
    tmp_path: Path, policy: str, prompt: str = "remember the milk"
) -> tuple[Any, Any, Wire]:
    wire = Wire()
    async with ClientConnection.spawn(agent("sdk_tool_agent.py"), observers=[wire]) as conn:
        with anyio.fail_after(SAFETY):
            info = await conn.initialize()
            assert info.agent_info is not None and info.agent_info.name == "sdk-tool-agent"
            session = await conn.new_session(tmp_path, policy=policy)  # type: ignore[arg-type]
            turn = await session.prompt(prompt)
    return session, turn, wire


async def test_a_full_turn_with_streamed_chunks_and_agent_requests(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("eggs\n")
    session, turn, wire = await run(tmp_path, "allow")

    assert turn.stop_reason == "end_turn" and turn.error is None
    assert notes.read_text() == "eggs\nremember the milk\n"
    agent_messages = [
        e.text for e in session.transcript.entries_of(0)
        if isinstance(e, MessageEntry) and e.role == "agent"
    ]  # fmt: skip
    assert agent_messages == ["Hello from the SDK tool agent.", " I appended your text."]
    call = session.transcript.tool_calls["edit-1"]
    assert (call.kind, call.status) == ("edit", "completed")
    assert [(d.old_text, d.new_text) for d in call.diffs] == [
        ("eggs\n", "eggs\nremember the milk\n")
    ]
    assert [r.describe() for r in call.permissions] == ["Allow once (chosen by policy allow)"]
    assert [e for e in session.transcript.entries_of(0) if isinstance(e, PlanView)]
    requests = [m["method"] for m in wire.received() if "method" in m and "id" in m]
    assert requests == ["fs/read_text_file", "session/request_permission", "fs/write_text_file"]
    markdown = turn.bundle()["text/markdown"]
    assert "--- a/notes.txt\n+++ b/notes.txt" in markdown
    assert "Locations: `notes.txt:1`" in markdown
    assert [change.path for change in session.file_changes] == [str(notes)]


async def test_every_message_of_an_sdk_turn_conforms_to_the_schema(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("eggs\n")
    _, turn, wire = await run(tmp_path, "allow")
    assert turn.stop_reason == "end_turn"
    assert len(wire.sent()) >= 6
    assert wire.schema_errors_of_client() == []
    assert agent_schema_errors(wire) == []


async def test_a_denied_edit_leaves_the_file_unchanged(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_bytes(b"eggs\n")
    session, turn, wire = await run(tmp_path, "deny")
    assert turn.stop_reason == "end_turn"
    assert notes.read_bytes() == b"eggs\n"
    assert session.transcript.tool_calls["edit-1"].status == "failed"
    assert "fs/write_text_file" not in [m.get("method") for m in wire.received()]
    assert wire.schema_errors_of_client() == []


async def test_a_missing_file_is_reported_to_the_sdk_agent_as_an_error(tmp_path: Path) -> None:
    _, turn, wire = await run(tmp_path, "allow")
    (reply,) = [m for m in wire.sent() if "error" in m]
    assert reply["error"]["code"] == -32002  # spec: resource not found
    # The SDK agent let the error end its prompt: the turn is an error, said plainly.
    assert turn.stop_reason is None and turn.error
    assert wire.schema_errors_of_client() == []


async def test_cancelling_while_the_sdk_agent_waits_for_permission(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("eggs\n")
    wire = Wire()
    async with ClientConnection.spawn(agent("sdk_tool_agent.py"), observers=[wire]) as conn:
        with anyio.fail_after(SAFETY):
            await conn.initialize()
            session = await conn.new_session(tmp_path, policy="ask", interactive=True)
            turn = session.submit("never mind")
            while not session.permissions.pending:
                await anyio.sleep(0.01)
            await turn.cancel()
            await turn.wait()
    assert turn.stop_reason == "cancelled"
    assert (tmp_path / "notes.txt").read_text() == "eggs\n"
    assert {"outcome": {"outcome": "cancelled"}} in [m.get("result") for m in wire.sent()]
    assert wire.schema_errors_of_client() == []
