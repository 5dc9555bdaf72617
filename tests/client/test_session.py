"""ClientConnection and Session against real agent subprocesses: the demo agent and the
stdlib scripted agent ``tests/agents/session_agent.py`` (one edge case per prompt).

Every test drives a real process over stdio; an observer (:class:`Wire`) records the
messages so that what went over the wire can be checked, not only what the client
concluded from it.
"""

from __future__ import annotations

import itertools
import json
import os
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_notebook.client import ClientConnection, Session, connect
from acp_notebook.client.errors import (
    AuthRequired,
    PromptNotSupported,
    ProtocolVersionMismatch,
    TurnTimeout,
    UnsupportedByAgent,
)
from acp_notebook.client.render import Renderer
from acp_notebook.client.transcript import MessageEntry, ToolCallEntry
from acp_notebook.protocol.errors import AUTH_REQUIRED, ConnectionClosed, RpcError
from acp_notebook.protocol.process import session_members

from .conftest import OpenSession
from .helpers import DEMO, SAFETY, Wire, agent, wait_until

pytestmark = pytest.mark.anyio

STDIO_SERVER = {"name": "files", "command": "/usr/bin/true", "args": [], "env": []}
HTTP_SERVER = {"type": "http", "name": "remote", "url": "http://127.0.0.1:1/mcp", "headers": []}
SSE_SERVER = {"type": "sse", "name": "stream", "url": "http://127.0.0.1:1/sse", "headers": []}


def scripted(*args: str) -> list[str]:
    return agent("session_agent.py", *args)


def agent_text(session: Any, turn: int | None = None) -> str:
    return "".join(
        e.text
        for e in session.transcript.entries
        if isinstance(e, MessageEntry) and e.role == "agent" and (turn is None or e.turn == turn)
    )


# --- updates outside a turn -------------------------------------------------------------------


async def test_updates_before_and_right_after_the_session_new_answer_are_applied(
    open_session: OpenSession,
) -> None:
    async with open_session(scripted("--early")) as session:
        # Sent before the answer, for a session id not registered yet: buffered, then applied.
        assert [c.name for c in session.transcript.commands] == ["early"]
        # Sent right after the answer: applied too (no turn has begun).
        await wait_until(lambda: session.transcript.current_mode_id == "after")
        assert not session.connection.router._orphans


