"""The demo agent's scenes for the newest stable parts: notices, compaction, tool names;
each sent only to a client that advertised it, every message within the schema."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .test_demo_agent import FULL_CAPS, demo_client, of_kind, texts

pytestmark = pytest.mark.anyio

NEWEST_CAPS: dict[str, Any] = {
    **FULL_CAPS,
    "session": {**FULL_CAPS["session"], "notices": {}, "compaction": {}},
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_notice_sends_one_notice_per_severity(tmp_path: Path) -> None:
    async with demo_client(tmp_path, caps=NEWEST_CAPS) as client:
        session = await client.new_session()
        stop, turn = await client.prompt(session, "/notice")
        _, only = await client.prompt(session, "/notice warning")
    assert stop == "end_turn"
    assert [n["severity"] for n in of_kind(turn, "notice")] == ["info", "warning", "error"]
    assert all(n["title"] and n["description"] for n in of_kind(turn, "notice"))
    assert [n["severity"] for n in of_kind(only, "notice")] == ["warning"]


async def test_compact_streams_a_summary_between_two_compaction_updates(tmp_path: Path) -> None:
    async with demo_client(tmp_path, caps=NEWEST_CAPS) as client:
        session = await client.new_session()
        _, turn = await client.prompt(session, "/compact")
    kinds = [u["sessionUpdate"] for u in turn if u["sessionUpdate"].startswith("compaction")]
    assert kinds[0] == "compaction_update" and kinds[-1] == "compaction_update"
    assert set(kinds[1:-1]) == {"compaction_summary_chunk"} and len(kinds) > 3
    updates = of_kind(turn, "compaction_update")
    assert [u["status"] for u in updates] == ["in_progress", "completed"]
    ids = {u["compactionId"] for u in turn if "compactionId" in u}
    assert len(ids) == 1


async def test_notices_and_compaction_are_not_sent_to_a_client_without_them(
    tmp_path: Path,
) -> None:
    async with demo_client(tmp_path) as client:  # FULL_CAPS: neither advertised
        session = await client.new_session()
        _, notices = await client.prompt(session, "/notice")
        _, compaction = await client.prompt(session, "/compact")
    assert of_kind(notices, "notice") == []
    assert "did not advertise `session.notices`" in texts(notices)
    assert [u for u in compaction if u["sessionUpdate"].startswith("compaction")] == []
    assert "did not advertise `session.compaction`" in texts(compaction)


async def test_named_sends_a_tool_call_with_a_generic_title_and_a_name(tmp_path: Path) -> None:
    async with demo_client(tmp_path, caps=NEWEST_CAPS) as client:
        session = await client.new_session()
        _, turn = await client.prompt(session, "/named cats")
    (call,) = of_kind(turn, "tool_call")
    assert call["title"] == "Tool call" and call["name"] == "demo_lookup"
    assert call["rawInput"] == {"query": "cats"}
    assert of_kind(turn, "tool_call_update")[-1]["status"] == "completed"
