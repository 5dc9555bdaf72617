"""The demo agent's elicitation scenes, driven as a subprocess with raw JSON-RPC: ``/ask``
(a form) and ``/ask-url`` (a URL inside a tool call, then ``elicitation/complete``), each
only when the client advertised the mode. Every message the agent sends is checked
against the schema by :func:`demo_client`; the answers given here are checked too."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_notebook.protocol.conformance import payload_errors

from .test_demo_agent import FULL_CAPS, DemoClient, demo_client, of_kind, texts

pytestmark = pytest.mark.anyio

ELICITING_CAPS = {**FULL_CAPS, "elicitation": {"form": {}, "url": {}}}

Answer = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]


def answering(client: DemoClient, answer: dict[str, Any] | Answer) -> list[dict[str, Any]]:
    """Serve ``elicitation/create`` with ``answer``; returns the list of requests received."""
    asked: list[dict[str, Any]] = []

    async def handler(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params)
        client.notice()
        result = await answer(params) if callable(answer) else answer
        # What we answer must fit the schema as well.
        assert payload_errors(result, "CreateElicitationResponse") == []
        return result

    client.peer.handle_request("elicitation/create", handler)
    return asked


async def test_ask_sends_a_form_and_repeats_the_accepted_values(tmp_path: Path) -> None:
    async with demo_client(tmp_path, caps=ELICITING_CAPS) as client:
        asked = answering(
            client,
            {"action": "accept", "content": {"name": "Ada", "age": 36, "topics": ["protocol"]}},
        )
        session = await client.new_session()
        stop, updates = await client.prompt(session, "/ask")
    assert stop == "end_turn"
    (params,) = asked
    assert params["sessionId"] == session and params["mode"] == "form"
    schema = params["requestedSchema"]
    assert list(schema["properties"]) == ["name", "age", "language", "newsletter", "topics"]
    assert schema["required"] == ["name"]
    assert schema["properties"]["name"]["minLength"] == 1
    assert (schema["properties"]["age"]["minimum"], schema["properties"]["age"]["maximum"]) == (
        0,
        150,
    )
    assert schema["properties"]["language"]["enum"] == ["Python", "Rust", "Julia", "Other"]
    assert schema["properties"]["newsletter"] == {
        "type": "boolean",
        "title": "Newsletter",
        "description": "Send me the pretend newsletter",
        "default": False,
    }
    assert schema["properties"]["topics"]["type"] == "array"
    reply = texts(updates)
    assert "Hello, Ada!" in reply and "accept" in reply
    assert "- Age: `36`" in reply and '- Topics: `["protocol"]`' in reply
    assert "Favourite language" not in reply  # not sent, not made up


@pytest.mark.parametrize(
    ("action", "said"), [("decline", 'action: "decline"'), ("cancel", 'action: "cancel"')]
)
async def test_ask_reports_decline_and_cancel(tmp_path: Path, action: str, said: str) -> None:
    async with demo_client(tmp_path, caps=ELICITING_CAPS) as client:
        answering(client, {"action": action})
        session = await client.new_session()
        stop, updates = await client.prompt(session, "/ask")
    assert stop == "end_turn" and said in texts(updates)


async def test_ask_url_completes_after_consent_inside_its_tool_call(tmp_path: Path) -> None:
    async with demo_client(tmp_path, caps=ELICITING_CAPS) as client:
        asked = answering(client, {"action": "accept"})
        session = await client.new_session()
        stop, updates = await client.prompt(session, "/ask-url")
        received, events = client.received(), list(client.events)
    assert stop == "end_turn"
    (params,) = asked
    assert params["mode"] == "url" and params["url"] == "https://example.com/device?code=DEMO-1234"
    (call,) = of_kind(updates, "tool_call")
    assert params["toolCallId"] == call["toolCallId"] and params["sessionId"] == session
    completes = [m for m in received if m.get("method") == "elicitation/complete"]
    assert [c["params"] for c in completes] == [{"elicitationId": params["elicitationId"]}]
    assert "id" not in completes[0]  # a notification
    # The completion comes after our answer (accept = consent only), then the call completes.
    order = [
        (e.direction, e.message.get("method") or ("result" if "result" in e.message else None))
        for e in events
        if e.message is not None
    ]
    answered = order.index(("send", "result"), order.index(("recv", "elicitation/create")))
    assert answered < order.index(("recv", "elicitation/complete"))
    assert of_kind(updates, "tool_call_update")[-1]["status"] == "completed"
    assert "never opened or fetched" in texts(updates)


async def test_ask_url_declined_fails_its_tool_call_without_completion(tmp_path: Path) -> None:
    async with demo_client(tmp_path, caps=ELICITING_CAPS) as client:
        answering(client, {"action": "decline"})
        session = await client.new_session()
        stop, updates = await client.prompt(session, "/ask-url")
        completes = [m for m in client.received() if m.get("method") == "elicitation/complete"]
    assert stop == "end_turn" and completes == []
    assert of_kind(updates, "tool_call_update")[-1]["status"] == "failed"
    assert 'action: "decline"' in texts(updates)


@pytest.mark.parametrize(
    ("elicitation", "command", "capability"),
    [
        (None, "/ask", "elicitation.form"),
        ({}, "/ask", "elicitation.form"),  # {} advertises no mode (differs from MCP)
        ({"form": None, "url": None}, "/ask-url", "elicitation.url"),
        ({"url": {}}, "/ask", "elicitation.form"),
        ({"form": {}}, "/ask-url", "elicitation.url"),
    ],
)
async def test_modes_not_advertised_are_never_used(
    tmp_path: Path, elicitation: Any, command: str, capability: str
) -> None:
    caps = dict(FULL_CAPS)
    if elicitation is not None:
        caps["elicitation"] = elicitation
    async with demo_client(tmp_path, caps=caps) as client:
        asked = answering(client, {"action": "decline"})
        session = await client.new_session()
        stop, updates = await client.prompt(session, command)
    assert stop == "end_turn" and asked == []
    assert f"did not advertise `{capability}`" in texts(updates)
    assert not of_kind(updates, "tool_call")


async def test_cancel_while_asking_withdraws_the_elicitation(tmp_path: Path) -> None:
    async with demo_client(tmp_path, caps=ELICITING_CAPS) as client:

        async def never(params: dict[str, Any]) -> dict[str, Any]:
            await anyio.sleep_forever()
            raise AssertionError("unreachable")

        asked = answering(client, never)
        session = await client.new_session()
        stop, turn = await client.cancel_once(session, "/ask-url", lambda: asked)
        cancels = [m for m in client.received() if m.get("method") == "$/cancel_request"]
    assert stop == "cancelled" and cancels
    last = of_kind(turn, "tool_call_update")[-1]
    assert last["status"] == "failed"


async def test_help_lists_the_elicitation_commands(tmp_path: Path) -> None:
    async with demo_client(tmp_path) as client:
        session = await client.new_session()
        _stop, updates = await client.prompt(session, "/help")
        listed = [
            u["update"]
            for u in client.updates
            if u["update"]["sessionUpdate"] == "available_commands_update"
        ]
    reply = texts(updates)
    assert "| `/ask` |" in reply and "| `/ask-url` |" in reply
    names = {c["name"] for c in listed[-1]["availableCommands"]}
    assert {"ask", "ask-url"} <= names