async def test_a_request_for_a_session_not_registered_yet_is_served(
    tmp_path: Path,
    open_session: OpenSession,
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("early bird\n")
    async with open_session(scripted("--early-read", str(notes))) as session:
        turn = await session.prompt("early")
    assert turn.stop_reason == "end_turn"
    assert agent_text(session) == 'early: {"content": "early bird\\n"}'


async def test_updates_after_the_prompt_answer_go_to_the_last_turn(
    open_session: OpenSession,
) -> None:
    async with open_session(scripted()) as session:
        turn = await session.prompt("late")
        assert turn.stop_reason == "end_turn"
        await wait_until(lambda: session.transcript.title == "Late title")
    assert [c.name for c in session.transcript.commands] == ["late"]
    # The chunk after the answer continues the turn's message; nothing landed outside it.
    assert agent_text(session, turn=0) == "before the answer and after it"
    assert session.transcript.entries_of(None) == []


# --- queueing -----------------------------------------------------------------------------------


async def test_prompts_queue_in_order_one_at_a_time(open_session: OpenSession) -> None:
    wire = Wire()
    async with open_session(scripted(), observers=[wire]) as session:
        turns = [session.submit(f"echo {n}") for n in range(5)]
        for turn in turns:
            await turn.wait()
    assert [t.stop_reason for t in turns] == ["end_turn"] * 5
    assert [agent_text(session, turn=n) for n in range(5)] == [f"echo: {n}" for n in range(5)]
    # On the wire: each session/prompt goes out only after the previous one was answered.
    prompt_ids = [m["id"] for m in wire.sent_requests("session/prompt")]
    assert len(prompt_ids) == 5
    assert [m["params"]["prompt"][0]["text"] for m in wire.sent_requests("session/prompt")] == [
        f"echo {n}" for n in range(5)
    ]
    for previous, current in itertools.pairwise(prompt_ids):
        answered = wire.index(
            lambda e, i=previous: (
                e.direction == "recv"
                and e.message is not None
                and "method" not in e.message
                and e.message.get("id") == i
            )
        )
        sent = wire.index(
            lambda e, i=current: (
                e.direction == "send"
                and e.message is not None
                and e.message.get("method") == "session/prompt"
                and e.message.get("id") == i
            )
        )
        assert answered < sent


async def test_queued_turns_wait_for_the_running_one_and_a_queued_cancel_never_sends(
    open_session: OpenSession,
) -> None:
    wire = Wire()
    async with open_session(scripted(), observers=[wire], interactive=True) as session:
        # The running turn waits for a permission answer: it runs until it is cancelled,
        # however slow the machine is.
        running = session.submit("permission cancelled")
        second = session.submit("stop max_tokens")
        dropped = session.submit("stop end_turn")
        third = session.submit("stop refusal")
        await wait_until(lambda: bool(session.permissions.pending))
        assert running.state == "running"
        assert [t.state for t in (second, dropped, third)] == ["queued"] * 3
        assert session.queued_turns == [second, dropped, third]
        await dropped.cancel()
        assert dropped.done and dropped.stop_reason == "cancelled"
        await running.cancel()
        await third.wait()
        await second.wait()
    assert running.stop_reason == "cancelled"
    assert second.stop_reason == "max_tokens"
    assert third.stop_reason == "refusal"
    texts = [m["params"]["prompt"][0]["text"] for m in wire.sent_requests("session/prompt")]
    assert texts == ["permission cancelled", "stop max_tokens", "stop refusal"]
    assert "Cancelled before it started" in dropped.bundle()["text/plain"]


# --- cancellation -------------------------------------------------------------------------------


async def _cancel_during_permission(
    open_session: OpenSession, mode: str
) -> tuple[Any, Any, Wire, list[str]]:
    wire = Wire()
    statuses: list[str] = []
    async with open_session(
        scripted(), observers=[wire], policy="ask", interactive=True
    ) as session:

        def follow(transcript: Any) -> None:
            call = transcript.tool_calls.get("tc-perm")
            if call is not None and (not statuses or statuses[-1] != call.status):
                statuses.append(call.status)

        session.on_change(follow)
        turn = session.submit(f"permission {mode}")
        await wait_until(lambda: bool(session.permissions.pending))
        (request,) = session.permissions.pending
        assert await session.cancel() is True
        await turn.wait()
        assert request.state == "cancelled"
    return turn, session, wire, statuses


async def test_cancel_answers_a_pending_permission_cancelled_and_ends_the_turn(
    open_session: OpenSession,
) -> None:
    turn, session, wire, statuses = await _cancel_during_permission(open_session, "cancelled")
    assert turn.stop_reason == "cancelled"
    assert turn.error is None and not turn.timed_out
    # On the wire: the permission request was answered `cancelled`, and session/cancel sent.
    (asked,) = [m for m in wire.received() if m.get("method") == "session/request_permission"]
    (reply,) = [m for m in wire.sent() if "method" not in m and m.get("id") == asked["id"]]
    assert reply["result"] == {"outcome": {"outcome": "cancelled"}}
    assert wire.sent_notifications("session/cancel") == [
        {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session.session_id}}
    ]
    # The unfinished tool call was marked cancelled at once, before the agent's own update.
    assert statuses[:2] == ["pending", "cancelled"]
    assert statuses[-1] == "failed"
    (request,) = session.permissions.requests.values()
    assert request.describe() == "Cancelled (the turn was cancelled)"
    assert "Permission: Cancelled (the turn was cancelled)" in turn.bundle()["text/plain"]


async def test_a_cancelled_turn_ends_after_the_work_its_cancel_stopped_has_shown_its_end(
    open_session: OpenSession,
) -> None:
    # The notebook's run_code, interrupted by the cancel, shows how it ended in its tool
    # call from the agent's loop; the turn ended as soon as the agent answered the cancel,
    # and a view that drew the turn then had the call without its end.
    stopped = anyio.Event()
    order: list[str] = []
    wire = Wire()
    async with open_session(
        scripted(), observers=[wire], policy="ask", interactive=True
    ) as session:

        async def shown() -> None:
            await stopped.wait()
            session.transcript.add_note("the interrupted code's end")
            order.append("shown")

        session.winding_down.append(shown)
        session.on_cancel.append(lambda reason: order.append(f"stop ({reason})"))
        turn = session.submit("permission cancelled")
        await wait_until(lambda: bool(session.permissions.pending))
        await session.cancel()
        await wait_until(lambda: turn.done or prompt_answered(wire))
        assert not turn.done  # the agent has answered; the turn waits for the work
        stopped.set()
        await turn.wait()
        order.append("ended")

    assert order == ["stop (user)", "shown", "ended"]
    assert turn.stop_reason == "cancelled"
    assert "the interrupted code's end" in turn.bundle()["text/plain"]


