"""The agent's requests, typed: params read once (strictly where the client acts on them,
leniently where they are only shown), routed to the session they name, and served by a
user's own handlers for the methods those define."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import pytest

from acp_notebook.client import AgentRequests, ClientConnection
from acp_notebook.client.handlers import (
    HANDLER_NAMES,
    SESSION_REQUESTS,
    read_elicitation,
    read_params,
)
from acp_notebook.protocol import models as m
from acp_notebook.protocol.errors import INVALID_PARAMS, RpcError
from acp_notebook.protocol.jsonrpc import Peer
from acp_notebook.protocol.memory import memory_pipe

from .helpers import fake_agent, turn_running

pytestmark = pytest.mark.anyio

ROUTES = {route.method: route for route in SESSION_REQUESTS}


# --- reading params ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "params", "message"),
    [
        (
            "fs/read_text_file",
            {"sessionId": "s", "path": "/x", "line": "3"},
            'The `line` parameter must be an integer, not "3".',
        ),
        (
            "fs/read_text_file",
            {"sessionId": "s", "path": "/x", "limit": True},
            "The `limit` parameter must be an integer, not true.",
        ),
        ("fs/read_text_file", {"path": "/x"}, "The request has no `sessionId`."),
        (
            "fs/write_text_file",
            {"sessionId": "s", "path": "/x", "content": None},
            "The `content` parameter must be a string, not null.",
        ),
        (
            "terminal/create",
            {"sessionId": "s", "command": "echo", "args": ["a", 1]},
            "The `args[1]` parameter must be a string, not 1.",
        ),
        (
            "terminal/create",
            {"sessionId": "s", "command": "echo", "env": [{"name": "A"}]},
            "The request has no `env[0].value`.",
        ),
        (
            "terminal/create",
            {"sessionId": "s", "command": "echo", "env": {"A": "1"}},
            "The `env` parameter must be a list, not an object.",
        ),
        (
            "terminal/output",
            {"sessionId": "s", "terminalId": ["term-1"]},
            "The `terminalId` parameter must be a string, not a list.",
        ),
    ],
)
def test_a_request_the_client_acts_on_is_read_strictly_with_one_sentence(
    method: str, params: dict[str, Any], message: str
) -> None:
    with pytest.raises(RpcError) as caught:
        ROUTES[method].read(params)
    assert caught.value.code == INVALID_PARAMS
    assert caught.value.message == message


def test_params_that_are_not_an_object_are_invalid() -> None:
    with pytest.raises(RpcError) as caught:
        read_params(m.KillTerminalRequest, ["s", "term-1"])
    assert caught.value.message == "The params must be an object, not a list."


def test_a_malformed_meta_is_ignored_and_unknown_fields_are_kept() -> None:
    request = read_params(
        m.ReadTextFileRequest, {"sessionId": "s", "path": "/x", "_meta": 5, "future": 1}
    )
    assert request.field_meta is None
    assert request.to_wire() == {"sessionId": "s", "path": "/x", "future": 1}


def test_a_model_is_passed_through_unread() -> None:
    request = m.ReadTextFileRequest(session_id="s", path="/x", line=2)
    assert read_params(m.ReadTextFileRequest, request) is request


def test_a_permission_requests_tool_call_is_read_leniently() -> None:
    request = ROUTES["session/request_permission"].read(
        {
            "sessionId": "s",
            "toolCall": {
                "toolCallId": "t1",
                "kind": "execute",
                "content": [{"type": "hologram", "beam": 1}, {"type": "diff"}],
                "locations": "not a list",
            },
            "options": [{"optionId": "ok", "name": "Allow", "kind": "allow_once"}],
        }
    )
    assert isinstance(request, m.RequestPermissionRequest)
    call = request.tool_call
    # spec: unknown content is kept raw, an invalid item is dropped, a broken field reset.
    assert [type(c).__name__ for c in call.content or []] == ["UnknownToolCallContent"]
    assert call.locations is None
    assert call.kind == "execute"


def test_a_permission_request_without_usable_options_is_invalid() -> None:
    with pytest.raises(RpcError) as caught:
        ROUTES["session/request_permission"].read(
            {"sessionId": "s", "toolCall": {"toolCallId": "t1"}, "options": [{"optionId": "x"}]}
        )
    assert caught.value.message == "The request has no `options[0].name`."


def test_an_elicitation_in_an_unknown_mode_is_kept_raw_but_a_known_mode_must_be_complete() -> None:
    unknown = read_elicitation({"sessionId": "s", "mode": "_voice", "message": "Say it"})
    assert isinstance(unknown, m.UnknownCreateElicitationRequest)
    assert unknown.raw["message"] == "Say it"
    with pytest.raises(RpcError) as caught:
        read_elicitation({"sessionId": "s", "mode": "url", "message": "Go", "url": "https://a"})
    assert caught.value.code == INVALID_PARAMS
    assert caught.value.message == "The request has no `elicitationId`."


# --- the handler protocol ---------------------------------------------------------------------


async def test_the_session_serves_every_agent_request(tmp_path: Path) -> None:
    protocol = {
        name
        for name, member in vars(AgentRequests).items()
        if callable(member) and not name.startswith("_")
    }
    assert set(HANDLER_NAMES) == protocol
    async with fake_agent() as (conn, _agent, _wire):
        session = await conn.new_session(tmp_path)
    assert isinstance(session, AgentRequests)
    for name in HANDLER_NAMES:
        served = inspect.signature(getattr(session, name)).parameters
        wanted = list(inspect.signature(getattr(AgentRequests, name)).parameters)[1:]  # no self
        assert list(served) == wanted, name
    for route in SESSION_REQUESTS:
        assert route.params.model_fields["session_id"].is_required(), route.method
        assert m.CLIENT_METHODS[route.method].params is route.params


# --- routing over the wire --------------------------------------------------------------------


async def test_an_invalid_request_is_answered_minus_32602_and_nothing_is_done(
    tmp_path: Path,
) -> None:
    async with fake_agent() as (conn, agent, _wire):
        session = await conn.new_session(tmp_path)
        with pytest.raises(RpcError) as caught:
            await agent.request(
                "terminal/create", {"sessionId": "s1", "command": "touch", "args": [1]}
            )
        assert (caught.value.code, caught.value.message) == (
            INVALID_PARAMS,
            "The `args[0]` parameter must be a string, not 1.",
        )
        assert session.terminals.terminal_ids == []


async def test_a_request_naming_an_unknown_session_is_invalid(tmp_path: Path) -> None:
    async with fake_agent() as (conn, agent, _wire):
        await conn.new_session(tmp_path)
        with pytest.raises(RpcError) as caught:
            await agent.request(
                "fs/read_text_file", {"sessionId": "nope", "path": str(tmp_path / "x")}
            )
    assert caught.value.code == INVALID_PARAMS
    assert caught.value.message == "Unknown session `nope`."


class ReadOnly:
    """Serves reads from memory and refuses writes; the session serves everything else."""

    def __init__(self) -> None:
        self.reads: list[m.ReadTextFileRequest] = []

    async def read_text_file(self, request: m.ReadTextFileRequest) -> m.ReadTextFileResponse:
        self.reads.append(request)
        return m.ReadTextFileResponse(content=f"in memory: {request.path}")

    async def write_text_file(self, request: m.WriteTextFileRequest) -> m.WriteTextFileResponse:
        raise RpcError(INVALID_PARAMS, f"{request.path} is read-only here.")


async def test_handlers_serve_the_methods_they_define_and_the_session_the_rest(
    tmp_path: Path,
) -> None:
    handlers = ReadOnly()
    target = tmp_path / "notes.txt"
    async with fake_agent(handlers=handlers) as (conn, agent, wire):
        # policy allow: the terminal is started without asking (the guard lets it through)
        session = await conn.new_session(tmp_path, policy="allow")
        turn_running(session)
        read = await agent.request("fs/read_text_file", {"sessionId": "s1", "path": str(target)})
        with pytest.raises(RpcError) as refused:
            await agent.request(
                "fs/write_text_file", {"sessionId": "s1", "path": str(target), "content": "x"}
            )
        created = await agent.request(
            "terminal/create", {"sessionId": "s1", "command": "echo", "args": ["served"]}
        )
        exited = await agent.request("terminal/wait_for_exit", {"sessionId": "s1", **created})
    assert read == {"content": f"in memory: {target}"}
    assert [r.path for r in handlers.reads] == [str(target)]  # typed, read once
    assert refused.value.message == f"{target} is read-only here."
    assert not target.exists()
    assert exited == {"exitCode": 0, "signal": None}
    assert session.terminals.snapshot(created["terminalId"]).output == "served\n"
    assert wire.schema_errors_of_client() == []


async def test_handlers_that_define_no_agent_request_are_refused() -> None:
    class Typo:
        async def read_file(self, request: Any) -> Any: ...

    (client_in, _), (_, client_out) = memory_pipe(), memory_pipe()
    with pytest.raises(TypeError, match="defines none of the agent request methods"):
        async with ClientConnection.over(Peer(client_in, client_out), handlers=Typo()):
            pass
