"""The step-through: a turn driven by hand against the demo agent, every out-of-order step
refused with its explanation (and nothing sent), the agent's requests answered by hand."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from acp_notebook.client.timeline import Row, Timeline
from acp_notebook.lab import LabMessage, StepError, Stepper, connect
from acp_notebook.protocol.errors import REQUEST_CANCELLED

pytestmark = pytest.mark.anyio

BROKEN = [sys.executable, str(Path(__file__).resolve().parents[1] / "agents" / "broken_agent.py")]


@contextlib.asynccontextmanager
async def in_session(tmp_path: Path) -> AsyncIterator[Stepper]:
    """A quiet lab on the demo agent, initialized, with a session open in ``tmp_path``."""
    async with Stepper("demo", cwd=tmp_path, show=False) as lab:
        await lab.initialize()
        await lab.new_session()
        yield lab


def sent(lab: Stepper) -> list[LabMessage]:
    return [e for e in lab.messages if e.direction == "send"]


async def test_a_turn_by_hand_answers_the_permission_and_the_file_is_written(
    tmp_path: Path,
) -> None:
    async with in_session(tmp_path) as lab:
        lab.auto("fs")
        turn = lab.start_prompt("/write notes.txt hello")
        request = await lab.next_request()
        assert request.method == "session/request_permission"
        assert "allow-once" in request.options
        request.answer(option_id="allow-once")
        assert (await turn)["stopReason"] == "end_turn"
    assert (tmp_path / "notes.txt").read_text() == "hello\n"
    answer = next(e for e in sent(lab) if e.method == "session/request_permission")
    assert answer.kind == "response"
    assert answer.payload == {"outcome": {"outcome": "selected", "optionId": "allow-once"}}
    kinds = {e.update_kind for e in lab.messages if e.update_kind}
    assert {"tool_call", "tool_call_update", "usage_update"} <= kinds


async def test_prompt_returns_the_answer_and_every_message_is_kept(tmp_path: Path) -> None:
    async with in_session(tmp_path) as lab:
        assert await lab.prompt("/plan") == {"stopReason": "end_turn"}
    assert [e.number for e in lab.messages] == list(range(1, len(lab.messages) + 1))
    assert lab.messages[-1].kind == "response" and lab.messages[-1].method == "session/prompt"
    assert "plan" in {e.update_kind for e in lab.messages}


async def test_prompt_stops_waiting_when_the_agent_waits_for_an_answer(tmp_path: Path) -> None:
    async with in_session(tmp_path) as lab:
        lab.auto("fs")
        with pytest.raises(StepError, match="next_request"):
            await lab.prompt("/write notes.txt hello")
        (await lab.next_request()).answer(cancelled=True)
        assert lab.turn is not None
        await lab.turn


# Each step taken out of order, and its explanation.
OUT_OF_ORDER = {
    "session/new before initialize": (
        "fresh",
        lambda lab: lab.new_session(),
        "session/new before initialize: the connection is not initialized yet — call initialize() first.",
    ),
    "prompt before a session": (
        "initialized",
        lambda lab: lab.prompt("hi"),
        "session/prompt before session/new: there is no session yet — call new_session() first.",
    ),
    "initialize twice": (
        "initialized",
        lambda lab: lab.initialize(),
        "a connection is initialized once",
    ),
    "cancel with no prompt": ("session", lambda lab: lab.cancel(), "there is nothing to cancel"),
    "unknown auth method": ("initialized", lambda lab: lab.authenticate("github"), "'demo-login'"),
    "relative cwd": (
        "initialized",
        lambda lab: lab.new_session(cwd="work"),
        "params.cwd must be an absolute path",
    ),
    "snake_case field": (
        "initialized",
        lambda lab: lab.request("session/new", {"cwd": os.getcwd(), "mcp_servers": []}),
        "you sent 'mcp_servers'; wire names are camelCase",
    ),
    "a method the client does not send": (
        "initialized",
        lambda lab: lab.request("session/update", {}),
        "'session/update' is a notification sent by the agent",
    ),
}


@pytest.mark.parametrize("case", list(OUT_OF_ORDER))
async def test_each_out_of_order_step_is_explained_and_nothing_is_sent(
    case: str, tmp_path: Path
) -> None:
    state, step, explanation = OUT_OF_ORDER[case]
    async with Stepper("demo", cwd=tmp_path, show=False) as lab:
        if state != "fresh":
            await lab.initialize()
        if state == "session":
            await lab.new_session()
        before = len(sent(lab))
        with pytest.raises(StepError) as refused:
            await step(lab)
        assert explanation in str(refused.value)
        assert len(sent(lab)) == before


async def test_a_second_prompt_while_one_runs_is_refused(tmp_path: Path) -> None:
    async with in_session(tmp_path) as lab:
        turn = lab.start_prompt("/slow")
        with pytest.raises(StepError, match="one prompt at a time"):
            lab.start_prompt("/plan")
        await lab.until("agent_message_chunk")
        await lab.cancel()
        assert (await turn)["stopReason"] == "cancelled"


async def test_cancel_answers_pending_permissions_with_cancelled(tmp_path: Path) -> None:
    async with in_session(tmp_path) as lab:
        lab.auto("fs")
        turn = lab.start_prompt("/write notes.txt hello")
        request = await lab.next_request()
        answered = await lab.cancel()
        assert answered == [request]
        assert request.answered == {"outcome": {"outcome": "cancelled"}}
        assert (await turn)["stopReason"] == "cancelled"
    assert not (tmp_path / "notes.txt").exists()


async def test_a_wrong_answer_is_explained_and_not_sent(tmp_path: Path) -> None:
    async with in_session(tmp_path) as lab:
        lab.auto("fs")
        turn = lab.start_prompt("/write notes.txt hello")
        request = await lab.next_request()
        with pytest.raises(StepError, match="not one of the options"):
            request.answer(option_id="yes")
        with pytest.raises(StepError, match="optionId is missing"):
            request.answer({"outcome": {"outcome": "selected"}})
        assert not request.done
        request.answer(option_id="reject-once")
        assert (await turn)["stopReason"] == "end_turn"
        with pytest.raises(StepError, match="already answered"):
            request.answer(cancelled=True)


async def test_cancel_request_sends_dollar_cancel_request_and_the_agent_answers_cancelled(
    tmp_path: Path,
) -> None:
    async with Stepper("demo", cwd=tmp_path, show=False) as lab:
        await lab.initialize()
        opened = await lab.new_session()
        task = lab.start_request(
            "session/prompt",
            {"sessionId": opened["sessionId"], "prompt": [{"type": "text", "text": "/slow"}]},
        )
        await lab.until("agent_message_chunk")
        lab.cancel_request(task)
        await lab.until("session/prompt")
    cancel = next(e for e in lab.messages if e.method == "$/cancel_request")
    prompt = next(e for e in lab.messages if e.kind == "request" and e.method == "session/prompt")
    assert cancel.payload == {"requestId": prompt.id}
    reply = next(e for e in lab.messages if e.direction == "recv" and e.method == "session/prompt")
    assert reply.kind == "error" and reply.payload["code"] == REQUEST_CANCELLED


async def test_the_lab_and_the_inspector_read_its_messages_alike(tmp_path: Path) -> None:
    # The lab kept its own copy of each message (its direction "sent"/"received", its own
    # pairing), while the inspector read the same traffic as "send"/"recv" rows.
    async with in_session(tmp_path) as lab:
        await lab.prompt("/plan")
    rows = Timeline.of((lab.name, entry.event) for entry in lab.messages).rows

    def facts(row: Row) -> tuple[object, ...]:
        return (row.number, row.direction, row.category, row.method, row.update_kind)

    assert [facts(entry) for entry in lab.messages] == [facts(row) for row in rows]
    prompt = next(e for e in lab.messages if e.kind == "request" and e.method == "session/prompt")
    assert lab.messages[prompt.paired - 1].request == prompt.event  # type: ignore[operator]


async def test_the_agents_schema_breaks_are_flagged_on_its_message(tmp_path: Path) -> None:
    async with Stepper(BROKEN, cwd=tmp_path, show=False) as lab:
        await lab.initialize()
        await lab.new_session()
        await lab.prompt("hello")
    flagged = [e for e in lab.messages if e.schema_errors]
    assert [e.update_kind for e in flagged] == ["agent_message_chunk"]
    assert "breaks the schema: params.update.content" in flagged[0].summary()


async def test_messages_print_as_lines_outside_a_notebook(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lab = await connect("demo", cwd=tmp_path)
    try:
        await lab.initialize()
    finally:
        await lab.close()
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("#1 → request 0 initialize {")
    assert lines[1].startswith("#2 ← response of initialize (0) {")


async def test_close_stops_the_agent_and_a_closed_lab_says_so(tmp_path: Path) -> None:
    lab = await connect("demo", cwd=tmp_path, show=False)
    await lab.initialize()
    processes = lab.process_ids
    assert processes
    await lab.close()
    for pid in processes:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    with pytest.raises(StepError, match="connection is closed"):
        await lab.new_session()


async def test_an_elicitation_is_answered_by_hand(tmp_path: Path) -> None:
    async with in_session(tmp_path) as lab:
        turn = lab.start_prompt("/ask")
        request = await lab.next_request()
        assert request.method == "elicitation/create"
        assert request.params["mode"] == "form"
        request.answer(action="accept", content={"name": "Ada"})
        assert (await turn)["stopReason"] == "end_turn"
    reply = [e for e in lab.messages if e.update_kind == "agent_message_chunk"]
    assert any("Hello, Ada!" in e.json() for e in reply)


async def test_terminals_go_to_the_normal_handlers_while_the_permission_is_answered_by_hand(
    tmp_path: Path,
) -> None:
    async with in_session(tmp_path) as lab:
        lab.auto("terminal")
        turn = lab.start_prompt("/run echo from-the-terminal")
        request = await lab.next_request()
        assert request.method == "session/request_permission"
        request.answer(option_id="allow-once")
        assert (await turn)["stopReason"] == "end_turn"
    outputs = [e for e in lab.messages if e.kind == "response" and e.method == "terminal/output"]
    assert outputs and "from-the-terminal" in outputs[-1].payload["output"]