async def test_work_that_does_not_stop_holds_a_cancelled_turn_for_the_grace_only(
    open_session: OpenSession,
) -> None:
    async with open_session(
        scripted(), policy="ask", interactive=True, cancel_grace=0.5
    ) as session:
        session.winding_down.append(anyio.Event().wait)  # never set
        turn = session.submit("permission cancelled")
        await wait_until(lambda: bool(session.permissions.pending))
        await session.cancel()
        await turn.wait()  # under the fixture's safety net
    assert turn.stop_reason == "cancelled" and turn.error is None


def prompt_answered(wire: Wire) -> bool:
    """The agent has answered the ``session/prompt`` seen on ``wire``."""
    asked = {m["id"] for m in wire.sent() if m.get("method") == "session/prompt"}
    return any("method" not in m and m.get("id") in asked for m in wire.received())


async def test_an_error_answer_after_a_cancel_counts_as_cancelled(
    open_session: OpenSession,
) -> None:
    turn, _, _, _ = await _cancel_during_permission(open_session, "error")
    assert turn.stop_reason == "cancelled"
    assert turn.error is None and turn.exception is None


async def test_a_non_cancelled_stop_reason_after_a_cancel_is_kept(
    open_session: OpenSession,
) -> None:
    # opencode answers end_turn after session/cancel: the client reports what the agent said.
    turn, session, _, _ = await _cancel_during_permission(open_session, "end_turn")
    assert turn.stop_reason == "end_turn"
    assert turn.record is not None and turn.record.cancel_requested
    line = Renderer(session.transcript).stop_line(turn.record)
    assert line.startswith("Stop reason: end_turn") and "(a cancel was requested)" in line


async def test_an_error_answer_without_a_cancel_is_an_error(open_session: OpenSession) -> None:
    async with open_session(DEMO) as session:
        turn = await session.prompt("/error")
    assert turn.stop_reason is None
    assert isinstance(turn.exception, RpcError)
    assert turn.error
    assert "Error:" in turn.bundle()["text/plain"]


async def test_cancel_without_a_running_turn_returns_false(open_session: OpenSession) -> None:
    wire = Wire()
    async with open_session(scripted(), observers=[wire]) as session:
        assert await session.cancel() is False
    assert wire.sent_notifications("session/cancel") == []


async def test_cancelling_an_edit_waiting_for_permission_leaves_the_file_unchanged(
    tmp_path: Path,
    open_session: OpenSession,
) -> None:
    target = tmp_path / "notes.txt"
    target.write_bytes(b"keep me\n")
    async with open_session(DEMO, policy="ask", interactive=True) as session:
        turn = session.submit("/edit notes.txt")
        await wait_until(lambda: bool(session.permissions.pending))
        await turn.cancel()
        await turn.wait()
    assert turn.stop_reason == "cancelled"
    assert target.read_bytes() == b"keep me\n"
    assert all(call.status != "completed" for call in session.transcript.tool_calls.values()
               if call.kind == "edit")  # fmt: skip


# --- timeouts and failures ----------------------------------------------------------------------


async def test_a_timeout_cancels_and_the_confirmed_cancel_ends_the_turn(
    open_session: OpenSession,
) -> None:
    wire = Wire()
    async with open_session(DEMO, observers=[wire]) as session:
        turn = await session.prompt("/slow", timeout=0.5)
    assert turn.timed_out is True
    assert turn.stop_reason == "cancelled"
    assert turn.error is None
    assert wire.sent_notifications("session/cancel") == [
        {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session.session_id}}
    ]


async def test_a_turn_the_timeout_ended_says_so_whatever_the_agent_answered(
    open_session: OpenSession,
) -> None:
    """opencode answered end_turn to the cancel of a -t 5 timeout, and the cell read
    "end_turn — the agent finished its turn. (a cancel was requested)"."""
    async with open_session(scripted(), policy="ask", interactive=True) as session:
        # The agent waits on a permission, which the timeout's cancel answers "cancelled".
        turn = await session.prompt("permission end_turn", timeout=0.3)
    assert turn.timed_out and turn.stop_reason == "end_turn" and turn.record is not None
    assert Renderer(session.transcript).stop_line(turn.record) == (
        "Stop reason: end_turn — the turn ended after the 0.3 s timeout (-t 0.3)."
    )


