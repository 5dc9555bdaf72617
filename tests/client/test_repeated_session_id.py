"""A session id the connection already has open (issue 11: the first session's terminals
were orphaned). spec: `session/new` answers the id of the session it *created*, so an agent
answering an open session's id is refused and the open session goes on; `session/load` and
`session/resume` of an open session are the client's own choice: the open one is closed
first (its terminals killed) and the reopened one takes its place."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from acp_notebook.client import Session
from acp_notebook.client.errors import SessionIdInUse
from acp_notebook.protocol.jsonrpc import Peer

from .helpers import _async, fake_agent, turn_running

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform == "win32", reason="terminals are POSIX"),
]


async def start_sleep(agent: Peer) -> str:
    """The agent starts a long command in session ``s1``; its terminal id."""
    params = {"sessionId": "s1", "command": "sleep", "args": ["30"]}
    result: dict[str, Any] = await agent.request("terminal/create", params)
    return str(result["terminalId"])


def running(session: Session, terminal_id: str) -> bool:
    return not session.terminals.snapshot(terminal_id).exited


async def test_session_new_answering_an_open_sessions_id_is_refused_and_the_first_goes_on(
    root: Path,
) -> None:
    async with fake_agent() as (conn, agent, _wire):
        first = await conn.new_session(root, policy="allow")
        turn_running(first)
        terminal_id = await start_sleep(agent)
        with pytest.raises(SessionIdInUse) as refused:
            await conn.new_session(root, policy="allow")
        assert str(refused.value) == (
            "The agent `fake` answered `session/new` with the id `s1` of a session already "
            "open, so no new session was opened; the open one goes on (report this to the "
            "agent's authors)."
        )
        assert conn.sessions == {"s1": first} and not first.closed
        assert running(first, terminal_id)
    assert not running(first, terminal_id)  # killed with the connection, not orphaned


async def test_loading_an_open_session_closes_it_first_with_its_terminals(root: Path) -> None:
    async with fake_agent(initialize={"agentCapabilities": {"loadSession": True}}) as (
        conn,
        agent,
        _wire,
    ):
        agent.handle_request("session/load", lambda params: _async({}))
        first = await conn.new_session(root, policy="allow")
        turn_running(first)
        terminal_id = await start_sleep(agent)
        reopened = await conn.load_session("s1", root, policy="allow")
        assert first.closed and not running(first, terminal_id)
        assert first.terminals.snapshot(terminal_id).signal == "SIGTERM"
        assert conn.sessions == {"s1": reopened}
