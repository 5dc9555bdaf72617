"""Elicitation (`elicitation/create`, `elicitation/complete`): schema validation, the
broker's lifecycle, the transcript, and the whole path through ClientConnection + Session
with the demo agent as a subprocess (and an in-process fake agent for what the demo agent
never sends: unknown modes, request scope, modes that were not advertised)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_notebook.client import PromptTurn, Session
from acp_notebook.client.connection import client_capabilities
from acp_notebook.client.elicitation import (
    HEADLESS,
    REDACTED,
    ElicitationBroker,
    ElicitationRequest,
    InvalidContent,
    defaults,
    format_problem,
    is_secret_name,
    split_url,
    validate_content,
)
from acp_notebook.client.render import Renderer
from acp_notebook.client.transcript import ElicitationEntry, Transcript
from acp_notebook.protocol import models as m
from acp_notebook.protocol.errors import INVALID_PARAMS, RpcError

from .conftest import OpenSession
from .helpers import DEMO, Wire, fake_agent, wait_until

pytestmark = pytest.mark.anyio


SCHEMA = m.ElicitationSchema.parse(
    {
        "type": "object",
        "properties": {
            "name": {"type": "string", "title": "Name", "minLength": 1, "maxLength": 10},
            "code": {"type": "string", "pattern": "^[A-Z]{3}-\\d+$"},
            "email": {"type": "string", "format": "email"},
            "site": {"type": "string", "format": "uri"},
            "born": {"type": "string", "format": "date"},
            "meet": {"type": "string", "format": "date-time"},
            "language": {"type": "string", "enum": ["Python", "Rust"], "default": "Python"},
            "level": {
                "type": "string",
                "oneOf": [{"const": "lo", "title": "Low"}, {"const": "hi", "title": "High"}],
            },
            "age": {"type": "integer", "minimum": 0, "maximum": 150},
            "ratio": {"type": "number", "minimum": 0.5, "default": 1.5},
            "ok": {"type": "boolean", "default": False},
            "tags": {
                "type": "array",
                "items": {"type": "string", "enum": ["a", "b", "c"]},
                "minItems": 1,
                "maxItems": 2,
                "default": ["a"],
            },
            "titled": {
                "type": "array",
                "items": {"anyOf": [{"const": "x", "title": "Ex"}, {"const": "y", "title": "Why"}]},
            },
        },
        "required": ["name", "tags"],
    }
)
VALID = {"name": "Ada", "tags": ["a"]}

FORM = {
    "sessionId": "s1",
    "mode": "form",
    "message": "Who are you?",
    "requestedSchema": {
        "type": "object",
        "properties": {
            "name": {"type": "string", "minLength": 1},
            "apiToken": {"type": "string"},
        },
        "required": ["name"],
    },
}
URL = {
    "sessionId": "s1",
    "mode": "url",
    "message": "Sign in",
    "elicitationId": "e-1",
    "url": "https://login.example.com/device?code=X",
}


# --- validation -------------------------------------------------------------------------------


def test_valid_content_has_no_errors_and_optional_fields_may_be_left_out():
    assert validate_content(SCHEMA, VALID) == {}
    full = {
        **VALID,
        "code": "ABC-12",
        "email": "ada@example.org",
        "site": "https://example.org/x",
        "born": "1815-12-10",
        "meet": "2026-08-22T10:30Z",
        "language": "Rust",
        "level": "hi",
        "age": 36,
        "ratio": 0.5,
        "ok": True,
        "titled": ["x", "y"],
    }
    assert validate_content(SCHEMA, full) == {}


def test_required_fields_missing_or_null_are_reported():
    assert validate_content(SCHEMA, {}) == {"name": "Required.", "tags": "Required."}
    assert validate_content(SCHEMA, {"name": None, "tags": ["a"]}) == {"name": "Required."}


@pytest.mark.parametrize(
    ("field", "value", "problem"),
    [
        ("name", "", "Required."),
        ("name", "x" * 11, "Enter at most 10 characters."),
        ("name", 5, "Must be text."),
        ("code", "abc-1", "Must match the pattern ^[A-Z]{3}-\\d+$."),
        ("email", "ada@", "Enter an email address like name@example.com."),
        ("site", "example.org", "Enter a full URI, like https://example.com/page."),
        ("born", "2026-02-30", "Enter a date as YYYY-MM-DD."),
        ("born", "10.12.1815", "Enter a date as YYYY-MM-DD."),
        (
            "meet",
            "2026-08-22",
            "Enter a date and time as YYYY-MM-DDTHH:MM (seconds and offset optional).",
        ),
        ("language", "Go", "Choose one of: Python, Rust."),
        ("level", "Low", "Choose one of: Low, High."),  # the const is sent, not the title
        ("age", 151, "Must be between 0 and 150."),
        ("age", -1, "Must be between 0 and 150."),
        ("age", 3.5, "Enter a whole number."),
        ("age", True, "Enter a whole number."),
        ("age", "36", "Enter a whole number."),
        ("ratio", 0.25, "Must be at least 0.5."),
        ("ratio", float("nan"), "Enter a number."),
        ("ok", "yes", "Must be yes or no (true or false)."),
        ("tags", [], "Choose at least 1."),
        ("tags", ["a", "b", "c"], "Choose at most 2."),
        ("tags", ["a", "z"], "Not a choice: z."),
        ("tags", ["a", "a"], "Choose each option only once."),
        ("tags", "a", "Must be a list of choices."),
        ("titled", ["Ex"], "Not a choice: Ex."),
    ],
)
def test_each_constraint_is_checked(field: str, value: Any, problem: str):
    assert validate_content(SCHEMA, {**VALID, field: value}) == {field: problem}


@pytest.mark.parametrize(
    ("fmt", "good", "bad"),
    [
        ("email", ["a@b.co", "first.last+tag@sub.example.org"], ["a@b", "a b@c.de", "@c.de"]),
        (
            "uri",
            ["https://x.org", "mailto:a@b.c", "urn:isbn:123"],
            ["x.org", "https://a b", "http:"],
        ),
        ("date", ["2024-02-29", "0001-01-01"], ["2023-02-29", "2024-1-1", "2024-01-01T00:00"]),
        (
            "date-time",
            ["2024-01-01T10:00", "2024-01-01T10:00:59.5+02:00", "2024-01-01t10:00:00z"],
            ["2024-01-01", "2024-01-01T25:00", "yesterday"],
        ),
    ],
)
def test_formats(fmt: str, good: list[str], bad: list[str]):
    assert [format_problem(fmt, v) for v in good] == [None] * len(good)
    assert all(format_problem(fmt, v) for v in bad)


def test_fields_not_asked_for_and_unknown_types_are_errors():
    schema = m.ElicitationSchema.parse(
        {"properties": {"color": {"type": "color"}, "n": {"type": "string"}}, "required": ["gone"]}
    )
    assert validate_content(schema, {"n": "x", "extra": 1, "color": "red"}) == {
        "extra": "The agent did not ask for this field.",
        "gone": "Required, but the agent did not describe this field.",
        "color": "acp_notebook cannot fill a field of type `color`.",
    }


def test_an_invalid_pattern_from_the_agent_is_not_held_against_the_user():
    schema = m.ElicitationSchema.parse({"properties": {"p": {"type": "string", "pattern": "(["}}})
    assert validate_content(schema, {"p": "anything"}) == {}


def test_defaults_prefill_known_fields_only():
    assert defaults(SCHEMA) == {"language": "Python", "ratio": 1.5, "ok": False, "tags": ["a"]}
    odd = m.ElicitationSchema.parse({"properties": {"c": {"type": "color", "default": "red"}}})
    assert defaults(odd) == {}


def test_secret_looking_names():
    assert [is_secret_name(n) for n in ("password", "apiKey", "api_key", "github_token")] == [
        True
    ] * 4
    assert [is_secret_name(n) for n in ("clientSecret", "key", "passphrase")] == [True] * 3
    assert [is_secret_name(n) for n in ("name", "monkey", "keyboard", "tokenizer_name")] == [
        False,
        False,
        False,
        True,  # errs on the safe side
    ]


def test_split_url_highlights_the_host_a_browser_would_visit():
    assert split_url("https://example.com/device?code=1") == (
        "https://",
        "example.com",
        "/device?code=1",
    )
    # user@ is not the host: the real destination is after the @.
    assert split_url("https://example.com@evil.test:8443/x") == (
        "https://example.com@",
        "evil.test",
        ":8443/x",
    )
    assert split_url("https://EXAMPLE.com/")[1] == "EXAMPLE.com"
    assert split_url("javascript:alert(1)") == ("", "", "javascript:alert(1)")


# --- the broker ---------------------------------------------------------------------------------


async def test_a_form_waits_for_the_ui_and_only_valid_content_is_accepted():
    changes: list[str] = []
    broker = ElicitationBroker(interactive=True, on_change=lambda r: changes.append(r.state))
    request = broker.open(FORM, agent="Demo")
    assert (request.mode, request.agent, request.session_id, request.pending) == (
        "form",
        "Demo",
        "s1",
        True,
    )
    answers: list[dict[str, Any]] = []

    async def wait() -> None:
        answers.append((await broker.decide(request)).response())

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(wait)
        await wait_until(lambda: changes == ["pending"])
        with pytest.raises(InvalidContent) as invalid:
            broker.accept(request.key, {"name": ""})
        assert invalid.value.errors == {"name": "Required."}
        assert request.pending and not answers
        assert broker.accept(request.key, {"name": "Ada", "apiToken": "s3cret"})
    assert answers == [{"action": "accept", "content": {"name": "Ada", "apiToken": "s3cret"}}]
    assert request.outcome() == f'accepted by user: {{name: "Ada", apiToken: {REDACTED}}}'
    # Decided once: later answers change nothing.
    assert not broker.accept(request.key, {"name": "Bob"})
    assert not broker.decline(request.key) and not broker.cancel(request.key)
    assert changes == ["pending", "accepted"]


@pytest.mark.parametrize(
    ("action", "response", "outcome"),
    [
        ("decline", {"action": "decline"}, "declined by user"),
        ("cancel", {"action": "cancel"}, "cancelled by user"),
    ],
)
async def test_decline_and_cancel(action: str, response: dict[str, Any], outcome: str):
    broker = ElicitationBroker(interactive=True)
    request = broker.open(FORM)
    getattr(broker, action)(request.key)
    decided = await broker.decide(request)
    assert decided.response() == response and decided.outcome() == outcome


async def test_headless_declines_and_says_so_never_accepts():
    broker = ElicitationBroker(interactive=False)
    request = await broker.decide(broker.open(FORM))
    assert request.response() == {"action": "decline"}
    assert request.decided_by == "headless" and request.reason == HEADLESS
    assert request.outcome() == "declined (no one to ask: headless run)"
    # interactive may be a function read at each request (the notebook sets it per turn).
    ui = {"attached": True}
    live = ElicitationBroker(interactive=lambda: ui["attached"])
    pending = live.open(FORM)
    with anyio.move_on_after(0.05):
        await live.decide(pending)
    assert pending.state == "cancelled" and pending.decided_by == "withdrawn"
    ui["attached"] = False
    assert (await live.decide(live.open(FORM))).state == "declined"


async def test_an_asker_decides_when_set():
    async def asker(request: Any) -> None:
        broker.accept(request.key, {"name": "from the asker"})

    broker = ElicitationBroker(interactive=False, asker=asker)
    request = await broker.decide(broker.open(FORM))
    assert request.content == {"name": "from the asker"}


async def test_cancel_all_answers_every_pending_request_cancel():
    broker = ElicitationBroker(interactive=True)
    first, second = broker.open(FORM), broker.open(URL)
    assert broker.cancel_all(by="cancel") == 2
    assert [r.response() for r in (first, second)] == [{"action": "cancel"}] * 2
    assert first.outcome() == "cancelled (the turn was cancelled)"
    assert broker.cancel_all() == 0


async def test_unknown_mode_is_declined_at_once_with_an_explanation_and_kept_raw():
    broker = ElicitationBroker(interactive=True)
    raw = {"sessionId": "s1", "mode": "_voice", "message": "Say it", "voice": {"lang": "en"}}
    request = broker.open(raw)
    assert request.mode == "unknown" and request.raw_mode == "_voice" and request.raw == raw
    with pytest.raises(InvalidContent):
        broker.accept(request.key, {})
    decided = await broker.decide(request)
    assert decided.response() == {"action": "decline"}
    assert decided.outcome() == (
        "declined automatically (the mode `_voice` is not one acp_notebook knows)"
    )


async def test_a_form_with_an_unknown_field_type_can_only_be_declined_or_cancelled():
    broker = ElicitationBroker(interactive=True)
    params = {**FORM, "requestedSchema": {"properties": {"c": {"type": "color"}}}}
    request = broker.open(params)
    assert not request.can_accept and "`c` (color)" in (request.problem or "")
    with pytest.raises(InvalidContent):
        broker.accept(request.key, {})
    assert request.pending and broker.decline(request.key)


def test_malformed_known_modes_are_invalid_params():
    broker = ElicitationBroker()
    for params in (
        {"sessionId": "s", "mode": "url", "message": "m"},
        {"mode": "form", "message": "m"},
    ):
        with pytest.raises(RpcError) as caught:
            broker.open(params)
        assert caught.value.code == INVALID_PARAMS
    assert broker.requests == {}


async def test_url_accept_is_consent_and_complete_marks_known_ids_once():
    broker = ElicitationBroker(interactive=True)
    request = broker.open(URL)
    assert request.host == "login.example.com" and request.can_accept
    with pytest.raises(InvalidContent):
        broker.accept(request.key, {"x": 1})
    assert broker.accept(request.key)
    assert request.response() == {"action": "accept"}
    assert request.outcome().endswith("(consented to open the URL) · not reported complete yet")
    assert not broker.complete("nobody-knows-me")
    assert broker.complete("e-1") and request.completed
    assert not broker.complete("e-1")  # spec: already completed ids are ignored
    assert request.outcome().endswith("· the agent reported the flow complete")


def test_a_url_that_is_not_http_cannot_be_accepted():
    broker = ElicitationBroker(interactive=True)
    request = broker.open({**URL, "url": "javascript:alert(1)"})
    assert not request.can_accept and "not a web address" in (request.problem or "")


# --- transcript ---------------------------------------------------------------------------------


def test_the_transcript_shows_question_fields_and_outcome_with_secrets_redacted():
    transcript = Transcript("/w")
    record = transcript.begin_turn([m.TextContentBlock(text="go")])
    broker = ElicitationBroker(interactive=True, on_change=lambda _r: transcript.changed())
    request = broker.open(FORM, agent="Demo agent")
    entry = transcript.add_elicitation(request)
    assert isinstance(entry, ElicitationEntry) and entry.turn == record.index
    broker.accept(request.key, {"name": "Ada", "apiToken": "s3cret"})
    markdown = Renderer(transcript).turn(record, footer=False)
    assert "❓ **Asked for input** by Demo agent: Who are you?" in markdown
    assert "- name (`name`, required): text, at least 1 character" in markdown
    assert '→ accepted by user: {name: "Ada", apiToken: (redacted)}' in markdown
    assert "s3cret" not in markdown
    plain = Renderer(transcript, markdown=False).turn(record, footer=False)
    assert "Asked for input by Demo agent" in plain and "**" not in plain


def test_a_url_request_in_a_tool_call_names_the_call_and_the_host():
    transcript = Transcript("/w")
    record = transcript.begin_turn([m.TextContentBlock(text="go")])
    transcript.apply(
        m.parse(
            m.SessionUpdate, {"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "Sign in"}
        )
    )
    broker = ElicitationBroker()
    request = broker.open({**URL, "toolCallId": "c1"})
    transcript.add_elicitation(request)
    broker.decline(request.key, by="headless", reason=HEADLESS)
    markdown = Renderer(transcript).turn(record, footer=False)
    assert "🔗 **Asked to open a URL** (for tool call **Sign in**): Sign in" in markdown
    assert "URL: `https://login.example.com/device?code=X` (host **login.example.com**)" in markdown
    assert "→ declined (no one to ask: headless run)" in markdown


# --- end to end: ClientConnection + Session + the demo agent ----------------------------------


def answers_to(wire: Wire, method: str) -> list[Any]:
    """What the client answered to each ``method`` request of the agent."""
    ids = {repr(x["id"]) for x in wire.received() if x.get("method") == method and "id" in x}
    return [
        x.get("result", x.get("error"))
        for x in wire.sent()
        if "method" not in x and repr(x.get("id")) in ids
    ]


async def asked(session: Session, prompt: str) -> tuple[PromptTurn, ElicitationRequest]:
    """Submit ``prompt``; its turn and the one elicitation it asks, once it is pending."""
    turn = session.submit(prompt)
    await wait_until(lambda: bool(session.elicitations.pending))
    (request,) = session.elicitations.pending
    return turn, request


def test_both_modes_are_advertised():
    assert client_capabilities().to_wire()["elicitation"] == {"form": {}, "url": {}}


async def test_form_accepted_through_the_broker_reaches_the_agent_and_the_transcript(
    open_session: OpenSession,
) -> None:
    wire = Wire()
    async with open_session(DEMO, observers=[wire], interactive=True) as session:
        turn, request = await asked(session, "/ask")
        assert request.agent == "acp_notebook demo agent" and request.mode == "form"
        assert [f.name for f in request.fields] == [
            "name",
            "age",
            "language",
            "newsletter",
            "topics",
        ]
        with pytest.raises(InvalidContent):
            session.elicitations.accept(request.key, {"age": 200})
        session.elicitations.accept(
            request.key, {"name": "Ada", "age": 36, "newsletter": True, "topics": ["protocol"]}
        )
        await turn.wait()
    assert turn.stop_reason == "end_turn"
    assert answers_to(wire, "elicitation/create") == [
        {
            "action": "accept",
            "content": {"name": "Ada", "age": 36, "newsletter": True, "topics": ["protocol"]},
        }
    ]
    markdown = turn.bundle()["text/markdown"]
    assert "❓ **Asked for input** by acp_notebook demo agent" in markdown
    assert (
        '→ accepted by user: {name: "Ada", age: 36, newsletter: true, topics: ["protocol"]}'
        in markdown
    )
    assert "Hello, Ada!" in markdown and "- Age: `36`" in markdown
    assert wire.schema_errors_of_client() == [] and wire.schema_errors_of("agent") == []


async def test_url_accepted_then_completed_by_the_agent(open_session: OpenSession) -> None:
    wire = Wire()
    async with open_session(DEMO, observers=[wire], interactive=True) as session:
        turn, request = await asked(session, "/ask-url")
        assert request.url == "https://example.com/device?code=DEMO-1234"
        assert request.host == "example.com" and request.tool_call_id is not None
        session.elicitations.accept(request.key)
        await turn.wait()
    assert answers_to(wire, "elicitation/create") == [{"action": "accept"}]
    completes = [x for x in wire.received() if x.get("method") == "elicitation/complete"]
    assert [c["params"]["elicitationId"] for c in completes] == [request.elicitation_id]
    assert request.completed
    markdown = turn.bundle()["text/markdown"]
    assert "(for tool call **Sign in at example.com (pretend device flow)**)" in markdown
    assert "(host **example.com**)" in markdown
    assert (
        "accepted by user (consented to open the URL) · the agent reported the flow complete"
        in markdown
    )
    assert wire.schema_errors_of_client() == [] and wire.schema_errors_of("agent") == []


async def test_headless_runs_decline_and_say_so(open_session: OpenSession) -> None:
    wire = Wire()
    async with open_session(DEMO, observers=[wire], policy="allow") as session:  # not interactive
        form = await session.prompt("/ask")
        url = await session.prompt("/ask-url")
    assert answers_to(wire, "elicitation/create") == [{"action": "decline"}] * 2
    for turn in (form, url):
        assert turn.stop_reason == "end_turn"
        assert "→ declined (no one to ask: headless run)" in turn.bundle()["text/markdown"]
    assert wire.schema_errors_of_client() == []


async def test_cancelling_the_turn_answers_pending_elicitations_cancel(
    open_session: OpenSession,
) -> None:
    wire = Wire()
    async with open_session(DEMO, observers=[wire], interactive=True) as session:
        turn, request = await asked(session, "/ask")
        assert await session.cancel()
        assert request.state == "cancelled" and request.decided_by == "cancel"
        await turn.wait()
    assert turn.stop_reason == "cancelled"
    assert answers_to(wire, "elicitation/create") == [{"action": "cancel"}]
    assert "→ cancelled (the turn was cancelled)" in turn.bundle()["text/markdown"]
    assert wire.schema_errors_of_client() == []


# --- an in-process fake agent: what the demo agent never sends ---------------------------------


async def test_unknown_modes_are_declined_and_recorded(tmp_path: Path) -> None:
    async with fake_agent() as (conn, agent, wire):
        session = await conn.new_session(tmp_path, interactive=True)
        result = await agent.request(
            "elicitation/create", {"sessionId": "s1", "mode": "_voice", "message": "Speak"}
        )
        (request,) = session.elicitations.requests.values()
    assert result == {"action": "decline"}
    assert request.decided_by == "client"
    entries = [e for e in session.transcript.entries if isinstance(e, ElicitationEntry)]
    assert [e.request for e in entries] == [request]
    assert (
        "declined automatically (the mode `_voice` is not one acp_notebook knows)"
        in Renderer(session.transcript).session()
    )
    assert wire.schema_errors_of_client() == []


async def test_request_scoped_elicitations_go_to_the_connection_broker_or_are_declined() -> None:
    params = {
        "requestId": 7,
        "mode": "form",
        "message": "Pick",
        "requestedSchema": {"properties": {}},
    }
    async with fake_agent() as (conn, agent, wire):
        assert await agent.request("elicitation/create", params) == {"action": "decline"}

        async def asker(request: Any) -> None:
            conn_broker.accept(request.key, {})

        conn_broker = conn.elicitations = ElicitationBroker(asker=asker)
        assert await agent.request("elicitation/create", params) == {
            "action": "accept",
            "content": {},
        }
        (request,) = conn_broker.requests.values()
        assert request.request_id == 7 and request.session_id is None and request.agent == "fake"
        # elicitation/complete reaches connection-level URL requests too; unknown ids are ignored.
        url = {
            "requestId": 8,
            "mode": "url",
            "message": "Go",
            "elicitationId": "e9",
            "url": "https://a.example/",
        }
        conn_broker.asker = None
        conn_broker.interactive = True
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(agent.request, "elicitation/create", url)
            await wait_until(lambda: bool(conn_broker.pending))
            conn_broker.accept(conn_broker.pending[0].key)
        await agent.notify("elicitation/complete", {"elicitationId": "unknown"})
        await agent.notify("elicitation/complete", {"elicitationId": "e9"})
        await wait_until(lambda: list(conn_broker.requests.values())[-1].completed)
        with pytest.raises(RpcError) as caught:
            await agent.request(
                "elicitation/create", {"mode": "form", "message": "?", "requestedSchema": {}}
            )
        assert caught.value.code == INVALID_PARAMS  # neither sessionId nor requestId
    assert wire.schema_errors_of_client() == []


async def test_a_mode_that_was_not_advertised_is_invalid_params(tmp_path: Path) -> None:
    caps = m.ClientCapabilities(
        elicitation=m.ElicitationCapabilities(form=m.ElicitationFormCapabilities())
    )
    async with fake_agent(caps) as (conn, agent, _wire):
        session = await conn.new_session(tmp_path, interactive=True)
        with pytest.raises(RpcError) as caught:
            await agent.request("elicitation/create", URL)
        assert caught.value.code == INVALID_PARAMS and "elicitation.url" in caught.value.message
        assert session.elicitations.requests == {}