async def test_a_timeout_with_an_agent_that_never_answers_gives_up_after_the_grace(
    open_session: OpenSession,
) -> None:
    wire = Wire()
    async with open_session(
        scripted("--ignore-eof"), observers=[wire], cancel_grace=0.5
    ) as session:
        turn = await session.prompt("hang", timeout=0.3)
        process = session.connection.process
        assert process is not None
    assert turn.timed_out is True
    assert turn.stop_reason is None
    assert isinstance(turn.exception, TurnTimeout)
    assert "0.3 s" in (turn.error or "") and "0.5 s" in (turn.error or "")
    methods = wire.methods_sent()
    assert "session/cancel" in methods
    # The abandoned request is withdrawn, and the agent (which ignores stdin EOF) was stopped.
    (prompt,) = wire.sent_requests("session/prompt")
    assert {"requestId": prompt["id"]} in [
        m.get("params") for m in wire.sent() if m.get("method") == "$/cancel_request"
    ]
    assert process.returncode is not None
    assert process.members() == []


async def test_an_agent_crash_mid_turn_reports_the_exit_code_and_stderr(
    open_session: OpenSession,
) -> None:
    async with open_session(scripted()) as session:
        turn = await session.prompt("crash")
        # The connection is closed for good: a later prompt fails at once, clearly.
        later = await session.prompt("echo again")
    assert turn.stop_reason is None
    assert isinstance(turn.exception, ConnectionClosed)
    assert "exited with code 3" in (turn.error or "")
    assert "fatal: the model backend went away" in (turn.error or "")
    assert agent_text(session, turn=0) == "about to crash"
    assert later.error and "exited with code 3" in later.error


# --- authentication -----------------------------------------------------------------------------


async def test_auth_required_carries_the_agents_message_and_methods(tmp_path: Path) -> None:
    with anyio.fail_after(SAFETY):
        async with connect([*DEMO, "--require-auth"]) as conn:
            with pytest.raises(AuthRequired) as caught:
                await conn.new_session(tmp_path)
            error = caught.value
            assert error.code == AUTH_REQUIRED
            assert "Authentication required" in error.message
            assert [getattr(m, "id", None) for m in error.auth_methods] == ["demo-login"]
            assert "Demo login (`demo-login`)" in str(error)
            await conn.authenticate("demo-login")
            session = await conn.new_session(tmp_path)
            turn = await session.prompt("/stop end_turn")
            assert turn.stop_reason == "end_turn"
            # logout is advertised by the demo agent; afterwards sessions need auth again.
            await conn.logout()
            with pytest.raises(AuthRequired):
                await conn.new_session(tmp_path)


async def test_authenticate_with_a_method_the_agent_did_not_offer_sends_nothing(
    tmp_path: Path,
) -> None:
    wire = Wire()
    with anyio.fail_after(SAFETY):
        async with connect([*DEMO, "--require-auth"], observers=[wire]) as conn:
            with pytest.raises(RpcError, match="did not offer the auth method `nope`"):
                await conn.authenticate("nope")
    assert "authenticate" not in wire.methods_sent()


# --- capability gates ---------------------------------------------------------------------------


async def test_gated_methods_raise_against_an_agent_that_advertises_nothing(
    tmp_path: Path,
) -> None:
    wire = Wire()
    with anyio.fail_after(SAFETY):
        async with connect(scripted(), observers=[wire]) as conn:
            calls = {
                "session/load": conn.load_session("s", tmp_path),
                "session/resume": conn.resume_session("s", tmp_path),
                "session/list": conn.list_sessions(),
                "session/close": conn.close_session("s"),
                "session/delete": conn.delete_session("s"),
                "logout": conn.logout(),
            }
            for method, call in calls.items():
                with pytest.raises(UnsupportedByAgent) as caught:
                    await call
                assert caught.value.method == method
                assert "does not support" in str(caught.value)
    assert wire.methods_sent() == ["initialize"]


async def test_gated_methods_raise_against_the_sdk_echo_style_agent(tmp_path: Path) -> None:
    with anyio.fail_after(SAFETY):
        async with connect(agent("sdk_agent.py")) as conn:
            for call in (conn.list_sessions(), conn.load_session("s", tmp_path)):
                with pytest.raises(UnsupportedByAgent):
                    await call


async def test_list_pages_with_the_agents_opaque_cursor(tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    with anyio.fail_after(SAFETY):
        async with connect([*DEMO, "--page-size", "2"]) as conn:
            ids = {(await conn.new_session(tmp_path)).session_id for _ in range(3)}
            elsewhere = await conn.new_session(other)
            first = await conn.list_sessions(cwd=str(tmp_path))
            assert len(first.sessions) == 2 and first.next_cursor
            second = await conn.list_sessions(cwd=str(tmp_path), cursor=first.next_cursor)
            assert len(second.sessions) == 1 and second.next_cursor is None
            listed = [s.session_id for s in [*first.sessions, *second.sessions]]
            assert sorted(listed) == sorted(ids)
            everything = []
            cursor = None
            while True:
                page = await conn.list_sessions(cursor=cursor)
                everything += [s.session_id for s in page.sessions]
                cursor = page.next_cursor
                if cursor is None:
                    break
            assert sorted(everything) == sorted([*ids, elsewhere.session_id])


async def saved_session(state: Path, cwd: Path, *prompts: str) -> Session:
    """A demo session that ran ``prompts``, saved in ``state`` (the demo agent's
    ``--state-file``) by an agent that has exited since."""
    with anyio.fail_after(SAFETY):
        async with connect([*DEMO, "--state-file", str(state)]) as conn:
            session = await conn.new_session(cwd)
            for prompt in prompts:
                await session.prompt(prompt)
    return session


async def test_load_replays_the_history_before_answering(tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    first = await saved_session(state, tmp_path, "/title Replayed session", "/stop end_turn")
    spoken = agent_text(first)
    with anyio.fail_after(SAFETY):
        async with connect([*DEMO, "--state-file", str(state)]) as conn:
            loaded = await conn.load_session(first.session_id, tmp_path)
            # Everything was applied when load_session returned (the replay precedes the answer).
            users = [
                e.text
                for e in loaded.transcript.entries
                if isinstance(e, MessageEntry) and e.role == "user"
            ]
            assert users == ["/title Replayed session", "/stop end_turn"]
            assert agent_text(loaded) == spoken
            assert loaded.transcript.title == "Replayed session"
            assert loaded.transcript.modes and loaded.transcript.config_options
            turn = await loaded.prompt("/stop max_tokens")
            assert turn.stop_reason == "max_tokens"


async def test_resume_continues_without_replay_then_close_and_delete(tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    first = await saved_session(state, tmp_path, "/stop end_turn")
    with anyio.fail_after(SAFETY):
        async with connect([*DEMO, "--state-file", str(state)]) as conn:
            resumed = await conn.resume_session(first.session_id, tmp_path)
            assert not [e for e in resumed.transcript.entries if isinstance(e, MessageEntry)]
            assert resumed.transcript.current_mode_id == "ask"
            turn = await resumed.prompt("/stop end_turn")
            assert turn.stop_reason == "end_turn"

            # close: the session is gone locally, a prompt now fails without being sent.
            await conn.close_session(resumed.session_id)
            assert resumed.session_id not in conn.sessions and resumed.closed
            with pytest.raises(ConnectionClosed):
                resumed.submit("/stop end_turn")

            # delete: gone from the agent's list; deleting an unknown id succeeds.
            await conn.delete_session(first.session_id)
            listed = await conn.list_sessions()
            assert first.session_id not in [s.session_id for s in listed.sessions]
            await conn.delete_session("never-existed")


async def test_closing_a_session_with_a_running_turn_ends_it_cancelled(
    open_session: OpenSession,
) -> None:
    async with open_session(DEMO) as session:
        conn = session.connection
        turn = session.submit("/slow")
        await wait_until(lambda: bool(agent_text(session)))
        await conn.close_session(session.session_id)
        await turn.wait()
    assert turn.stop_reason == "cancelled"


async def test_set_mode_and_config_options_round_trip(open_session: OpenSession) -> None:
    async with open_session(DEMO) as session:
        transcript = session.transcript

        def value(option_id: str) -> Any:
            return next(o.current_value for o in transcript.config_options if o.id == option_id)

        assert transcript.current_mode_id == "ask"
        assert [m.id for m in transcript.modes] == ["ask", "code"]
        assert {o.id for o in transcript.config_options} == {"mode", "model", "verbose"}

        await session.set_mode("code")
        assert transcript.current_mode_id == "code"
        # The agent's config_option_update follows the answer: the mode option moves too.
        await wait_until(lambda: value("mode") == "code")

        await session.set_config_option("model", "demo-large")
        assert value("model") == "demo-large"  # the answer is the complete new state

        await session.set_config_option("verbose", True)
        assert value("verbose") is True

        await session.set_config_option("mode", "ask")
        await wait_until(lambda: transcript.current_mode_id == "ask")
        assert value("mode") == "ask"

        with pytest.raises(RpcError, match="no config option `nope`"):
            await session.set_config_option("nope", "x")
        with pytest.raises(RpcError):
            await session.set_config_option("model", "no-such-model")
        assert value("model") == "demo-large"


async def test_the_agent_changing_its_mode_is_followed(open_session: OpenSession) -> None:
    async with open_session(DEMO) as session:
        await session.prompt("/mode code")
        await wait_until(lambda: session.transcript.current_mode_id == "code")
    notes = Renderer(session.transcript, markdown=False).session()
    assert "Mode changed to Code." in notes


# --- handshake ----------------------------------------------------------------------------------


async def test_a_different_protocol_version_is_refused(tmp_path: Path) -> None:
    async with ClientConnection.spawn(scripted("--protocol-version", "2")) as conn:
        with anyio.fail_after(SAFETY), pytest.raises(ProtocolVersionMismatch) as caught:
            await conn.initialize()
        assert conn.initialize_response is None
    assert "version 2" in str(caught.value) and "version 1" in str(caught.value)


async def test_initialize_sends_version_capabilities_and_client_info(tmp_path: Path) -> None:
    wire = Wire()
    async with ClientConnection.spawn(scripted(), observers=[wire]) as conn:
        with anyio.fail_after(SAFETY):
            response = await conn.initialize()
    (sent,) = wire.sent_requests("initialize")
    params = sent["params"]
    assert params["protocolVersion"] == 1
    assert params["clientCapabilities"]["fs"] == {"readTextFile": True, "writeTextFile": True}
    assert params["clientCapabilities"]["terminal"] is True
    assert params["clientInfo"]["name"] == "acp-notebook"
    # An agent that omits agentCapabilities supports nothing beyond the baseline.
    assert response.agent_capabilities.load_session is False
    assert wire.schema_errors_of_client() == []


# --- what may be sent ---------------------------------------------------------------------------


async def test_additional_directories_sent_only_when_advertised_but_always_a_root(
    tmp_path: Path,
    open_session: OpenSession,
) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "data.txt").write_text("from the extra dir\n")
    work = tmp_path / "work"
    work.mkdir()
    outside = tmp_path / "outside.txt"
    outside.write_text("secret\n")

    wire = Wire()
    async with open_session(
        scripted(), observers=[wire], cwd=work, additional_directories=[str(extra)]
    ) as session:
        ok = await session.prompt(f"read {extra / 'data.txt'}")
        refused = await session.prompt(f"read {outside}")
    (new,) = wire.sent_requests("session/new")
    assert "additionalDirectories" not in new["params"]
    assert agent_text(session, turn=ok.record.index) == "content: from the extra dir\n"
    assert agent_text(session, turn=refused.record.index).startswith("error: ")
    assert "secret" not in agent_text(session)

    wire = Wire()
    caps = json.dumps({"sessionCapabilities": {"additionalDirectories": {}}})
    with anyio.fail_after(SAFETY):
        async with connect(scripted("--caps", caps), observers=[wire]) as conn:
            await conn.new_session(work, additional_directories=[str(extra)])
    (new,) = wire.sent_requests("session/new")
    assert new["params"]["additionalDirectories"] == [str(extra)]
    assert new["params"]["cwd"] == str(work)
    assert new["params"]["mcpServers"] == []


async def test_http_and_sse_mcp_servers_are_refused_unless_advertised(tmp_path: Path) -> None:
    wire = Wire()
    with anyio.fail_after(SAFETY):
        async with connect(scripted(), observers=[wire]) as conn:
            for server, capability in ((HTTP_SERVER, "http"), (SSE_SERVER, "sse")):
                with pytest.raises(UnsupportedByAgent) as caught:
                    await conn.new_session(tmp_path, mcp_servers=[STDIO_SERVER, server])
                assert caught.value.capability == f"mcpCapabilities.{capability}"
            assert wire.sent_requests("session/new") == []
            await conn.new_session(tmp_path, mcp_servers=[STDIO_SERVER])
    (new,) = wire.sent_requests("session/new")
    assert new["params"]["mcpServers"] == [STDIO_SERVER]

    wire = Wire()
    caps = json.dumps({"mcpCapabilities": {"http": True, "sse": True}})
    with anyio.fail_after(SAFETY):
        async with connect(scripted("--caps", caps), observers=[wire]) as conn:
            await conn.new_session(tmp_path, mcp_servers=[HTTP_SERVER, SSE_SERVER])
    (new,) = wire.sent_requests("session/new")
    assert new["params"]["mcpServers"] == [HTTP_SERVER, SSE_SERVER]
    assert wire.schema_errors_of_client() == []


IMAGE = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
AUDIO = {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"}
RESOURCE = {"type": "resource", "resource": {"uri": "file:///x.py", "text": "x = 1\n"}}
LINK = {"type": "resource_link", "uri": "file:///x.py", "name": "x.py"}


async def test_prompt_content_is_restricted_to_prompt_capabilities(
    open_session: OpenSession,
) -> None:
    wire = Wire()
    async with open_session(scripted(), observers=[wire]) as session:
        for block, capability in (
            (IMAGE, "image"),
            (AUDIO, "audio"),
            (RESOURCE, "embeddedContext"),
        ):
            with pytest.raises(PromptNotSupported, match=f"promptCapabilities.{capability}"):
                session.submit(["echo x", block])
        assert wire.sent_requests("session/prompt") == []
        turn = await session.prompt(["echo text and a link", LINK])
        assert turn.stop_reason == "end_turn"

    async with open_session(DEMO) as session:
        with pytest.raises(PromptNotSupported, match="audio"):
            session.submit(["hello", AUDIO])
        turn = await session.prompt(["describe these", IMAGE, RESOURCE])
        assert turn.stop_reason == "end_turn"


# --- a whole demo turn -------------------------------------------------------------------------


async def test_a_demo_run_turn_embeds_the_terminal_output(
    tmp_path: Path,
    open_session: OpenSession,
) -> None:
    wire = Wire()
    async with open_session(DEMO, observers=[wire], policy="allow") as session:
        turn = await session.prompt("/run echo hi")
    assert turn.stop_reason == "end_turn"
    (call,) = [e.tool_call for e in session.transcript.entries if isinstance(e, ToolCallEntry)]
    assert call.kind == "execute" and call.status == "completed"
    (request,) = call.permissions
    assert request.describe() == "Allow once (chosen by policy allow)"
    markdown = turn.bundle()["text/markdown"]
    assert "$ sh -c 'echo hi'\nhi\n[exit code 0]" in markdown
    methods = [m["method"] for m in wire.received() if "method" in m and "id" in m]
    for method in (
        "terminal/create",
        "terminal/wait_for_exit",
        "terminal/output",
        "terminal/release",
    ):
        assert method in methods
    assert wire.schema_errors_of_client() == []
    assert str(tmp_path) not in markdown.replace(json.dumps(str(tmp_path)), "")


async def test_closing_the_connection_kills_running_terminals(
    tmp_path: Path,
    open_session: OpenSession,
) -> None:
    marker = tmp_path / "survived"
    async with open_session(DEMO, policy="allow") as session:
        turn = session.submit(f"/run sleep 3 && touch {marker}")
        await wait_until(lambda: bool(session.terminals.terminal_ids))
        pid = session.terminals.snapshot(session.terminals.terminal_ids[0]).pid
        assert pid is not None
    assert turn.done
    # The command's whole process group is gone, so the `touch` can never run.
    assert session_members(pid) == []
    assert not marker.exists()
    assert os.path.exists(tmp_path)


async def test_a_turn_abandoned_by_closing_the_connection_says_so(
    open_session: OpenSession,
) -> None:
    async with open_session(DEMO) as session:
        running = session.submit("/slow")
        queued = session.submit("/stop end_turn")
        await wait_until(lambda: bool(agent_text(session)))
    assert running.done and queued.done
    # Never a finished turn that reads "Running…": the abandoned one is an error...
    assert running.stop_reason is None and running.error
    assert "connection closed" in running.error
    assert "Running…" not in running.bundle()["text/plain"]
    # ...and the one that never started is cancelled.
    assert queued.stop_reason == "cancelled"
